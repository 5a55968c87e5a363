// The partitions table: per cell the brokers' descriptors and memory, and per partition the
// growth over the same target's and settings' cell with the fewest partitions (not another
// target's, not another flush policy's).
import { describe, expect, it } from 'vitest';
import { makeRun } from '../report/test-fixtures.ts';
import { partitionScaleRows, partitionScaleSummary } from './partition-scale-lines.ts';

const latency = { medianUs: 500, sigma: 0.5, count: 1000 };

describe('partitions table', () => {
  it('gives memory and descriptors per partition over the smallest cell of the same group', () => {
    const run = makeRun([
      { id: 'target=durolab,partitions=1', params: { target: 'durolab', partitions: 1 }, recordsPerSec: 1600, latency },
      { id: 'target=durolab,partitions=1001', params: { target: 'durolab', partitions: 1001 }, recordsPerSec: 1600, latency },
      { id: 'target=kafka,partitions=1', params: { target: 'kafka', partitions: 1 }, recordsPerSec: 1600, latency },
      { id: 'target=kafka,partitions=1001', params: { target: 'kafka', partitions: 1001 }, recordsPerSec: 1600, latency },
      { id: 'no-axis', params: { target: 'kafka' }, recordsPerSec: 1600, latency },
    ]);
    const fp = (fds: number, mib: number) => [{ pid: 1, fds, rssBytes: mib * 2 ** 20 }];
    run.cells[0]!.brokerProcesses = fp(23, 150);
    run.cells[1]!.brokerProcesses = fp(1023, 200);
    run.cells[2]!.brokerProcesses = fp(101, 330);
    run.cells[3]!.brokerProcesses = fp(401, 430);
    const rows = partitionScaleRows(run);
    expect(rows.map((r) => r.cell)).toEqual(['target=durolab,partitions=1', 'target=durolab,partitions=1001', 'target=kafka,partitions=1', 'target=kafka,partitions=1001']);
    expect(rows[0]!.perPartition).toBeNull();
    expect(rows[1]!.perPartition).toEqual({ rssBytes: (50 * 2 ** 20) / 1000, fds: 1 });
    expect(rows[3]!.perPartition).toEqual({ rssBytes: (100 * 2 ** 20) / 1000, fds: 0.3 });
    const text = partitionScaleSummary(run);
    expect(text).toMatch(/target=durolab,partitions=1001\s+1,001\s+1,023\s+200\s+51\.2\s+1\.00/);
    expect(partitionScaleSummary(makeRun([{ id: 'a', params: { flush: 'never' }, recordsPerSec: 1, latency }]))).toBe('');
  });
});
