// Request bodies for the workload: real RecordBatch v2 bytes whose header carries the
// producer id and base sequence (Kafka's idempotent-producer identity), so that every
// record found in a log later names the request that carried it.
import { encodeBatch, type RecordInput } from '../../engine/records/index.ts';

export interface BatchFactoryOptions {
  recordBytes: number;
  recordsPerBatch: number;
}

export class BatchFactory {
  private readonly padding: Buffer;
  private readonly opts: BatchFactoryOptions;

  constructor(opts: BatchFactoryOptions) {
    if (opts.recordBytes < 16) throw new Error(`workload.recordBytes must be at least 16 (found ${opts.recordBytes})`);
    if (opts.recordsPerBatch < 1) throw new Error(`workload.recordsPerBatch must be at least 1 (found ${opts.recordsPerBatch})`);
    this.opts = opts;
    this.padding = Buffer.alloc(opts.recordBytes);
    for (let i = 16; i < opts.recordBytes; i++) this.padding[i] = 0x61 + (i % 26);
  }

  /** Bytes of each record's value. */
  get recordBytes(): number {
    return this.opts.recordBytes;
  }

  /** One batch of `recordsPerBatch` records with sequences baseSequence.. */
  build(producerId: number, baseSequence: number, nowMs: number): Buffer {
    const records: RecordInput[] = new Array(this.opts.recordsPerBatch);
    for (let i = 0; i < records.length; i++) {
      const value = Buffer.from(this.padding);
      // Human-readable identity at the front of each value, for dump-log debugging.
      value.writeUInt32BE(Math.floor(producerId / 2 ** 32), 0);
      value.writeUInt32BE(producerId >>> 0, 4);
      value.writeUInt32BE(Math.floor((baseSequence + i) / 2 ** 32), 8);
      value.writeUInt32BE((baseSequence + i) >>> 0, 12);
      records[i] = { value };
    }
    return encodeBatch({ producerId, producerEpoch: 0, baseSequence, firstTimestamp: nowMs, records });
  }
}
