// Re-counting a trial from its kept disks: every acknowledged record of the ledger classified as
//   served          in a final image (what the recovered cluster kept, after its clean stop);
//   on disk, not served   in some broker's cut image but in no final image: the system's own
//                   recovery or leader election threw it away (e.g. an acks=1 leader's tail
//                   truncated to the new leader's log);
//   on no disk      in no image: never made durable (a page cache or a volatile disk cache lost it).
// Identity is the ledger's (producer id, sequence), read from the stored records by the trial's
// driver, as the checker does. The served count must equal the check's (acked - ackedLost);
// a difference is a finding: one of the two readers is wrong.
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { LedgerBatch } from '../history/ledger.ts';
import type { RecountFigures } from '../results/types.ts';
import type { DisksManifest } from '../disk/disk-evidence.ts';
import type { StoredBatchReader } from '../disk/crash-states/check-state.ts';
import { LEDGER_FILE } from '../results/trial-files.ts';
import { readImagePartitions, type ImagePartition } from './image-logs.ts';

/** The ledger a trial kept (one LedgerBatch per line); errors name the file and line. */
export function readLedgerFile(file: string): LedgerBatch[] {
  if (!existsSync(file)) throw new Error(`${file}: no ledger (the trial kept none)`);
  const out: LedgerBatch[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      let b: Partial<LedgerBatch>;
      try {
        b = JSON.parse(line) as Partial<LedgerBatch>;
      } catch (err) {
        throw new Error(`${file}:${i + 1}: expected one JSON ledger batch per line: ${(err as Error).message}`);
      }
      for (const k of ['partition', 'producerId', 'baseSequence', 'records'] as const) {
        if (typeof b[k] !== 'number') throw new Error(`${file}:${i + 1}: field ${k} must be a number, got ${JSON.stringify(b[k])}`);
      }
      if (typeof b.status !== 'string') throw new Error(`${file}:${i + 1}: field status must be a string`);
      out.push(b as LedgerBatch);
    });
  return out;
}

/** Our producer's sequences present per partition, over a set of images. */
function presentSequences(images: ImagePartition[][], producerOf: Map<number, number>): Map<number, Set<number>> {
  const out = new Map<number, Set<number>>();
  for (const image of images) {
    for (const part of image) {
      const pid = producerOf.get(part.partition);
      let set = out.get(part.partition);
      if (!set) out.set(part.partition, (set = new Set()));
      for (const b of part.batches) {
        if (b.producerId !== pid) continue;
        for (let i = 0; i < b.records; i++) set.add(b.baseSequence + i);
      }
    }
  }
  return out;
}

/** One broker's image, read. */
export interface BrokerImage {
  brokerId: number;
  parts: ImagePartition[];
}

/** Classifies every acknowledged record of `ledger` against the final and cut images' contents. */
export function classifyAcked(ledger: readonly LedgerBatch[], finals: BrokerImage[], cuts: BrokerImage[], checkServed: number): RecountFigures {
  const producerOf = new Map<number, number>();
  for (const b of ledger) if (!producerOf.has(b.partition)) producerOf.set(b.partition, b.producerId);
  const served = presentSequences(finals.map((f) => f.parts), producerOf);
  const onCut = cuts.map((c) => ({ brokerId: c.brokerId, present: presentSequences([c.parts], producerOf) }));
  const figures: RecountFigures = { acked: 0, served: 0, onDiskNotServed: 0, onNoDisk: 0, checkServed, corruptBatches: 0, tornTails: 0, images: finals.length + cuts.length };
  const byBroker = new Map<number, number>();
  for (const b of ledger) {
    if (b.status !== 'acked') continue;
    for (let i = 0; i < b.records; i++) {
      const seq = b.baseSequence + i;
      figures.acked++;
      if (served.get(b.partition)?.has(seq)) {
        figures.served++;
        continue;
      }
      const holders = onCut.filter((c) => c.present.get(b.partition)?.has(seq));
      if (holders.length === 0) figures.onNoDisk++;
      else figures.onDiskNotServed++;
      for (const h of holders) byBroker.set(h.brokerId, (byBroker.get(h.brokerId) ?? 0) + 1);
    }
  }
  if (byBroker.size) figures.notServedOnBroker = Object.fromEntries([...byBroker].sort((a, b) => a[0] - b[0]));
  for (const part of [...finals, ...cuts].flatMap((img) => img.parts)) {
    figures.corruptBatches += part.corrupt;
    figures.tornTails += part.tornTails;
  }
  return figures;
}

/** What a trial directory's evidence says (disks.json) and what its manifest lacks for a recount. */
export interface TrialDisks {
  trialDir: string;
  manifest: DisksManifest;
}

/** Reads every kept image of one trial and classifies its acknowledged records. */
export async function recountTrial(o: { trial: TrialDisks; checkServed: number; read: StoredBatchReader; scratch: string }): Promise<RecountFigures> {
  const { trialDir, manifest } = o.trial;
  if (!manifest.topic) throw new Error(`${path.join(trialDir, 'disks.json')}: no topic recorded (written by an older durolab): re-run the trial with --keep-data`);
  const ledger = readLedgerFile(path.join(trialDir, LEDGER_FILE));
  const partitions = [...new Set(ledger.map((b) => b.partition))].sort((a, b) => a - b);
  const finals: BrokerImage[] = [];
  const cuts: BrokerImage[] = [];
  for (const b of manifest.brokers) {
    for (const [img, into] of [[b.final, finals], [b.cut, cuts]] as const) {
      if (!img) continue;
      const scratch = path.join(o.scratch, `broker-${b.brokerId}-${path.basename(img.file, '.img')}`);
      try {
        into.push({ brokerId: b.brokerId, parts: await readImagePartitions({ image: path.join(trialDir, img.file), dataDirOnDisk: b.dataDirOnDisk, topic: manifest.topic, partitions, scratch, read: o.read }) });
      } finally {
        await fs.rm(scratch, { recursive: true, force: true });
      }
    }
  }
  if (finals.length === 0) throw new Error(`${trialDir}: no final image was kept (${manifest.incomplete?.join('; ') ?? 'the cluster kept none'}): what was served cannot be read from the disks`);
  return classifyAcked(ledger, finals, cuts, o.checkServed);
}
