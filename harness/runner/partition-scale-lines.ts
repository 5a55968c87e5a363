// What many partitions cost (a `partitions` matrix axis, scenarios/partitions-scale.yaml): per
// cell, the broker processes' open descriptors and resident memory after the load, the files on
// disk, the device's flushes per second, records/s and p99; and per partition, the memory and
// descriptors above the same target's and settings' cell with the fewest partitions (so what a
// broker holds with none is not counted).
import type { CellResult, RunResult } from '../results/types.ts';
import { renderTable } from '../../engine/common/text-table.ts';

const int = (n: number) => Math.round(n).toLocaleString('en-US');

export interface PartitionScaleRow {
  cell: string;
  partitions: number;
  fds: number | null;
  rssBytes: number | null;
  files: number | null;
  deviceFlushesPerSec: number | null;
  /** null: no repetition finished its load (not measured). */
  recordsPerSec: number | null;
  p99Us: number | null;
  /** Above the group's cell with the fewest partitions, per partition added (null for that cell itself). */
  perPartition: { rssBytes: number; fds: number } | null;
}

function footprint(c: CellResult): { fds: number; rssBytes: number } | null {
  const ps = c.brokerProcesses ?? [];
  return ps.length ? { fds: ps.reduce((a, p) => a + p.fds, 0), rssBytes: ps.reduce((a, p) => a + p.rssBytes, 0) } : null;
}

/** Rows of the cells with a partitions setting, grouped by everything else in their params. */
export function partitionScaleRows(run: RunResult): PartitionScaleRow[] {
  const cells = run.cells.filter((c) => typeof c.params.partitions === 'number' && c.status !== 'skipped');
  const groupOf = (c: CellResult) => JSON.stringify(Object.entries(c.params).filter(([k]) => k !== 'partitions').sort());
  const durationSec = (run.settings.workload as { durationSec?: number } | undefined)?.durationSec ?? 0;
  return cells.map((c) => {
    const fp = footprint(c);
    const base = cells.filter((x) => groupOf(x) === groupOf(c)).sort((a, b) => Number(a.params.partitions) - Number(b.params.partitions))[0]!;
    const bfp = footprint(base);
    const added = Number(c.params.partitions) - Number(base.params.partitions);
    return {
      cell: c.id,
      partitions: Number(c.params.partitions),
      fds: fp?.fds ?? null,
      rssBytes: fp?.rssBytes ?? null,
      files: c.broker.segments === undefined ? null : c.broker.segments + (c.broker.indexFiles ?? 0),
      deviceFlushesPerSec: typeof c.broker.deviceFlushes === 'number' && durationSec > 0 ? c.broker.deviceFlushes / durationSec : null,
      recordsPerSec: c.throughput?.recordsPerSec ?? null,
      p99Us: c.latencyUs.count > 0 ? c.latencyUs.p99 : null,
      perPartition: fp && bfp && added > 0 ? { rssBytes: (fp.rssBytes - bfp.rssBytes) / added, fds: (fp.fds - bfp.fds) / added } : null,
    };
  });
}

/** The terminal's table; '' without a partitions axis. */
export function partitionScaleSummary(run: RunResult): string {
  const rows = partitionScaleRows(run);
  if (rows.length === 0) return '';
  const body = rows.map((r) => [
    r.cell,
    int(r.partitions),
    r.fds === null ? '-' : int(r.fds),
    r.rssBytes === null ? '-' : (r.rssBytes / 2 ** 20).toFixed(0),
    r.perPartition ? (r.perPartition.rssBytes / 1024).toFixed(1) : '-',
    r.perPartition ? r.perPartition.fds.toFixed(2) : '-',
    r.files === null ? '-' : int(r.files),
    r.deviceFlushesPerSec === null ? '-' : int(r.deviceFlushesPerSec),
    r.recordsPerSec === null ? '-' : int(r.recordsPerSec),
    r.p99Us === null ? '-' : int(r.p99Us),
  ]);
  return [
    'partitions (broker processes after the load, first repetition; per partition: above the same target and settings with the fewest partitions):',
    renderTable(['cell', 'partitions', 'open fds', 'RSS MiB', 'RSS KiB/partition', 'fds/partition', 'files', 'device flushes/s', 'records/s', 'p99 µs'], body, (i) => i > 0),
  ].join('\n');
}
