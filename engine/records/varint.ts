// Kafka's zigzag varints (ByteUtils.writeVarint/writeVarlong) for the encoder. Decoding lives in
// decode.ts because every read there needs the batch context for its error.

const TWO_POW_52 = 2 ** 52;

/** Bytes of the zigzag varint of an int32. */
export function sizeOfVarint(n: number): number {
  const z = ((n << 1) ^ (n >> 31)) >>> 0;
  if (z < 0x80) return 1;
  if (z < 0x4000) return 2;
  if (z < 0x200000) return 3;
  if (z < 0x10000000) return 4;
  return 5;
}

/** Writes the zigzag varint of an int32 at pos; returns the position after it. */
export function writeVarint(buf: Buffer, pos: number, n: number): number {
  let z = ((n << 1) ^ (n >> 31)) >>> 0;
  while (z >= 0x80) {
    buf[pos++] = (z & 0x7f) | 0x80;
    z >>>= 7;
  }
  buf[pos++] = z;
  return pos;
}

/** Bytes of the zigzag varlong of a safe integer. */
export function sizeOfVarlong(n: number): number {
  if (n > TWO_POW_52 || n < -TWO_POW_52) return sizeOfVarlongBig(BigInt(n));
  // Exact in doubles: |n| <= 2^52 keeps the zigzag value below 2^53.
  let z = n >= 0 ? n * 2 : -n * 2 - 1;
  let size = 1;
  while (z >= 0x80) {
    z = Math.floor(z / 0x80);
    size++;
  }
  return size;
}

/** Writes the zigzag varlong of a safe integer at pos; returns the position after it. */
export function writeVarlong(buf: Buffer, pos: number, n: number): number {
  if (n >= -0x40000000 && n < 0x40000000) return writeVarint(buf, pos, n);
  if (n > TWO_POW_52 || n < -TWO_POW_52) return writeVarlongBig(buf, pos, BigInt(n));
  let z = n >= 0 ? n * 2 : -n * 2 - 1;
  while (z >= 0x80) {
    buf[pos++] = (z % 0x80) | 0x80;
    z = Math.floor(z / 0x80);
  }
  buf[pos++] = z;
  return pos;
}

function zigzag64(n: bigint): bigint {
  return BigInt.asUintN(64, (n << 1n) ^ (n >> 63n));
}

function sizeOfVarlongBig(n: bigint): number {
  let z = zigzag64(n);
  let size = 1;
  while (z >= 0x80n) {
    z >>= 7n;
    size++;
  }
  return size;
}

function writeVarlongBig(buf: Buffer, pos: number, n: bigint): number {
  let z = zigzag64(n);
  while (z >= 0x80n) {
    buf[pos++] = Number(z & 0x7fn) | 0x80;
    z >>= 7n;
  }
  buf[pos++] = Number(z);
  return pos;
}
