import { crc32c as nativeCrc32c } from '@node-rs/crc32';

/** CRC-32C (Castagnoli), unsigned 32-bit; pass a previous result as `initial` to continue it. */
export function crc32c(buf: Uint8Array, initial?: number): number {
  return nativeCrc32c(buf, initial);
}
