// Does the load fit the fault disk? A full disk answers KAFKA_STORAGE_ERROR and the trial then
// measures a disk that stopped taking writes, not the fault (harness/runner/full-disk.ts says so
// after the fact). `scenario check` refuses a cell whose estimated volume on one broker's fault
// disk passes what its filesystem holds:
//   bytes/s x load seconds x the replicas each disk holds + the preload + 20 MiB of preallocated
//   indexes per replica, against 85 % of vm.diskMiB (ext4's journal, inode tables and reserve:
//   a 64 MiB disk gives 54.7 MiB of filesystem and refused writes with 1.3 MiB still free).
// bytes/s: a rate-limited load's rate x records per batch x record size on disk; a closed loop's
// is what the target's fault disk takes at most (capabilities.closedLoopDiskMBps, an upper bound).
// Load seconds: to the latest moment of the fault when it stops the load (a cut, a kill), the
// whole warm-up + duration otherwise; a crash-states trial loads closed-loop until its cut.
import { faultsOfCell } from './trial-judgement.ts';
import { cellCluster } from './cell-cluster.ts';
import { capabilitiesOf } from '../targets/registry.ts';
import { wantsFaultDisk } from '../faults/scenario-wants.ts';
import { FAULTS } from '../faults/registry.ts';
import type { ScenarioIssue } from './errors.ts';
import type { SourceFile } from './source.ts';
import { cellTargetKind } from './target-axis.ts';
import type { MatrixCell, Scenario } from '../model/scenario.ts';

/** What a filesystem on a fault disk of N MiB holds for the brokers' data, as a fraction. */
export const USABLE_DISK_FRACTION = 0.85;
/** Kafka and durolab preallocate a segment's .index and .timeindex (10 MiB each) per replica. */
const INDEX_BYTES_PER_REPLICA = 20 * 2 ** 20;
const MiB = 2 ** 20;

/** A RecordBatch v2 of n records: 61 bytes of header, per record ~20 bytes of framing, the 22-byte identity header (harness/drivers/kafka/identity.ts) and the value. */
export function batchBytes(recordsPerBatch: number, recordBytes: number): number {
  return 61 + recordsPerBatch * (recordBytes + 42);
}

export interface DiskVolumeEstimate {
  /** Bytes the load writes to one broker's disk per second, and whether that is a closed loop's bound. */
  bytesPerSec: number;
  closedLoop: boolean;
  loadSec: number;
  replicasPerDisk: number;
  preloadBytes: number;
  totalBytes: number;
  usableBytes: number;
}

/** The estimate for one cell, or null when its brokers have no fault disk. */
export function estimateDiskVolume(s: Scenario, cell: MatrixCell): DiskVolumeEstimate | null {
  const caps = capabilitiesOf(cellTargetKind(cell.params, s.target));
  const onFaultDisk = caps.faultDisk === 'guest' || (caps.faultDisk === 'host' && wantsFaultDisk(s));
  if (!onFaultDisk || caps.closedLoopDiskMBps === undefined) return null;
  const w = s.workload;
  // The entry that stops the load (a cut, a kill); the load runs through the others (a pause, a full disk) to its end.
  const fault = faultsOfCell(s, { ...s.settings, ...cell.params }).find((f) => !FAULTS[f.kind].loadRunsThrough);
  const crashStates = fault?.kind === 'crash-states';
  const lastMoment = fault && 'at' in fault.when ? fault.when.at : fault && 'between' in fault.when ? fault.when.between[1] : null;
  const loadSec = crashStates && lastMoment !== null ? lastMoment : Math.min(w.warmupSec + w.durationSec, lastMoment ?? Infinity);
  // The crash-states trial loads closed-loop whatever the rate (harness/runner/crash-states/trial.ts).
  const closedLoop = w.rate === null || crashStates;
  // The cell's cluster: its partitions and replication.factor settings over the scenario's.
  const c = cellCluster(s.cluster, { ...s.settings, ...cell.params });
  const partitions = c.partitions;
  const share = c.replicationFactor / c.brokers;
  const replicasPerDisk = Math.ceil(partitions * share);
  const bytesPerSec = (closedLoop ? caps.closedLoopDiskMBps * 1e6 : w.rate! * batchBytes(w.recordsPerBatch, w.recordBytes)) * share;
  const preloadBytes = Number(cell.params.preload ?? s.settings.preload ?? 0) * share;
  const totalBytes = bytesPerSec * loadSec + preloadBytes + replicasPerDisk * INDEX_BYTES_PER_REPLICA;
  const usableBytes = (s.vm?.diskMiB ?? 0) * MiB * USABLE_DISK_FRACTION;
  return { bytesPerSec, closedLoop, loadSec, replicasPerDisk, preloadBytes, totalBytes, usableBytes };
}

/** "468 MiB = 80 MB/s (closed-loop bound) x 6.0 s x 1 replica(s) + 20 MiB of indexes" */
export function estimateText(e: DiskVolumeEstimate): string {
  const rate = `${(e.bytesPerSec / 1e6).toFixed(1)} MB/s${e.closedLoop ? " (closed loop: the target's fault disk bound)" : ''}`;
  const preload = e.preloadBytes ? ` + ${Math.round(e.preloadBytes / MiB)} MiB of preload` : '';
  return `${Math.round(e.totalBytes / MiB)} MiB = ${rate} x ${e.loadSec.toFixed(1)} s${preload} + ${Math.round((e.replicasPerDisk * INDEX_BYTES_PER_REPLICA) / MiB)} MiB of indexes (${e.replicasPerDisk} replica(s) per disk)`;
}

/** An issue at vm.diskMiB per cell whose estimated volume passes what its disk holds (the largest first). */
export function checkDiskVolume(src: SourceFile, s: Scenario): ScenarioIssue[] {
  const over = s.matrix
    .map((cell) => ({ cell, e: estimateDiskVolume(s, cell) }))
    .filter((x): x is { cell: MatrixCell; e: DiskVolumeEstimate } => x.e !== null && x.e.totalBytes > x.e.usableBytes)
    .sort((a, b) => b.e.totalBytes - a.e.totalBytes);
  if (over.length === 0) return [];
  const { cell, e } = over[0]!;
  const needMiB = Math.ceil(e.totalBytes / USABLE_DISK_FRACTION / MiB);
  return [
    src.issue(
      ['vm', 'diskMiB'],
      `a fault disk that holds the load: cell ${cell.label} writes an estimated ${estimateText(e)} onto each broker's disk, ` +
        `over the ${Math.round(e.usableBytes / MiB)} MiB its filesystem holds (${Math.round(USABLE_DISK_FRACTION * 100)} %): ` +
        `vm.diskMiB ${needMiB} or more, or a lower workload.rate or duration${over.length > 1 ? ` (${over.length} cells over)` : ''}`,
      String(s.vm?.diskMiB ?? 'no vm.diskMiB'),
    ),
  ];
}
