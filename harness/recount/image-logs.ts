// A second reader of a broker's disk: the batches its partition segments hold, read from a kept
// disk image alone. A scratch copy of the image gets its ext4 journal replayed (what a mount
// would do; the kept image itself is never written), each partition directory is copied out
// without mounting (debugfs lists, pread copies: crash-states/extract.ts), and every .log
// segment is decoded in base-offset order with the driver's reader (CRC checked), without the
// system's own recovery: what is on the disk, not what the broker would keep of it.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sparseCopy } from '../vm/disk.ts';
import { extractDirs } from '../disk/crash-states/extract.ts';
import { replayJournal, type StoredBatchReader } from '../disk/crash-states/check-state.ts';
import type { ServedBatch } from '../drivers/types.ts';

/** What one partition's segments hold on one image. */
export interface ImagePartition {
  partition: number;
  batches: ServedBatch[];
  /** Batches whose CRC or framing failed. */
  corrupt: number;
  /** Segments that end in a batch cut short (a torn tail: the system's recovery truncates it). */
  tornTails: number;
  segments: number;
}

/** Bytes of whole batches at the start of a segment; the rest is a torn batch or never-written space (zeros). */
function framedPrefix(buf: Buffer): { bytes: number; torn: boolean } {
  let pos = 0;
  while (pos + 12 <= buf.length) {
    const length = buf.readInt32BE(pos + 8);
    // Kafka's and durolab's preallocated or unwritten space reads as zeros: the log ends there.
    if (length === 0 && buf.readBigInt64BE(pos) === 0n) return { bytes: pos, torn: false };
    const size = 12 + length;
    if (length < 0 || pos + size > buf.length) return { bytes: pos, torn: true };
    pos += size;
  }
  return { bytes: pos, torn: pos < buf.length };
}

/** Decodes the .log segments of one extracted partition directory. */
export function readSegments(dir: string, partition: number, read: StoredBatchReader): ImagePartition {
  const out: ImagePartition = { partition, batches: [], corrupt: 0, tornTails: 0, segments: 0 };
  if (!existsSync(dir)) return out;
  const segments = readdirSync(dir)
    .filter((f) => /^\d+\.log$/.test(f))
    .sort((a, b) => (BigInt(a.slice(0, -4)) < BigInt(b.slice(0, -4)) ? -1 : 1));
  for (const f of segments) {
    const buf = readFileSync(path.join(dir, f));
    const { bytes, torn } = framedPrefix(buf);
    const split = read(buf.subarray(0, bytes));
    out.batches.push(...split.batches);
    out.corrupt += split.corrupt;
    if (torn) out.tornTails++;
    out.segments++;
  }
  return out;
}

export interface ReadImageOptions {
  image: string;
  /** The broker's data dir inside the image, from its root (/broker-data). */
  dataDirOnDisk: string;
  topic: string;
  partitions: number[];
  /** Scratch directory for the image's copy and the extracted files; emptied by the caller. */
  scratch: string;
  read: StoredBatchReader;
}

/** Every partition's batches as the image holds them; throws naming the image and the tool's message when it cannot be read. */
export async function readImagePartitions(o: ReadImageOptions): Promise<ImagePartition[]> {
  if (!existsSync(o.image)) throw new Error(`${o.image}: no such image`);
  const copy = path.join(o.scratch, 'image.img');
  await fs.mkdir(o.scratch, { recursive: true });
  try {
    await sparseCopy(o.image, copy);
    await replayJournal(copy).catch((err: Error) => {
      throw new Error(`${o.image}: the journal of its copy could not be replayed: ${err.message}`);
    });
    const dirs = o.partitions.map((p) => `${o.dataDirOnDisk}/${o.topic}-${p}`);
    const extractTo = path.join(o.scratch, 'extract');
    const extracted = await extractDirs(copy, dirs, extractTo).catch((err: Error) => {
      throw new Error(`${o.image}: its partition directories could not be read: ${err.message}`);
    });
    return o.partitions.map((p, i) =>
      extracted.get(dirs[i]!) === null ? { partition: p, batches: [], corrupt: 0, tornTails: 0, segments: 0 } : readSegments(path.join(extractTo, path.basename(dirs[i]!)), p, o.read),
    );
  } finally {
    await fs.rm(copy, { force: true });
  }
}
