// Interop with a real client's codec: kafkajs 2.2.4 (test-only dependency, CommonJS).
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32c, decodeBatch, encodeBatch, validateBatch, type DecodedRecord, type RecordInput } from './index.ts';

const require = createRequire(import.meta.url);
type KHeaders = Record<string, Buffer | null | (Buffer | null)[]>;
interface KRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: KHeaders;
}
interface KBatch {
  firstOffset: string;
  firstTimestamp: string;
  maxTimestamp: string;
  partitionLeaderEpoch: number;
  lastOffsetDelta: number;
  producerId: string;
  producerEpoch: number;
  firstSequence: number;
  records: KRecord[];
}
const Decoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => unknown;
const decodeKafkajs = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (d: unknown) => Promise<KBatch>;
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch: (o: Record<string, unknown>) => Promise<{ buffer: Buffer }>;
};
const KRecordEncoder = require('kafkajs/src/protocol/recordBatch/record/v0') as (o: Record<string, unknown>) => unknown;
const Long = require('kafkajs/src/utils/long') as { fromValue(v: number | string): unknown };
const kafkajsCrc32c = require('kafkajs/src/protocol/recordBatch/crc32C') as (b: Buffer) => number;

/** kafkajs folds headers into an object, repeated keys into arrays. */
function foldHeaders(headers: { key: string; value: Buffer | null }[]): KHeaders {
  const out: KHeaders = {};
  for (const { key, value } of headers) {
    const prev = Object.prototype.hasOwnProperty.call(out, key) ? out[key] : undefined;
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

async function expectKafkajsDecodes(batch: Buffer, input: RecordInput[], baseOffset: number, firstTimestamp: number): Promise<void> {
  const k = await decodeKafkajs(new Decoder(batch));
  expect(k.firstOffset).toBe(String(baseOffset));
  expect(k.lastOffsetDelta).toBe(input.length - 1);
  expect(k.firstTimestamp).toBe(String(firstTimestamp));
  const timestamps = input.map((r) => r.timestamp ?? firstTimestamp);
  expect(k.maxTimestamp).toBe(String(Math.max(...timestamps)));
  expect(k.records).toHaveLength(input.length);
  k.records.forEach((r, i) => {
    expect(r.offset).toBe(String(baseOffset + i));
    expect(r.timestamp).toBe(String(timestamps[i]));
    expect(r.key).toEqual(input[i].key ?? null);
    expect(r.value).toEqual(input[i].value);
    expect(r.headers).toEqual(foldHeaders(input[i].headers ?? []));
  });
  // kafkajs does not check the CRC on decode: check it with its CRC-32C implementation.
  expect(kafkajsCrc32c(batch.subarray(21))).toBe(batch.readUInt32BE(17));
}

interface KInput {
  key: Buffer | null;
  value: Buffer | null;
  timestampDelta: number;
  headers: Record<string, Buffer>;
}

async function encodeWithKafkajs(
  records: KInput[],
  o: { baseOffset: number; firstTimestamp: number; epoch: number; producerId: number; producerEpoch: number; seq: number },
): Promise<Buffer> {
  const encoded = records.map((r, i) =>
    KRecordEncoder({ offsetDelta: i, timestampDelta: r.timestampDelta, key: r.key, value: r.value, headers: r.headers }),
  );
  const batch = await RecordBatch({
    firstOffset: Long.fromValue(o.baseOffset),
    firstTimestamp: o.firstTimestamp,
    maxTimestamp: o.firstTimestamp + Math.max(...records.map((r) => r.timestampDelta)),
    partitionLeaderEpoch: o.epoch,
    lastOffsetDelta: records.length - 1,
    producerId: Long.fromValue(o.producerId),
    producerEpoch: o.producerEpoch,
    firstSequence: o.seq,
    records: encoded,
  });
  return batch.buffer;
}

function expectOursDecodes(batch: Buffer, records: KInput[], baseOffset: number, firstTimestamp: number): DecodedRecord[] {
  validateBatch(batch, 0, { checkRecords: true });
  const { header, records: got } = decodeBatch(batch, 0, { checkRecords: true });
  expect(header.baseOffset).toBe(baseOffset);
  expect(header.recordCount).toBe(records.length);
  expect(header.crc).toBe(crc32c(batch.subarray(21)));
  expect(got).toEqual(
    records.map((r, i) => ({
      offset: baseOffset + i,
      timestamp: firstTimestamp + r.timestampDelta,
      key: r.key,
      value: r.value,
      headers: Object.entries(r.headers).map(([key, value]) => ({ key, value })),
    })),
  );
  return got;
}

const bytes = fc.oneof(fc.constant(null), fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)));
// kafkajs keeps headers in an object: integer-like keys would be reordered, so keep them non-numeric.
const headerKey = fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => `h-${s}`);

describe('kafkajs interop', () => {
  it('kafkajs decodes a batch we encoded', async () => {
    const input: RecordInput[] = [
      { key: null, value: Buffer.from('v0'), headers: [{ key: 'trace', value: Buffer.from('abc') }, { key: 'trace', value: null }] },
      { key: Buffer.from('k1'), value: null, timestamp: 1700000000250 },
      { key: Buffer.alloc(0), value: Buffer.alloc(2000, 7), timestamp: 1699999999000, headers: [{ key: 'ключ', value: Buffer.alloc(0) }] },
    ];
    const batch = encodeBatch({ baseOffset: 2 ** 40 + 3, partitionLeaderEpoch: 5, firstTimestamp: 1700000000000, records: input });
    await expectKafkajsDecodes(batch, input, 2 ** 40 + 3, 1700000000000);
  });

  it('we validate and decode a batch kafkajs encoded', async () => {
    const records: KInput[] = [
      { key: Buffer.from('user-1'), value: Buffer.from('{"a":1}'), timestampDelta: 0, headers: { source: Buffer.from('test') } },
      { key: null, value: null, timestampDelta: 1234, headers: {} },
      { key: Buffer.from('x'), value: Buffer.alloc(5000, 1), timestampDelta: -5, headers: { a: Buffer.from('1'), b: Buffer.alloc(0) } },
    ];
    const opts = { baseOffset: 77, firstTimestamp: 1700000000000, epoch: 3, producerId: 4000, producerEpoch: 2, seq: 10 };
    const batch = await encodeWithKafkajs(records, opts);
    expectOursDecodes(batch, records, 77, 1700000000000);
    const h = validateBatch(batch);
    expect([h.partitionLeaderEpoch, h.producerId, h.producerEpoch, h.baseSequence, h.maxTimestamp]).toEqual([3, 4000, 2, 10, 1700000001234]);
  });

  it('property: arbitrary batches we encode decode identically in kafkajs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            key: bytes,
            value: bytes,
            headers: fc.array(fc.record({ key: headerKey, value: bytes }), { maxLength: 4 }),
            timestamp: fc.integer({ min: 0, max: 2 ** 45 }),
          }),
          { minLength: 1, maxLength: 20 },
        ),
        fc.integer({ min: 0, max: 2 ** 50 }),
        fc.integer({ min: 0, max: 2 ** 45 }),
        async (records, baseOffset, firstTimestamp) => {
          const batch = encodeBatch({ baseOffset, firstTimestamp, records });
          await expectKafkajsDecodes(batch, records, baseOffset, firstTimestamp);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('property: arbitrary batches kafkajs encodes validate and decode with ours', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            key: bytes,
            value: bytes,
            timestampDelta: fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
            // kafkajs's record encoder cannot size null header values.
            headers: fc.dictionary(headerKey, fc.uint8Array({ maxLength: 50 }).map((a) => Buffer.from(a)), { maxKeys: 4 }),
          }),
          { minLength: 1, maxLength: 20 },
        ),
        fc.record({
          baseOffset: fc.integer({ min: 0, max: 2 ** 50 }),
          firstTimestamp: fc.integer({ min: 2 ** 41, max: 2 ** 46 }),
          epoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
          producerId: fc.integer({ min: -1, max: 2 ** 50 }),
          producerEpoch: fc.integer({ min: -1, max: 32767 }),
          seq: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
        }),
        async (records, o) => {
          const batch = await encodeWithKafkajs(records, o);
          expectOursDecodes(batch, records, o.baseOffset, o.firstTimestamp);
          // Byte-identical to ours for the same content.
          const ours = encodeBatch({
            baseOffset: o.baseOffset,
            partitionLeaderEpoch: o.epoch,
            producerId: o.producerId,
            producerEpoch: o.producerEpoch,
            baseSequence: o.seq,
            firstTimestamp: o.firstTimestamp,
            records: records.map((r) => ({
              key: r.key,
              value: r.value,
              timestamp: o.firstTimestamp + r.timestampDelta,
              headers: Object.entries(r.headers).map(([key, value]) => ({ key, value })),
            })),
          });
          expect(ours.toString('hex')).toBe(batch.toString('hex'));
        },
      ),
      { numRuns: 150 },
    );
  });
});
