// The terminal summary: the cell table keeps its columns, and fixed-rate cells get their
// coordinated-omission-corrected percentiles in a second table beside the raw ones.
import { describe, expect, it } from 'vitest';
import { latencyHistogram, makeRun } from '../report/test-fixtures.ts';
import { summaryTable } from './summary-table.ts';

const HEADER = 'cell  records/s  MB/s  p50 µs  p99 µs  p99.9 µs  max µs  errors  acked  lost  incons  dup  ooo  corrupt  flushes  segments';

describe('summaryTable', () => {
  it('closed-loop cells: the cell table only, no corrected latency', () => {
    const run = makeRun([{ id: 'c1', params: { flush: 'never' }, recordsPerSec: 50_000, latency: { medianUs: 500, sigma: 0.5, count: 2000 } }]);
    const text = summaryTable(run);
    expect(text.split('\n')[0].replace(/\s+/g, ' ')).toBe(HEADER.replace(/\s+/g, ' '));
    expect(text).not.toContain('corrected');
  });

  it('fixed-rate cells: raw and corrected p50/p99/p99.9/max side by side, from the cell results', () => {
    const run = makeRun([
      { id: 'c1', params: { flush: 'never' }, recordsPerSec: 50_000, latency: { medianUs: 500, sigma: 0.5, count: 2000 } },
      { id: 'c2', params: { flush: 'per-batch' }, recordsPerSec: 9_000, latency: { medianUs: 2000, sigma: 0.5, count: 2000 } },
    ]);
    // c2 ran at a fixed rate: its corrected summary is a real histogram's, with a stall's tail.
    const corrected = latencyHistogram({ medianUs: 250_000, sigma: 0.8, count: 2000, seed: 5 }).summary;
    run.cells[1].correctedLatencyUs = corrected;
    const lines = summaryTable(run).split('\n');
    expect(lines[0].replace(/\s+/g, ' ')).toBe(HEADER.replace(/\s+/g, ' '));
    const title = lines.findIndex((l) => l.startsWith('coordinated-omission corrected latency'));
    expect(title).toBeGreaterThan(3);
    expect(lines[title + 1].split(/\s{2,}/)).toEqual([
      'fixed-rate cell', 'p50 µs', 'p99 µs', 'p99.9 µs', 'max µs', 'corrected p50 µs', 'corrected p99 µs', 'corrected p99.9 µs', 'corrected max µs',
    ]);
    const row = lines[title + 3].split(/\s{2,}/);
    const n = (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: 0 });
    const raw = run.cells[1].latencyUs;
    expect(row).toEqual(['flush=per-batch', n(raw.p50), n(raw.p99), n(raw.p999), n(raw.max), n(corrected.p50), n(corrected.p99), n(corrected.p999), n(corrected.max)]);
    // Only the fixed-rate cell is listed.
    expect(lines.slice(title).some((l) => l.startsWith('flush=never'))).toBe(false);
  });
});
