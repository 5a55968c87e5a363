// The ledger identity of a record produced through a Kafka client. A real producer owns its
// batches' producer id and sequences (the client assigns them with idempotence, and without it
// they are -1), so every record also carries the ledger's (producer id, sequence) in a header,
// `durolab.id` = int64 producer id + int32 sequence, big-endian. The consumer maps served
// records back to ledger batches through it: a served batch, as the checker sees it, is a run
// of records with consecutive sequences of one ledger producer.
import { decodeBatch, CorruptBatchError } from '../../../engine/records/index.ts';
import { splitBatches } from '../record-batches.ts';
import type { ServedBatch } from '../types.ts';

export const ID_HEADER = 'durolab.id';

export function encodeIdentity(producerId: number, sequence: number): Buffer {
  const b = Buffer.allocUnsafe(12);
  b.writeBigInt64BE(BigInt(producerId), 0);
  b.writeInt32BE(sequence, 8);
  return b;
}

export function decodeIdentity(b: Buffer | null): { producerId: number; sequence: number } | null {
  if (!b || b.length !== 12) return null;
  return { producerId: Number(b.readBigInt64BE(0)), sequence: b.readInt32BE(8) };
}

/**
 * The prefix of whole batches: a Fetch answer may end in a partial batch cut at the fetch size
 * (Kafka's consumers drop it and fetch again from its offset), which is not corruption.
 */
export function completeBatches(buf: Buffer): Buffer {
  let pos = 0;
  while (pos + 12 <= buf.length) {
    const size = 12 + buf.readInt32BE(pos + 8);
    if (size <= 12 || pos + size > buf.length) break;
    pos += size;
  }
  // A bad length field (<= 0) is left in for splitBatches to count as corrupt.
  return pos + 12 <= buf.length && buf.readInt32BE(pos + 8) <= 0 ? buf : buf.subarray(0, pos);
}

/**
 * Splits stored or served bytes into batches (CRC-checked by durolab's codec) and re-cuts them
 * by ledger identity. Records without the header (another producer's) form batches of producer
 * id -1, which no ledger owns.
 */
export function servedByIdentity(buf: Buffer, opts: { partialTail?: boolean } = {}): { batches: ServedBatch[]; corrupt: number; spans: Array<{ position: number; size: number }>; raw: ServedBatch[] } {
  const split = splitBatches(opts.partialTail ? completeBatches(buf) : buf);
  const out: ServedBatch[] = [];
  for (const span of split.spans) {
    let records;
    try {
      records = decodeBatch(buf, span.position).records;
    } catch (err) {
      if (err instanceof CorruptBatchError) continue; // counted by splitBatches already
      throw err;
    }
    const runs = new IdentityRuns(out);
    for (const r of records) runs.add(r.offset, decodeIdentity(r.headers.find((h) => h.key === ID_HEADER)?.value ?? null));
    runs.end();
  }
  return { batches: out, corrupt: split.corrupt, spans: split.spans, raw: split.batches };
}

/**
 * Cuts records, in offset order, into ledger batches: a run of records with consecutive
 * sequences of one ledger producer at consecutive offsets; records without the identity header
 * form runs of producer id -1. Pushes each finished run into `out`.
 */
export class IdentityRuns {
  private run: ServedBatch | null = null;
  constructor(private readonly out: ServedBatch[]) {}

  add(offset: number, id: { producerId: number; sequence: number } | null): void {
    const run = this.run;
    const pid = id?.producerId ?? -1;
    const seq = id?.sequence ?? -1;
    if (run && offset === run.lastOffset + 1 && pid === run.producerId && (pid === -1 || seq === run.baseSequence + run.records)) {
      run.records++;
      run.lastOffset = offset;
      return;
    }
    if (run) this.out.push(run);
    this.run = { baseOffset: offset, lastOffset: offset, producerId: pid, baseSequence: seq, records: 1 };
  }

  /** Ends the current run (the end of a batch: runs never span stored batches). */
  end(): void {
    if (this.run) this.out.push(this.run);
    this.run = null;
  }
}
