// Kafka protocol primitive types (https://kafka.apache.org/protocol#protocol_types): big-endian
// fixed-width integers, unsigned varints, classic (int16/int32 length) and compact (uvarint
// length + 1) strings, bytes and arrays, UUIDs and tagged-field sections. The reader names what
// it was reading when a frame ends early or holds an impossible length.
import type { FileRegions } from './spliced-frame.ts';

export class ProtocolError extends Error {
  constructor(
    message: string,
    /** Where: "Produce v9 request: TopicData[0].PartitionData[1].Records". */
    readonly where: string,
  ) {
    super(`${where}: ${message}`);
    this.name = 'ProtocolError';
  }
}

export class Reader {
  pos = 0;
  /** Field path stack for error messages. */
  private readonly path: string[] = [];

  constructor(
    readonly buf: Buffer,
    /** "Metadata v12 request": prefixed to every error. */
    readonly context: string,
  ) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  where(): string {
    return this.path.length ? `${this.context}: ${this.path.join('.')}` : this.context;
  }

  /** Runs fn with `name` on the field path (errors inside name it). */
  field<T>(name: string, fn: () => T): T {
    this.path.push(name);
    try {
      return fn();
    } finally {
      this.path.pop();
    }
  }

  fail(message: string): never {
    throw new ProtocolError(message, this.where());
  }

  private need(n: number, what: string): void {
    if (this.remaining < n) this.fail(`truncated: ${what} needs ${n} bytes at byte ${this.pos}, ${this.remaining} left`);
  }

  int8(): number {
    this.need(1, 'int8');
    return this.buf.readInt8(this.pos++);
  }

  bool(): boolean {
    const v = this.int8();
    if (v !== 0 && v !== 1) this.fail(`expected a boolean (0 or 1), found ${v}`);
    return v === 1;
  }

  int16(): number {
    this.need(2, 'int16');
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  int32(): number {
    this.need(4, 'int32');
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  uint32(): number {
    this.need(4, 'uint32');
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  int64(): number {
    this.need(8, 'int64');
    const v = this.buf.readBigInt64BE(this.pos);
    this.pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) this.fail(`int64 ${v} is outside the safe integer range`);
    return Number(v);
  }

  float64(): number {
    this.need(8, 'float64');
    const v = this.buf.readDoubleBE(this.pos);
    this.pos += 8;
    return v;
  }

  uvarint(): number {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      this.need(1, 'varint');
      const b = this.buf[this.pos++];
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        if (result > 0xffffffff) this.fail('unsigned varint exceeds 32 bits');
        return result;
      }
      shift += 7;
    }
    return this.fail('unsigned varint longer than 5 bytes');
  }

  uuid(): Buffer {
    this.need(16, 'uuid');
    const v = this.buf.subarray(this.pos, this.pos + 16);
    this.pos += 16;
    return v;
  }

  private slice(n: number, what: string): Buffer {
    this.need(n, what);
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  /** Length of a compact (uvarint N+1, 0 = null) field, or -1 for null. */
  private compactLength(): number {
    return this.uvarint() - 1;
  }

  string(compact: boolean, nullable: boolean): string | null {
    const n = compact ? this.compactLength() : this.int16();
    if (n < 0) {
      if (n !== -1) this.fail(`invalid string length ${n}`);
      if (!nullable) this.fail('null string where a string is required');
      return null;
    }
    return this.slice(n, `string of ${n} bytes`).toString('utf8');
  }

  bytes(compact: boolean, nullable: boolean): Buffer | null {
    const n = compact ? this.compactLength() : this.int32();
    if (n < 0) {
      if (n !== -1) this.fail(`invalid bytes length ${n}`);
      if (!nullable) this.fail('null bytes where bytes are required');
      return null;
    }
    return this.slice(n, `bytes of ${n}`);
  }

  /** Element count of an array, or -1 for null; guards against counts the frame cannot hold. */
  arrayLength(compact: boolean, nullable: boolean, minElementBytes = 1): number {
    const n = compact ? this.compactLength() : this.int32();
    if (n < 0) {
      if (n !== -1) this.fail(`invalid array length ${n}`);
      if (!nullable) this.fail('null array where an array is required');
      return -1;
    }
    if (n * minElementBytes > this.remaining) this.fail(`truncated: array of ${n} elements does not fit in the ${this.remaining} bytes left`);
    return n;
  }

  /** Tagged-field section: calls onTag for each (tag, data); unknown tags are skipped. */
  taggedFields(onTag?: (tag: number, data: Reader) => void): void {
    const count = this.uvarint();
    let last = -1;
    for (let i = 0; i < count; i++) {
      const tag = this.uvarint();
      if (tag <= last) this.fail(`tagged fields out of order: tag ${tag} after ${last}`);
      last = tag;
      const size = this.uvarint();
      const data = this.slice(size, `tagged field ${tag} of ${size} bytes`);
      if (onTag) {
        const sub = new Reader(data, `${this.where()} tag ${tag}`);
        onTag(tag, sub);
      }
    }
  }
}

/** Growable big-endian writer. */
export class Writer {
  private buf: Buffer;
  pos = 0;
  /** Records fields left as holes (fileRecords): their bytes are sent from files. */
  readonly holes: Array<{ at: number; records: FileRegions }> = [];

  constructor(initial = 256) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  int8(v: number): this {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos++);
    return this;
  }

  bool(v: boolean): this {
    return this.int8(v ? 1 : 0);
  }

  int16(v: number): this {
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
    return this;
  }

  int32(v: number): this {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
    return this;
  }

  uint32(v: number): this {
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
    return this;
  }

  int64(v: number): this {
    this.ensure(8);
    this.buf.writeBigInt64BE(BigInt(v), this.pos);
    this.pos += 8;
    return this;
  }

  float64(v: number): this {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
    return this;
  }

  uvarint(v: number): this {
    this.ensure(5);
    let n = v >>> 0;
    while (n >= 0x80) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.pos++] = n;
    return this;
  }

  raw(b: Buffer): this {
    this.ensure(b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
    return this;
  }

  uuid(b: Buffer): this {
    if (b.length !== 16) throw new Error(`uuid must be 16 bytes, got ${b.length}`);
    return this.raw(b);
  }

  string(v: string | null, compact: boolean): this {
    if (v === null) return compact ? this.uvarint(0) : this.int16(-1);
    const b = Buffer.from(v, 'utf8');
    if (compact) this.uvarint(b.length + 1);
    else this.int16(b.length);
    return this.raw(b);
  }

  bytes(v: Buffer | null, compact: boolean): this {
    if (v === null) return compact ? this.uvarint(0) : this.int32(-1);
    if (compact) this.uvarint(v.length + 1);
    else this.int32(v.length);
    return this.raw(v);
  }

  /** A records field whose bytes stay in files: its length prefix, then a hole of that size. */
  fileRecords(v: FileRegions, compact: boolean): this {
    if (compact) this.uvarint(v.sizeInBytes + 1);
    else this.int32(v.sizeInBytes);
    this.holes.push({ at: this.pos, records: v });
    return this;
  }

  arrayLength(n: number | null, compact: boolean): this {
    if (n === null) return compact ? this.uvarint(0) : this.int32(-1);
    return compact ? this.uvarint(n + 1) : this.int32(n);
  }

  /** Tagged-field section from already-encoded (tag, bytes) pairs, sorted by tag. */
  taggedFields(fields: ReadonlyArray<[number, Buffer]> = []): this {
    this.uvarint(fields.length);
    for (const [tag, data] of [...fields].sort((a, b) => a[0] - b[0])) {
      this.uvarint(tag).uvarint(data.length).raw(data);
    }
    return this;
  }
}
