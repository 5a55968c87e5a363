// One crash state of a Kafka broker's disk, checked with Apache Kafka's own recovery: replay the
// ext4 journal (what the mount does), copy the broker's log dir out of the image (its top-level
// checkpoints and .kafka_cleanshutdown, and each partition directory), let Kafka's recovery
// (recovery-check.ts: UnifiedLog.create as a starting broker calls it) load it, and read back what
// it kept as a Kafka Fetch would serve it. The batches go to the same ledger checker as a
// consumer's. A state Kafka cannot load (the broker would fail to start or take the log dir
// offline and halt) serves nothing: every acknowledged record of it is unavailable, counted lost.
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import type { PartitionLog } from '../../drivers/types.ts';
import { servedByIdentity } from '../../drivers/kafka/identity.ts';
import { checkLedger } from '../../checker/checker.ts';
import { extractDirs } from '../../disk/crash-states/extract.ts';
import { ledgerAsOf, replayJournal, type CheckStateOptions, type StateCheck } from '../../disk/crash-states/check-state.ts';
import type { KafkaRecoveryChecker, RecoveryCheckAnswer } from './recovery-check.ts';

export interface KafkaStateCheckerOptions {
  checker: KafkaRecoveryChecker;
  /** Topic configs as the trial created the topic (segment sizes, indexes). */
  topicConfig: Record<string, string>;
  /** Called with Kafka's answer for every partition of every state (kept for the report). */
  onAnswer?: (state: string, partition: number, answer: RecoveryCheckAnswer) => void;
}

async function timed<T>(fn: () => Promise<T> | T): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await fn();
  return [v, Math.round((performance.now() - t0) * 10) / 10];
}

export function kafkaStateChecker(k: KafkaStateCheckerOptions): (o: CheckStateOptions) => Promise<StateCheck> {
  return async (o) => {
    const [journalExit, journalMs] = await timed(() => replayJournal(o.image));
    const extractTo = path.join(o.scratch, 'extract');
    const partitions = o.ledger.partitions();
    const partitionDirs = partitions.map((p) => `${o.guestDataDir}/${o.topic}-${p}`);
    const [extracted, extractMs] = await timed(() => extractDirs(o.image, [o.guestDataDir, ...partitionDirs], extractTo));
    // extractDirs puts each directory under its base name: the partitions go back into the log dir.
    const logDir = path.join(extractTo, path.basename(o.guestDataDir));
    mkdirSync(logDir, { recursive: true });
    for (const d of partitionDirs) {
      const from = path.join(extractTo, path.basename(d));
      if (extracted.get(d) !== null && existsSync(from)) renameSync(from, path.join(logDir, path.basename(d)));
    }
    const logs: PartitionLog[] = [];
    const recoveries: StateCheck['recoveries'] = [];
    let recoverMs = 0;
    for (const [i, partition] of partitions.entries()) {
      if (extracted.get(partitionDirs[i]!) === null) continue; // not made yet at this point: serves nothing
      const dumpTo = path.join(o.scratch, `kept-${partition}.bin`);
      const [a, ms] = await timed(() => k.checker.check({ logDir, topic: o.topic, partition, config: k.topicConfig, dumpTo }));
      recoverMs += ms;
      k.onAnswer?.(path.basename(o.scratch), partition, a);
      if (!a.ok || !a.partitionDirFound) continue;
      // A log dir without a valid meta.properties: the broker refuses to start, nothing is served.
      if (a.metaProperties !== undefined && a.metaProperties !== 'ok') continue;
      // Kafka put the (only) log dir into its LogDirFailureChannel: a broker with no online log dir shuts down.
      if (a.logDirOffline) continue;
      const bytes = existsSync(dumpTo) ? readFileSync(dumpTo) : Buffer.alloc(0);
      const served = (o.servedFromStored ?? servedByIdentity)(bytes);
      // A batch Kafka keeps below its recovery point without checking its CRC is served as it is: the checker counts it corrupt.
      logs.push({ partition, batches: served.batches, corrupt: served.corrupt });
      // Kafka's recovery reports the bytes it truncated, not the batches: those stay absent (not measured).
      recoveries.push({
        partition,
        logEndOffset: a.logEndOffset ?? 0,
        ...(a.truncatedBytes !== undefined ? { bytesTruncated: Math.max(0, a.truncatedBytes) } : {}),
      });
    }
    const [report, checkMs] = await timed(() => checkLedger(ledgerAsOf(o.ledger, o.cutMs), logs, { cutMs: o.cutMs }));
    return { report, recoveries, journalExit, noDataDir: logs.length === 0, timings: { journalMs, extractMs, recoverMs, checkMs } };
  };
}
