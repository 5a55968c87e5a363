// Proves, inside a guest, that the image's /durolab/node_modules serve what the bundled CLI
// imports: the native CRC-32C binding (kept out of the bundle, copied) and a bundled pure-JS
// package. Prints one JSON line; exit code 0 when both work.
import { crc32c } from '@node-rs/crc32';
import * as hdr from 'hdr-histogram-js';
import { crc32c as engineCrc32c, crc32cImplementation } from '../../../engine/records/crc.ts';
import { pwriteImplementation } from '../../../engine/storage/file-write.ts';

const h = hdr.build();
for (const v of [100, 200, 300]) h.recordValue(v);
const result = {
  crc32c: crc32c(Buffer.from('123456789')), // check value of CRC-32C: 0xe3069283
  p50: h.getValueAtPercentile(50),
  // The engine's CRC-32C in the guest: the crc32c addon copied beside the bundle (ISA-L alone under TCG, which has no AVX-512), or the fallback and why.
  engineCrc32c: engineCrc32c(Buffer.from('123456789')),
  engineCrc32cImplementation: crc32cImplementation.name,
  engineCrc32cFallback: crc32cImplementation.fallbackReason ?? null,
  // The engine's write path in the guest: the pwrite addon copied beside the bundle, or fs.writeSync and why.
  enginePwriteImplementation: pwriteImplementation.name,
  enginePwriteFallback: pwriteImplementation.fallbackReason ?? null,
  node: process.version,
};
console.log(JSON.stringify(result));
process.exitCode = result.crc32c === 0xe3069283 && result.engineCrc32c === 0xe3069283 ? 0 : 1;
