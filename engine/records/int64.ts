// i64 fields as JS numbers: two 32-bit halves instead of BigInt, which is several times slower.

const TWO_POW_32 = 4294967296;

/** May be inexact beyond 2^53; callers check Number.isSafeInteger on the result. */
export function readI64(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * TWO_POW_32 + buf.readUInt32BE(pos + 4);
}

/** v must be a safe integer. */
export function writeI64(buf: Buffer, pos: number, v: number): void {
  const lo = v >>> 0;
  buf.writeInt32BE((v - lo) / TWO_POW_32, pos);
  buf.writeUInt32BE(lo, pos + 4);
}
