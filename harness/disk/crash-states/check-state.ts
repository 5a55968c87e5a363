// Checking one crash-state image on the host, as the guest would see it after the power came
// back: replay the ext4 journal (`e2fsck -E journal_only -y`, what the guest's mount does),
// extract the broker's data directory (`debugfs -R rdump`), open every partition with the
// engine's own Log.open (the recovery the broker runs at start), read every batch the log then
// holds, and hand them to the checker with the acknowledgements made before the crash point.
import { execa } from 'execa';
import { existsSync, readdirSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Log } from '../../../engine/storage/index.ts';
import type { LogConfig, RecoveryReport } from '../../../engine/storage/index.ts';
import { splitBatches } from '../../drivers/record-batches.ts';
import type { PartitionLog } from '../../drivers/types.ts';
import { checkLedger, type CheckReport } from '../../checker/checker.ts';
import { AckLedger } from '../../workload/ledger.ts';
import { pathOnDisk } from '../../vm/inspect.ts';
import { requireExecutable } from '../../vm/prerequisites.ts';

/** The partition directories of a topic in a broker's data dir: `<topic>-<partition>`. */
const partitionDirRe = (topic: string) => new RegExp(`^${topic.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-(\\d+)$`);

/**
 * The ledger as it stood at `cutMs`: acknowledgements after it are pending again. Ack times are
 * whole milliseconds of Date.now() (the true instant is up to 1 ms later), so an ack counts as
 * before the cut only when its millisecond ended by then: never a false loss from rounding.
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
      if (b.status === 'acked' && b.ackMs + 1 <= cutMs) out.ack(p, seq, b.baseOffset, b.ackMs);
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
  recoveries: Array<{ partition: number; recovery: RecoveryReport | null; logEndOffset: number }>;
  /** e2fsck's exit code (0 clean, 1 fixed: the replay itself counts). */
  journalExit: number;
  /** The broker's data directory did not exist in this state (the crash came before it was made). */
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
}

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

/** debugfs rdump of one directory into `dest`; false when the directory does not exist in the image. */
export async function extractDir(image: string, guestDir: string, dest: string): Promise<boolean> {
  const onDisk = pathOnDisk(guestDir);
  await fs.mkdir(dest, { recursive: true });
  const r = await execa(requireExecutable('debugfs'), ['-R', `rdump "${onDisk}" "${dest}"`, image], { reject: false });
  const errs = r.stderr.split('\n').filter((l) => l && !/^debugfs \d/.test(l));
  if (errs.some((l) => /File not found/i.test(l))) return false;
  if (r.exitCode !== 0 || errs.length > 0) throw new Error(`debugfs -R 'rdump ${onDisk}' ${image} failed (exit ${r.exitCode}): ${errs.join('; ').slice(0, 500)}`);
  return existsSync(path.join(dest, path.basename(onDisk)));
}

/** Opens a partition dir as the broker does at start (recovery), reads every batch, closes it. */
export function recoverAndRead(dir: string, partition: number, logConfig: Partial<LogConfig>): { log: PartitionLog; recovery: RecoveryReport; logEndOffset: number } {
  // Reading needs no O_DIRECT (the extracted copy may sit on tmpfs): recovery is the same.
  const log = Log.open(dir, { ...logConfig, io: 'buffered', flush: { kind: 'never' } });
  try {
    const batches: PartitionLog['batches'] = [];
    let corrupt = 0;
    let offset = log.logStartOffset;
    while (offset < log.logEndOffset) {
      const r = log.read(offset, 8 << 20);
      if (r.data.length === 0) break;
      const split = splitBatches(r.data);
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
  const [found, extractMs] = await timed(() => extractDir(o.image, o.guestDataDir, extractTo));
  const logs: PartitionLog[] = [];
  const recoveries: StateCheck['recoveries'] = [];
  const [, recoverMs] = await timed(() => {
    if (!found) return;
    const brokerDir = path.join(extractTo, path.basename(pathOnDisk(o.guestDataDir)));
    const re = partitionDirRe(o.topic);
    for (const name of readdirSync(brokerDir).sort()) {
      const m = re.exec(name);
      if (!m || !statSync(path.join(brokerDir, name)).isDirectory()) continue;
      const partition = Number(m[1]);
      const r = recoverAndRead(path.join(brokerDir, name), partition, o.logConfig);
      logs.push(r.log);
      recoveries.push({ partition, recovery: r.recovery, logEndOffset: r.logEndOffset });
    }
  });
  // A partition the ledger knows but the state lacks serves nothing (every ack before the cut is lost).
  const [report, checkMs] = await timed(() => checkLedger(ledgerAsOf(o.ledger, o.cutMs), logs, { cutMs: o.cutMs }));
  return { report, recoveries, journalExit, noDataDir: !found, timings: { journalMs, extractMs, recoverMs, checkMs } };
}
