// Proves, inside a guest, that the image's /durolab/node_modules serve what the bundled CLI
// imports: the native CRC-32C binding (kept out of the bundle, copied) and a bundled pure-JS
// package. Prints one JSON line; exit code 0 when both work.
import { crc32c } from '@node-rs/crc32';
import * as hdr from 'hdr-histogram-js';

const h = hdr.build();
for (const v of [100, 200, 300]) h.recordValue(v);
const result = {
  crc32c: crc32c(Buffer.from('123456789')), // check value of CRC-32C: 0xe3069283
  p50: h.getValueAtPercentile(50),
  node: process.version,
};
console.log(JSON.stringify(result));
process.exitCode = result.crc32c === 0xe3069283 ? 0 : 1;
