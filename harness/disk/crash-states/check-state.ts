// Checking one crash-state image on the host, as the guest would see it after the power came
// back: replay the ext4 journal (`e2fsck -E journal_only -y`, what the guest's mount does),
// copy each partition directory out (extract.ts: debugfs lists, pread copies, sparse kept), open every partition with the
// engine's own Log.open (the recovery the broker runs at start), read every batch the log then
// holds, and hand them to the checker with the acknowledgements made before the crash point.
import { execa } from 'execa';
import path from 'node:path';
import { Log } from '../../../engine/storage/index.ts';
import type { LogConfig, RecoveryReport } from '../../../engine/storage/index.ts';
import { splitBatches } from '../../drivers/record-batches.ts';
import type { PartitionLog } from '../../drivers/types.ts';
import { checkLedger, type CheckReport } from '../../checker/checker.ts';
import { AckLedger } from '../../history/ledger.ts';
import { extractDirs } from './extract.ts';
import { requireExecutable } from '../../vm/prerequisites.ts';

/**
 * The ledger as it stood at `cutMs` (host clock ms, a crash point's time from the write log):
 * acknowledgements after it are pending again. Ack times are whole milliseconds of Date.now()
 * (the true instant is up to 1 ms later; Date.now() and the host clock agree to that rounding
 * unless the wall clock was stepped, which trial.ts refuses: engine/common/clock.ts), so an ack
 * counts as before the cut only when its millisecond ended by then: never a false loss from rounding.
 */
export function ledgerAsOf(ledger: AckLedger, cutMs: number): AckLedger {
  const partitions = ledger.partitions();
  const pid0 = ledger.producerIdOf(partitions[0] ?? 0) - (partitions[0] ?? 0);
  const out = new AckLedger({ recordsPerBatch: ledger.recordsPerBatch, producerIdBase: pid0, partitions });
  for (const p of partitions) {
    if (out.producerIdOf(p) !== ledger.producerIdOf(p)) throw new Error(`ledgerAsOf: partition ${p}'s producer id does not follow producerIdBase + partition`);
    for (const b of ledger.batches(p)) {
      if (b.sentMs > cutMs) break; // sent in order: nothing later was sent before the cut
      const seq = out.send(p, b.sentMs);
      if (b.status === 'acked' && b.ackMs + 1 <= cutMs) out.ack(p, seq, b.baseOffset, b.ackMs, b.recordOffsets);
    }
  }
  return out;
}

export interface StateTimings {
  journalMs: number;
  extractMs: number;
  recoverMs: number;
  checkMs: number;
}

export interface StateCheck {
  report: CheckReport;
  /** Per partition the recovery read: its log end and what it reports truncating (absent: that recovery does not report it, as Kafka's gives no batch count). */
  recoveries: Array<{ partition: number; logEndOffset: number; bytesTruncated?: number; batchesTruncated?: number }>;
  /** e2fsck's exit code (0 clean, 1 fixed: the replay itself counts); 0 for a booted state (its mount replayed the journal: harness/runner/crash-states/boot-check.ts). */
  journalExit: number;
  /** No partition directory existed in this state (the crash came before the broker made them). */
  noDataDir: boolean;
  timings: StateTimings;
}

export interface CheckStateOptions {
  image: string;
  /** Scratch directory for this state (the extracted files); removed by the caller. */
  scratch: string;
  /** The broker's data dir as the guest sees it (e.g. /data/broker-1). */
  guestDataDir: string;
  topic: string;
  ledger: AckLedger;
  /** Host clock ms of the crash point. */
  cutMs: number;
  logConfig: Partial<LogConfig>;
  /** Reads stored batches as the trial's driver identifies them (ClientDriver.servedFromStored); default the HTTP driver's (batch producer ids). */
  servedFromStored?: StoredBatchReader;
}

export type StoredBatchReader = (bytes: Buffer) => { batches: PartitionLog['batches']; corrupt: number };

const batchIdentity: StoredBatchReader = (bytes) => {
  const split = splitBatches(bytes);
  return { batches: split.batches, corrupt: split.corrupt };
};

async function timed<T>(fn: () => Promise<T> | T): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await fn();
  return [v, Math.round((performance.now() - t0) * 10) / 10];
}

/** Replays the journal of `image` in place (the image is a per-state copy). */
export async function replayJournal(image: string): Promise<number> {
  const r = await execa(requireExecutable('e2fsck'), ['-E', 'journal_only', '-y', image], { reject: false, all: true });
  if (r.exitCode === undefined || r.exitCode >= 4) throw new Error(`e2fsck -E journal_only -y ${image} failed (exit ${r.exitCode}): ${(r.all ?? '').trim().slice(0, 500)}`);
  return r.exitCode;
}

/** Opens a partition dir as the broker does at start (recovery), reads every batch, closes it. */
export function recoverAndRead(
  dir: string,
  partition: number,
  logConfig: Partial<LogConfig>,
  read: StoredBatchReader = batchIdentity,
): { log: PartitionLog; recovery: RecoveryReport; logEndOffset: number } {
  // Reading needs no O_DIRECT (the extracted copy may sit on tmpfs): recovery is the same.
  const log = Log.open(dir, { ...logConfig, io: 'buffered', flush: { kind: 'never' } });
  try {
    const batches: PartitionLog['batches'] = [];
    let corrupt = 0;
    let offset = log.logStartOffset;
    while (offset < log.logEndOffset) {
      const r = log.read(offset, 8 << 20);
      if (r.data.length === 0) break;
      const split = read(r.data);
      batches.push(...split.batches);
      corrupt += split.corrupt;
      if (r.nextOffset <= offset) break;
      offset = r.nextOffset;
    }
    return { log: { partition, batches, corrupt }, recovery: log.recovery, logEndOffset: log.logEndOffset };
  } finally {
    log.abandon();
  }
}

/** Journal replay, extraction, recovery and the check of one crash-state image. */
export async function checkState(o: CheckStateOptions): Promise<StateCheck> {
  const [journalExit, journalMs] = await timed(() => replayJournal(o.image));
  const extractTo = path.join(o.scratch, 'extract');
  const partitions = o.ledger.partitions();
  const guestDirs = partitions.map((p) => `${o.guestDataDir}/${o.topic}-${p}`);
  const [extracted, extractMs] = await timed(() => extractDirs(o.image, guestDirs, extractTo));
  const logs: PartitionLog[] = [];
  const recoveries: StateCheck['recoveries'] = [];
  const [, recoverMs] = await timed(() => {
    partitions.forEach((partition, i) => {
      if (extracted.get(guestDirs[i]!) === null) return; // not made yet at this point: serves nothing
      const r = recoverAndRead(path.join(extractTo, path.basename(guestDirs[i]!)), partition, o.logConfig, o.servedFromStored);
      logs.push(r.log);
      recoveries.push({ partition, logEndOffset: r.logEndOffset, bytesTruncated: r.recovery.bytesTruncated, batchesTruncated: r.recovery.batchesTruncated });
    });
  });
  const found = logs.length > 0;
  // A partition the ledger knows but the state lacks serves nothing (every ack before the cut is lost).
  const [report, checkMs] = await timed(() => checkLedger(ledgerAsOf(o.ledger, o.cutMs), logs, { cutMs: o.cutMs }));
  return { report, recoveries, journalExit, noDataDir: !found, timings: { journalMs, extractMs, recoverMs, checkMs } };
}
