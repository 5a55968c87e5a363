// A JetStream replica's stored messages, read from its server's store_dir on this host (target
// nats: dataOnHost): <store_dir>/jetstream/$G/streams/<stream>/msgs/<n>.blk, message blocks of
// records laid out (nats-server's filestore, little-endian) as
//   total_len(4, high bit: has headers) seq(8, high bit: erased) ts(8) subj_len(2) subj
//   [hdr_len(4) hdr] msg hash(8)
// Each stored message becomes one StoredBatch of one record, identified by its durolab.id header;
// its "CRC" is the lab's own payload CRC (message.ts): the stored one and the one computed over
// the payload as stored now. nats-server's own per-record hash (HighwayHash, keyed per block) is
// not checked here. Compressed or encrypted stores are not read (the lab creates neither).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { crc32c } from '../../../engine/records/index.ts';
import type { StoredBatch } from '../types.ts';
import { NATS_ID_HEADER, parseIdentity } from './message.ts';

const HAS_HEADERS = 0x80000000;
const ERASED = 1n << 63n;
const RECORD_HEADER = 22;
const HASH_BYTES = 8;

export interface StoredMessage {
  seq: number;
  /** Record bytes on disk, hash included. */
  size: number;
  subject: string;
  headers: Buffer;
  payload: Buffer;
}

/** The stream's message block files in block order, or null when this store holds no replica of it. */
export function streamBlockFiles(storeDir: string, stream: string): string[] | null {
  const dir = path.join(storeDir, 'jetstream', '$G', 'streams', stream, 'msgs');
  if (!existsSync(dir)) return null;
  return readdirSync(dir)
    .map((f) => /^(\d+)\.blk$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((m) => path.join(dir, m[0]));
}

/** Records of one block; a record whose framing breaks ends the read (counted in `torn`). */
export function readBlock(buf: Buffer): { messages: StoredMessage[]; torn: number } {
  const messages: StoredMessage[] = [];
  let pos = 0;
  while (pos + RECORD_HEADER + HASH_BYTES <= buf.length) {
    const raw = buf.readUInt32LE(pos);
    const size = raw & ~HAS_HEADERS & 0xffffffff;
    if (size === 0) break; // preallocated zeros past the last record
    if (size < RECORD_HEADER + HASH_BYTES || pos + size > buf.length) return { messages, torn: 1 };
    const seqRaw = buf.readBigUInt64LE(pos + 4);
    const subjLen = buf.readUInt16LE(pos + 20);
    let at = pos + RECORD_HEADER + subjLen;
    const end = pos + size - HASH_BYTES;
    if (at > end) return { messages, torn: 1 };
    const subject = buf.toString('utf8', pos + RECORD_HEADER, at);
    let headers: Buffer = Buffer.alloc(0);
    if ((raw & HAS_HEADERS) !== 0) {
      const hlen = buf.readUInt32LE(at);
      if (at + 4 + hlen > end) return { messages, torn: 1 };
      headers = buf.subarray(at + 4, at + 4 + hlen);
      at += 4 + hlen;
    }
    if ((seqRaw & ERASED) === 0n) messages.push({ seq: Number(seqRaw), size, subject, headers, payload: buf.subarray(at, end) });
    pos += size;
  }
  return { messages, torn: 0 };
}

/** The value of one header in a stored NATS header block ("NATS/1.0\r\nKey: value\r\n..."). */
function headerValue(headers: Buffer, key: string): string | null {
  for (const line of headers.toString('utf8').split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    if (i > 0 && line.slice(0, i).trim() === key) return line.slice(i + 1).trim();
  }
  return null;
}

export interface StoredStream {
  /** Messages with seq < upTo, in sequence order. */
  messages: StoredMessage[];
  torn: number;
}

/** The replica's stored messages below `upTo`, or null when the store holds no replica of the stream. */
export function readStoredStream(storeDir: string, stream: string, upTo: number): StoredStream | null {
  const files = streamBlockFiles(storeDir, stream);
  if (files === null) return null;
  const messages: StoredMessage[] = [];
  let torn = 0;
  for (const f of files) {
    let buf: Buffer;
    try {
      buf = readFileSync(f);
    } catch {
      continue; // a block removed while read (compaction, purge)
    }
    const b = readBlock(buf);
    torn += b.torn;
    for (const m of b.messages) if (m.seq < upTo) messages.push(m);
  }
  messages.sort((a, b) => a.seq - b.seq);
  return { messages, torn };
}

/** One stored message as the checker's StoredBatch (one record): identity from its header, CRCs from its payload. */
export function storedBatchOf(m: StoredMessage): StoredBatch {
  const id = parseIdentity(headerValue(m.headers, NATS_ID_HEADER));
  const crc = m.payload.length >= 4 ? m.payload.readUInt32BE(0) : 0;
  const computedCrc = m.payload.length >= 4 ? crc32c(m.payload.subarray(4)) >>> 0 : crc ^ 1;
  return { baseOffset: m.seq, lastOffset: m.seq, producerId: id?.producerId ?? -1, baseSequence: id?.sequence ?? -1, records: 1, size: m.size, crc, computedCrc };
}

/** sha256 hex over the messages' sequence, subject, headers and payload (not nats-server's timestamps or per-block hashes). */
export function storedDigest(messages: readonly StoredMessage[]): string {
  const h = createHash('sha256');
  const seq = Buffer.alloc(8);
  for (const m of messages) {
    seq.writeBigUInt64BE(BigInt(m.seq));
    h.update(seq).update(m.subject).update(m.headers).update(m.payload);
  }
  return h.digest('hex');
}
