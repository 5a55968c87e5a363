// Codec throughput vs the raw native CRC-32C over the same bytes (the floor of validateBatch).
// Run: npx tsx engine/records/codec-bench.ts [--ms 300] [--runs 5]
// Prints medians of several timed runs; MB = 10^6 bytes of encoded batch.
import { parseFlags } from '../common/flags.ts';
import { crc32c, decodeBatch, encodeBatch, validateBatch, type RecordInput } from './index.ts';

const { values } = parseFlags('codec-bench', process.argv.slice(2), { ms: { type: 'string', default: '300' }, runs: { type: 'string', default: '5' } });
const runMs = Number(values.ms);
const runs = Number(values.runs);
if (!(runMs > 0) || !(runs > 0)) throw new Error('codec-bench: --ms and --runs must be positive numbers');

const RECORDS = 16;
const VALUE_BYTES = 1024;
const records: RecordInput[] = Array.from({ length: RECORDS }, (_, i) => ({
  key: Buffer.from(`key-${i}`),
  value: Buffer.alloc(VALUE_BYTES, i),
  headers: i === 0 ? [{ key: 'trace', value: Buffer.from('0123456789abcdef') }] : [],
}));
const batch = encodeBatch({ firstTimestamp: Date.now(), records });
const size = batch.length;

/** Median ops/s of fn over `runs` runs of about runMs each. */
function measure(fn: () => void): number {
  for (let i = 0; i < 2000; i++) fn(); // warm up the JIT
  const rates: number[] = [];
  for (let r = 0; r < runs; r++) {
    let ops = 0;
    const start = process.hrtime.bigint();
    const deadline = start + BigInt(runMs) * 1_000_000n;
    let now = start;
    while (now < deadline) {
      for (let i = 0; i < 200; i++) fn();
      ops += 200;
      now = process.hrtime.bigint();
    }
    rates.push(ops / (Number(now - start) / 1e9));
  }
  rates.sort((a, b) => a - b);
  return rates[Math.floor(rates.length / 2)];
}

let sink = 0;
const payload = batch.subarray(21);
const results: [string, number][] = [
  ['crc32c (raw, attributes..end)', measure(() => (sink ^= crc32c(payload)))],
  ['validateBatch', measure(() => (sink ^= validateBatch(batch).crc))],
  ['validateBatch checkRecords', measure(() => (sink ^= validateBatch(batch, 0, { checkRecords: true }).crc))],
  ['encodeBatch', measure(() => (sink ^= encodeBatch({ firstTimestamp: 1, records }).length))],
  ['decodeBatch', measure(() => (sink ^= decodeBatch(batch).records.length))],
];

const crcRate = results[0][1];
console.log(`batch: ${RECORDS} records x ${VALUE_BYTES} B values = ${size} B; median of ${runs} runs x ${runMs} ms`);
console.log(`${'operation'.padEnd(32)}${'batches/s'.padStart(12)}${'MB/s'.padStart(10)}${'vs crc32c'.padStart(11)}`);
for (const [name, rate] of results) {
  console.log(
    `${name.padEnd(32)}${rate.toFixed(0).padStart(12)}${((rate * size) / 1e6).toFixed(0).padStart(10)}${(rate / crcRate).toFixed(2).padStart(11)}`,
  );
}
if (sink === 0.5) console.log(''); // keeps the results observable to the JIT
