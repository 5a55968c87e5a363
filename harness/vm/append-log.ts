// Record format of the append workload (guest/append-workload.ts) and its checker. Shared by
// the guest writer and the host reader so both agree on what a valid record is: a record that
// survived a cut must carry its own sequence number and an intact fill pattern, so a block
// that reached the disk half-written or as zeros is told apart from a durable record.

const RECORD_MAGIC = 0x314c5244; // "DRL1" little-endian
const RECORD_HEADER_BYTES = 16;
export const MIN_RECORD_BYTES = 32;

function pattern(seq: number): Buffer {
  const p = Buffer.alloc(8);
  p.writeUInt32LE(seq >>> 0, 0);
  p.writeUInt32LE(~seq >>> 0, 4);
  return p;
}

/** Writes record `seq` into `buf` (whose length is the record size). */
export function fillRecord(buf: Buffer, seq: number): void {
  if (buf.length < MIN_RECORD_BYTES) throw new Error(`append record: size ${buf.length} is below ${MIN_RECORD_BYTES} bytes`);
  buf.writeUInt32LE(RECORD_MAGIC, 0);
  buf.writeUInt32LE(buf.length, 4);
  buf.writeUIntLE(seq, 8, 6);
  buf.writeUInt16LE(0, 14);
  buf.subarray(RECORD_HEADER_BYTES).fill(pattern(seq));
}

export interface AppendLogCheck {
  recordBytes: number;
  fileBytes: number;
  /** Records 0..validRecords-1 are all intact: the unbroken prefix that survived. */
  validRecords: number;
  /** Set when the file continues past the prefix with something that is not the next record. */
  firstInvalid?: { index: number; offset: number; reason: string };
  /** Bytes after the last whole record (a torn tail). */
  trailingBytes: number;
}

/** Checks a file written by the append workload: how many records, from the start, are intact. */
export function checkAppendLog(data: Buffer, recordBytes: number): AppendLogCheck {
  if (!Number.isInteger(recordBytes) || recordBytes < MIN_RECORD_BYTES) {
    throw new Error(`checkAppendLog: recordBytes must be an integer >= ${MIN_RECORD_BYTES}, got ${recordBytes}`);
  }
  const whole = Math.floor(data.length / recordBytes);
  const result: AppendLogCheck = { recordBytes, fileBytes: data.length, validRecords: 0, trailingBytes: data.length - whole * recordBytes };
  const expected = Buffer.alloc(recordBytes);
  for (let i = 0; i < whole; i++) {
    const off = i * recordBytes;
    const rec = data.subarray(off, off + recordBytes);
    fillRecord(expected, i);
    if (!rec.equals(expected)) {
      let reason: string;
      if (rec.every((b) => b === 0)) reason = 'zeros (size was committed, data was not)';
      else if (rec.readUInt32LE(0) !== RECORD_MAGIC) reason = `bad magic 0x${rec.readUInt32LE(0).toString(16)}`;
      else if (rec.readUIntLE(8, 6) !== i) reason = `sequence ${rec.readUIntLE(8, 6)} where ${i} was expected`;
      else reason = 'fill pattern differs (torn or corrupt record)';
      result.firstInvalid = { index: i, offset: off, reason };
      return result;
    }
    result.validRecords = i + 1;
  }
  return result;
}
