import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  CorruptBatchError,
  batchSizeAt,
  crc32c,
  decodeBatch,
  encodeBatch,
  iterateBatches,
  readBatchHeader,
  recordsOf,
  scanValidPrefix,
  stampBatch,
  validateBatch,
  type CorruptionReason,
  type ValidateOptions,
} from './index.ts';

const require = createRequire(import.meta.url);
// kafkajs's pure-JS CRC-32C: an implementation independent of the native one we use.
const kafkajsCrc32c: (b: Buffer) => number = require('kafkajs/src/protocol/recordBatch/crc32C');

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** Recomputes the CRC after a test edits bytes inside the CRC's range. */
function recrc(buf: Buffer, pos = 0): Buffer {
  const size = 12 + buf.readInt32BE(pos + 8);
  buf.writeUInt32BE(crc32c(buf.subarray(pos + 21, pos + size)), pos + 17);
  return buf;
}

function reasonOf(fn: () => unknown): CorruptionReason | 'ok' {
  try {
    fn();
    return 'ok';
  } catch (e) {
    if (e instanceof CorruptBatchError) return e.reason;
    throw e;
  }
}

function errorOf(fn: () => unknown): CorruptBatchError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CorruptBatchError) return e;
    throw e;
  }
  throw new Error('expected a CorruptBatchError');
}

// Two records per the spec, field by field (Kafka's DefaultRecordBatch / DefaultRecord):
//   record 0: key null, value "v0", one header h="x", timestamp = firstTimestamp
//   record 1: key "k1", value "hello", no headers, timestamp = firstTimestamp + 250
const RECORD0 = [
  '18', //       length varint: 12 -> zigzag 24
  '00', //       attributes
  '00', //       timestampDelta varlong 0
  '00', //       offsetDelta varint 0
  '01', //       key length -1 (null) -> zigzag 1
  '04 7630', //  value length 2, "v0"
  '02', //       header count 1
  '02 68', //    header key length 1, "h"
  '02 78', //    header value length 1, "x"
].join('');
const RECORD1 = [
  '1c', //       length varint: 14 -> zigzag 28
  '00', //       attributes
  'f403', //     timestampDelta 250 -> zigzag 500 = 0x1f4 -> f4 03
  '02', //       offsetDelta 1
  '04 6b31', //  key length 2, "k1"
  '0a 68656c6c6f', // value length 5, "hello"
  '00', //       header count 0
].join('');
const AFTER_CRC = [
  '0000', //             attributes
  '00000001', //         lastOffsetDelta
  '0000018bcfe56800', // firstTimestamp 1700000000000
  '0000018bcfe568fa', // maxTimestamp 1700000000250
  'ffffffffffffffff', // producerId -1
  'ffff', //             producerEpoch -1
  'ffffffff', //         baseSequence -1
  '00000002', //         recordCount
  RECORD0,
  RECORD1,
].join('');
const GOLDEN_CRC = 'b5e4615a';
const GOLDEN = hex(
  [
    '000000000000002a', // baseOffset 42
    '0000004d', //         length 77 = 49 header bytes after the length field + 28 record bytes
    '00000007', //         partitionLeaderEpoch 7
    '02', //               magic
    GOLDEN_CRC, //         CRC-32C of attributes..end
    AFTER_CRC,
  ].join(''),
);
const GOLDEN_OPTS = {
  baseOffset: 42,
  partitionLeaderEpoch: 7,
  firstTimestamp: 1700000000000,
  records: [
    { key: null, value: Buffer.from('v0'), headers: [{ key: 'h', value: Buffer.from('x') }] },
    { key: Buffer.from('k1'), value: Buffer.from('hello'), timestamp: 1700000000250 },
  ],
};

function sampleBatch(baseOffset = 0, n = 5): Buffer {
  return encodeBatch({
    baseOffset,
    firstTimestamp: 1_000_000,
    records: Array.from({ length: n }, (_, i) => ({
      key: i % 2 ? null : Buffer.from(`key-${i}`),
      value: Buffer.alloc(20 + i, i),
      headers: i % 3 ? [] : [{ key: `h${i}`, value: i % 2 ? null : Buffer.from('hv') }],
      timestamp: 1_000_000 + i * 7,
    })),
  });
}

describe('crc32c', () => {
  it('matches the CRC-32C check value and kafkajs, and continues from an initial value', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(Buffer.from('56789'), crc32c(Buffer.from('1234')))).toBe(0xe3069283);
    const data = Buffer.alloc(1000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 131 + 7) & 0xff;
    for (const n of [0, 1, 3, 17, 64, 999, 1000]) {
      expect(crc32c(data.subarray(0, n))).toBe(kafkajsCrc32c(data.subarray(0, n)));
    }
  });
});

describe('golden bytes', () => {
  it('the hand-built CRC is the CRC-32C of attributes..end (kafkajs pure-JS implementation)', () => {
    expect(kafkajsCrc32c(hex(AFTER_CRC)).toString(16).padStart(8, '0')).toBe(GOLDEN_CRC);
  });

  it('encodeBatch produces exactly the spec bytes', () => {
    const ours = encodeBatch(GOLDEN_OPTS);
    expect(ours.toString('hex')).toBe(GOLDEN.toString('hex'));
    expect(batchSizeAt(ours)).toBe(89);
  });

  it('decodes the spec bytes', () => {
    const { header, records } = decodeBatch(GOLDEN, 0, { checkRecords: true });
    expect(header).toEqual({
      baseOffset: 42,
      length: 77,
      partitionLeaderEpoch: 7,
      magic: 2,
      crc: 0xb5e4615a,
      attributes: 0,
      lastOffsetDelta: 1,
      firstTimestamp: 1700000000000,
      maxTimestamp: 1700000000250,
      producerId: -1,
      producerEpoch: -1,
      baseSequence: -1,
      recordCount: 2,
    });
    expect(records).toEqual([
      { offset: 42, timestamp: 1700000000000, key: null, value: Buffer.from('v0'), headers: [{ key: 'h', value: Buffer.from('x') }] },
      { offset: 43, timestamp: 1700000000250, key: Buffer.from('k1'), value: Buffer.from('hello'), headers: [] },
    ]);
    expect(readBatchHeader(GOLDEN)).toEqual(header);
  });

  it('decoded buffers are copies, independent of the input', () => {
    const buf = Buffer.from(GOLDEN);
    const { records } = decodeBatch(buf);
    buf.fill(0);
    expect(records[1].value).toEqual(Buffer.from('hello'));
  });

  it('encodes large and negative timestamp deltas as Kafka varlongs', () => {
    const first = 2 ** 52;
    const ts = [first, first + 2 ** 50, first - 2 ** 52 - 12345, 0, first + 3, Number.MAX_SAFE_INTEGER];
    const b = encodeBatch({ firstTimestamp: first, records: ts.map((t) => ({ value: null, timestamp: t })) });
    const { header, records } = decodeBatch(b, 0, { checkRecords: true });
    expect(records.map((r) => r.timestamp)).toEqual(ts);
    expect(header.maxTimestamp).toBe(Number.MAX_SAFE_INTEGER);
    // timestampDelta -1 is the single byte 0x01 in the first record of this batch.
    const one = encodeBatch({ firstTimestamp: 10, records: [{ value: null, timestamp: 9 }] });
    expect(one.subarray(61).toString('hex')).toBe('0c' + '00' + '01' + '00' + '01' + '01' + '00');
  });

  it('log-append time (attributes bit 3) gives every record the batch maxTimestamp, as Kafka does', () => {
    const b = encodeBatch({ firstTimestamp: 500, attributes: 8, records: [{ value: null, timestamp: 510 }, { value: null, timestamp: 505 }] });
    expect(decodeBatch(b).records.map((r) => r.timestamp)).toEqual([510, 510]);
  });
});

describe('encodeBatch input errors', () => {
  it('rejects bad input with messages that name the field', () => {
    expect(() => encodeBatch({ records: [] })).toThrow(/records must be a non-empty array/);
    expect(() => encodeBatch({ baseOffset: 2 ** 53, records: [{ value: null }] })).toThrow(/baseOffset must be a safe integer/);
    expect(() => encodeBatch({ attributes: 1, records: [{ value: null }] })).toThrow(/compression/);
    expect(() => encodeBatch({ records: [{ value: 'x' as unknown as Buffer }] })).toThrow(/records\[0\]\.value must be a Buffer or null/);
    expect(() => encodeBatch({ firstTimestamp: 0, records: [{ value: null, timestamp: 1.5 }] })).toThrow(/records\[0\]\.timestamp/);
    expect(() => encodeBatch({ producerEpoch: 40000, records: [{ value: null }] })).toThrow(/producerEpoch/);
  });
});

describe('stamping', () => {
  it('rewrites baseOffset and leader epoch in place, keeping the CRC valid', () => {
    const b = Buffer.from(GOLDEN);
    stampBatch(b, 0, { baseOffset: 1_234_567_890_123, partitionLeaderEpoch: 99 });
    expect(b.subarray(17).equals(GOLDEN.subarray(17))).toBe(true);
    const { header, records } = decodeBatch(b, 0, { checkRecords: true });
    expect(header.baseOffset).toBe(1_234_567_890_123);
    expect(header.partitionLeaderEpoch).toBe(99);
    expect(records.map((r) => r.offset)).toEqual([1_234_567_890_123, 1_234_567_890_124]);
    stampBatch(b, 0, { baseOffset: 0 });
    expect(validateBatch(b).baseOffset).toBe(0);
    expect(validateBatch(b).partitionLeaderEpoch).toBe(99);
  });

  it('stamps a batch in the middle of a buffer and rejects bad values', () => {
    const b = Buffer.concat([sampleBatch(0), sampleBatch(5)]);
    const second = batchSizeAt(b)!;
    stampBatch(b, second, { baseOffset: 77 });
    expect([...iterateBatches(b)].map((x) => x.header.baseOffset)).toEqual([0, 77]);
    expect(() => stampBatch(b, second, { baseOffset: 2 ** 60 })).toThrow(RangeError);
    expect(() => stampBatch(b, second, { partitionLeaderEpoch: 2 ** 31 })).toThrow(RangeError);
    expect(() => stampBatch(b, b.length - 3, { baseOffset: 1 })).toThrow(RangeError);
  });
});

describe('corruption', () => {
  it('flipping any single byte from attributes onward gives crc-mismatch', () => {
    for (const batch of [GOLDEN, sampleBatch(3, 7)]) {
      for (let i = 17; i < batch.length; i++) {
        for (const mask of [0x01, 0x80, 0xff]) {
          const b = Buffer.from(batch);
          b[i] ^= mask;
          expect(reasonOf(() => validateBatch(b)), `byte ${i} ^ ${mask}`).toBe('crc-mismatch');
          expect(reasonOf(() => decodeBatch(b, 0, { checkRecords: true }))).toBe('crc-mismatch');
        }
      }
    }
  });

  it('truncation at every length gives short', () => {
    for (const batch of [GOLDEN, sampleBatch(3, 7)]) {
      for (let n = 0; n < batch.length; n++) {
        const b = batch.subarray(0, n);
        expect(reasonOf(() => validateBatch(b)), `truncated to ${n}`).toBe('short');
        expect(reasonOf(() => decodeBatch(b))).toBe('short');
        if (n < 61) expect(reasonOf(() => readBatchHeader(b))).toBe('short');
        else expect(readBatchHeader(b).recordCount).toBe(batch.readInt32BE(57));
      }
    }
  });

  it('reports position, base offset and the stored and computed CRC', () => {
    const file = Buffer.concat([sampleBatch(0), Buffer.from(GOLDEN)]);
    const at = batchSizeAt(file)!;
    file[at + 70] ^= 0x10;
    const e = errorOf(() => validateBatch(file, at, { positionBase: 4096 - at }));
    expect(e.reason).toBe('crc-mismatch');
    expect(e.position).toBe(4096);
    expect(e.batchPosition).toBe(4096);
    expect(e.baseOffset).toBe(42);
    expect(e.message).toMatch(/^corrupt batch at position 4096 \(base offset 42\): crc-mismatch: stored 0xb5e4615a, computed 0x[0-9a-f]{8}$/);
  });

  it('checks magic and the length range before anything else', () => {
    const badMagic = Buffer.from(GOLDEN);
    badMagic[16] = 1;
    const e = errorOf(() => validateBatch(badMagic, 0, { positionBase: 100 }));
    expect([e.reason, e.position, e.batchPosition]).toEqual(['bad-magic', 116, 100]);
    expect(reasonOf(() => readBatchHeader(badMagic))).toBe('bad-magic');

    const tooSmall = Buffer.from(GOLDEN);
    tooSmall.writeInt32BE(48, 8);
    expect(reasonOf(() => validateBatch(tooSmall))).toBe('length-out-of-range');
    const negative = Buffer.from(GOLDEN);
    negative.writeInt32BE(-5, 8);
    expect(reasonOf(() => readBatchHeader(negative))).toBe('length-out-of-range');
    expect(reasonOf(() => validateBatch(GOLDEN, 0, { maxBatchBytes: 88 }))).toBe('length-out-of-range');
    expect(validateBatch(GOLDEN, 0, { maxBatchBytes: 89 }).length).toBe(77);
    const huge = Buffer.from(GOLDEN);
    huge.writeInt32BE(1048577, 8);
    expect(reasonOf(() => readBatchHeader(huge))).toBe('length-out-of-range');
    huge.writeInt32BE(1048576, 8);
    expect(reasonOf(() => validateBatch(huge))).toBe('short');
  });

  it('rejects compression it does not implement', () => {
    const b = Buffer.from(GOLDEN);
    b.writeInt16BE(4, 21); // zstd
    recrc(b);
    const e = errorOf(() => validateBatch(b));
    expect([e.reason, e.position]).toEqual(['unsupported-compression', 21]);
  });

  it('reports i64 values beyond safe JS integers', () => {
    const b = Buffer.from(GOLDEN);
    b.writeBigInt64BE(2n ** 60n, 0);
    expect(reasonOf(() => readBatchHeader(b))).toBe('value-out-of-range');
    const ts = Buffer.from(GOLDEN);
    ts.writeBigInt64BE(-(2n ** 62n), 27);
    recrc(ts);
    const e = errorOf(() => validateBatch(ts));
    expect([e.reason, e.position]).toEqual(['value-out-of-range', 27]);
    expect(e.message).toContain(String(-(2n ** 62n)));
  });

  it('record framing: count, lengths, varints', () => {
    const withCount = (n: number): Buffer => {
      const b = Buffer.from(GOLDEN);
      b.writeInt32BE(n, 57);
      return recrc(b);
    };
    // Header-level checks pass; the records do not agree with the count.
    expect(reasonOf(() => validateBatch(withCount(3)))).toBe('ok');
    expect(reasonOf(() => validateBatch(withCount(3), 0, { checkRecords: true }))).toBe('record-count-mismatch');
    expect(reasonOf(() => decodeBatch(withCount(3)))).toBe('record-count-mismatch');
    expect(reasonOf(() => decodeBatch(withCount(1)))).toBe('record-count-mismatch');
    expect(reasonOf(() => decodeBatch(withCount(-1)))).toBe('record-count-mismatch');
    expect(reasonOf(() => decodeBatch(withCount(2 ** 31 - 1)))).toBe('record-count-mismatch');

    // Record 1's key length (byte at 61 + 13 + 5) claims 60 bytes.
    const keyAt = 61 + 13 + 5;
    const longKey = Buffer.from(GOLDEN);
    longKey[keyAt] = 120;
    recrc(longKey);
    const e = errorOf(() => validateBatch(longKey, 0, { checkRecords: true, positionBase: 1000 }));
    expect([e.reason, e.position, e.batchPosition]).toEqual(['record-overflow', 1000 + keyAt, 1000]);
    expect(e.message).toMatch(/key length 60 with 9 bytes left in the record/);

    // Record 0 declares one byte more than its fields take.
    const loose = Buffer.from(GOLDEN);
    loose[61] = 0x1a;
    expect(reasonOf(() => decodeBatch(recrc(loose)))).toBe('record-overflow');

    // A varint of six bytes where record 0's offsetDelta is.
    const b = Buffer.concat([GOLDEN.subarray(0, 61 + 3), hex('ffffffff7f'), GOLDEN.subarray(61 + 3)]);
    b.writeInt32BE(b.length - 12, 8);
    b[61] += 10; // record length + 5 (zigzag)
    expect(reasonOf(() => decodeBatch(recrc(b)))).toBe('varint-overflow');

    // Trailing bytes after the last record.
    const trailing = Buffer.concat([GOLDEN, hex('00')]);
    trailing.writeInt32BE(78, 8);
    expect(reasonOf(() => validateBatch(recrc(trailing), 0, { checkRecords: true }))).toBe('record-count-mismatch');
  });

  it('empty batches decode to no records but fail checkRecords', () => {
    const empty = Buffer.from(GOLDEN.subarray(0, 61));
    empty.writeInt32BE(49, 8);
    empty.writeInt32BE(0, 57);
    recrc(empty);
    expect(decodeBatch(empty).records).toEqual([]);
    expect(reasonOf(() => validateBatch(empty, 0, { checkRecords: true }))).toBe('record-count-mismatch');
  });

  it('offset gaps (as compaction leaves them) decode, but fail checkRecords', () => {
    const gap = Buffer.from(GOLDEN);
    gap[61 + 13 + 4] = 0x06; // record 1 offsetDelta 3
    gap.writeInt32BE(3, 23); // lastOffsetDelta 3
    recrc(gap);
    expect(decodeBatch(gap).records.map((r) => r.offset)).toEqual([42, 45]);
    const e = errorOf(() => validateBatch(gap, 0, { checkRecords: true }));
    expect(e.reason).toBe('record-count-mismatch');
    expect(e.message).toMatch(/lastOffsetDelta 3 with recordCount 2/);
  });
});

describe('sequences of batches', () => {
  const three = Buffer.concat([sampleBatch(0, 5), sampleBatch(5, 1), Buffer.from(GOLDEN)]);
  const sizes = [sampleBatch(0, 5).length, sampleBatch(5, 1).length, GOLDEN.length];

  it('iterateBatches yields each batch with position and size and stops at the exact end', () => {
    const got = [...iterateBatches(three, { positionBase: 1000 })];
    expect(got.map((g) => [g.position, g.size, g.header.baseOffset])).toEqual([
      [1000, sizes[0], 0],
      [1000 + sizes[0], sizes[1], 5],
      [1000 + sizes[0] + sizes[1], sizes[2], 42],
    ]);
    expect([...iterateBatches(Buffer.alloc(0))]).toEqual([]);
  });

  it('iterateBatches throws at the first bad batch after yielding the good ones', () => {
    const torn = three.subarray(0, three.length - 1);
    const seen: number[] = [];
    const e = errorOf(() => {
      for (const b of iterateBatches(torn, { positionBase: 10 })) seen.push(b.header.baseOffset);
    });
    expect(seen).toEqual([0, 5]);
    expect([e.reason, e.batchPosition]).toEqual(['short', 10 + sizes[0] + sizes[1]]);
  });

  it('scanValidPrefix stops at torn and zero-filled tails with a reason', () => {
    expect(scanValidPrefix(three)).toEqual({ validBytes: three.length, batches: 3, lastOffset: 43, nextOffset: 44, error: null });
    const zeros = scanValidPrefix(Buffer.concat([three, Buffer.alloc(4096)]));
    expect([zeros.validBytes, zeros.batches, zeros.nextOffset, zeros.error?.reason]).toEqual([three.length, 3, 44, 'length-out-of-range']);
    const shortZeros = scanValidPrefix(Buffer.concat([three, Buffer.alloc(5)]));
    expect([shortZeros.validBytes, shortZeros.error?.reason]).toEqual([three.length, 'short']);
    for (let cut = 0; cut < three.length; cut += 7) {
      const r = scanValidPrefix(three.subarray(0, cut));
      const boundary = [0, sizes[0], sizes[0] + sizes[1]].filter((x) => x <= cut).pop()!;
      expect(r.validBytes).toBe(boundary);
      expect(r.error === null).toBe(cut === boundary);
    }
    const corrupt = Buffer.from(three);
    corrupt[sizes[0] + 40] ^= 1;
    const r = scanValidPrefix(corrupt, { positionBase: 500 });
    expect([r.validBytes, r.batches, r.lastOffset, r.error?.reason, r.error?.batchPosition]).toEqual([sizes[0], 1, 4, 'crc-mismatch', 500 + sizes[0]]);
    expect(scanValidPrefix(Buffer.alloc(0))).toEqual({ validBytes: 0, batches: 0, lastOffset: -1, nextOffset: 0, error: null });
  });

  it('recordsOf decodes every record of concatenated batches', () => {
    const recs = [...recordsOf(three)];
    expect(recs.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4, 5, 42, 43]);
    expect(recs[6].value).toEqual(Buffer.from('v0'));
    expect(recs[0].headers).toEqual([{ key: 'h0', value: Buffer.from('hv') }]);
    expect(recs[3].headers).toEqual([{ key: 'h3', value: null }]);
  });

  it('applies maxBatchBytes and checkRecords while scanning', () => {
    const opts: ValidateOptions = { maxBatchBytes: sizes[0] - 1 };
    expect(scanValidPrefix(three, opts).error?.reason).toBe('length-out-of-range');
  });
});
