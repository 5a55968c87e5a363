// One record as driver nats publishes it: a JetStream message on the topic's subject whose
// header `durolab.id` carries the ledger identity ("<producerId>:<sequence>", NATS headers are
// text), `Nats-Msg-Id` the same identity (the stream drops a second copy within its duplicate
// window), and whose payload checks itself: CRC-32C of the rest in its first 4 bytes, then the
// identity, then padding to workload.recordBytes. A served message whose payload fails that, or
// disagrees with its header, is corrupt.
import { crc32c } from '../../../engine/records/index.ts';

export const NATS_ID_HEADER = 'durolab.id';

export function identityText(producerId: number, sequence: number): string {
  return `${producerId}:${sequence}`;
}

export function parseIdentity(text: string | undefined | null): { producerId: number; sequence: number } | null {
  const m = /^(-?\d+):(\d+)$/.exec(text ?? '');
  return m ? { producerId: Number(m[1]), sequence: Number(m[2]) } : null;
}

/** The payload of record (producerId, sequence): crc32c | int64 producer id | int32 sequence | padding, `recordBytes` long (at least 16). */
export function recordPayload(producerId: number, sequence: number, recordBytes: number, padding: Buffer): Buffer {
  if (recordBytes < 16) throw new Error(`nats driver: workload.recordBytes must be at least 16 (found ${recordBytes})`);
  const b = Buffer.allocUnsafe(recordBytes);
  b.writeBigInt64BE(BigInt(producerId), 4);
  b.writeInt32BE(sequence, 12);
  padding.copy(b, 16, 0, recordBytes - 16);
  b.writeUInt32BE(crc32c(b.subarray(4)) >>> 0, 0);
  return b;
}

/** The payload's identity when its CRC holds and it matches the header's, else null (corrupt). */
export function checkedPayload(data: Uint8Array, header: { producerId: number; sequence: number } | null): { producerId: number; sequence: number } | null {
  if (data.length < 16) return null;
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if ((crc32c(b.subarray(4)) >>> 0) !== b.readUInt32BE(0)) return null;
  const id = { producerId: Number(b.readBigInt64BE(4)), sequence: b.readInt32BE(12) };
  if (header && (header.producerId !== id.producerId || header.sequence !== id.sequence)) return null;
  return id;
}
