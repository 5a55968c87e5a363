import { decodeFromCompressedBase64 } from 'hdr-histogram-js';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../results/types.ts';
import { compileChart, runCharts } from './charts.ts';
import { escapeScriptText } from './inline-libs.ts';
import { findings, main, renderRunReport, writeReportsIndex, writeRunReport } from './index.ts';
import { ninesFromHistogram } from './percentiles.ts';
import { makeRun, powerCutRun, processRun } from './test-fixtures.ts';

let dir: string;
let resultsDir: string;
let reportsDir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'durolab-report-'));
  resultsDir = path.join(dir, 'results');
  reportsDir = path.join(dir, 'reports');
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function saveRun(run: RunResult): Promise<string> {
  const runDir = path.join(resultsDir, run.scenario.name, run.runId);
  await mkdir(runDir, { recursive: true });
  await writeFile(path.join(runDir, 'run.json'), JSON.stringify(run, null, 1));
  return runDir;
}

/** Captures what main() prints, since it reports the written path on stdout. */
async function runMain(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const log = console.log;
  const write = process.stdout.write;
  console.log = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
  process.stdout.write = ((chunk: string) => (lines.push(String(chunk)), true)) as typeof process.stdout.write;
  try {
    const code = await main(argv);
    return { code, out: lines.join('\n') };
  } finally {
    console.log = log;
    process.stdout.write = write;
  }
}

function count(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

describe('renderRunReport', () => {
  it('has every section, one summary row per cell, and the libraries inlined', () => {
    const run = processRun();
    const html = renderRunReport(run);
    for (const id of ['question', 'findings', 'summary', 'charts', 'loss', 'environment']) {
      expect(html).toContain(`<section id="${id}">`);
    }
    const summary = html.slice(html.indexOf('id="summary-table"'), html.indexOf('</table>', html.indexOf('id="summary-table"')));
    expect(count(summary, '<tr class=')).toBe(run.cells.length);
    // One column per parameter key, then the fixed figure columns.
    for (const h of ['io', 'flush', 'acks', 'records/s', 'MB/s', 'p50 µs', 'p99 µs', 'p99.9 µs', 'max µs', 'errors', 'acked', 'acked lost', 'duplicates', 'flushes', 'segments']) {
      expect(summary).toContain(`>${h}</th>`);
    }
    expect(count(html, '<script data-lib=')).toBe(3);
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/<link[^>]+href=/i);
    expect(count(html.toLowerCase(), '<script')).toBe(count(html.toLowerCase(), '</script'));
    expect(html).toContain('id="chart-throughput"');
    expect(html).toContain('id="chart-latency"');
    expect(html).toContain('id="chart-timeseries"');
    // Skipped cell: marked with its note, not charted.
    expect(html).toContain('status-skipped');
    expect(html).toContain('O_DSYNC not supported on tmpfs');
    expect(html).toContain('passed 2/2');
    expect(html).not.toContain('id="status-banner"');
    expect(html).not.toContain('id="tcg-banner"');
  });

  it("names the engine's CRC-32C and write path in the Machine table: whole locally, without local paths when published", () => {
    const run = processRun();
    run.environment.crc32c = 'native: ISA-L 2.30.0 crc32_iscsi alone: this CPU lacks AVX-512 VPCLMULQDQ for the own kernel (N-API addon /home/someone/durolab/dist/crc32c.node)';
    run.environment.pwrite = 'fs.writeSync (fallback: /home/someone/durolab/dist/pwrite.node does not exist (run node scripts/build-native.mjs; it needs a C compiler))';
    const env = (html: string) => html.slice(html.indexOf('id="environment-table"'), html.indexOf('</table>', html.indexOf('id="environment-table"')));
    const local = env(renderRunReport(run));
    expect(local).toContain(
      '<th scope="row">engine CRC-32C</th><td>native: ISA-L 2.30.0 crc32_iscsi alone: this CPU lacks AVX-512 VPCLMULQDQ for the own kernel (N-API addon /home/someone/durolab/dist/crc32c.node)</td>',
    );
    expect(local).toContain('<th scope="row">engine write path</th><td>fs.writeSync (fallback: /home/someone');
    const published = env(renderRunReport(run, { publish: true }));
    expect(published).toContain('<th scope="row">engine CRC-32C</th><td>native</td>');
    expect(published).toContain('<th scope="row">engine write path</th><td>fs.writeSync (fallback)</td>');
    expect(published).not.toContain('/home/someone');
    // Runs from before these were recorded show neither row.
    expect(env(renderRunReport(processRun()))).not.toContain('engine CRC-32C');
    expect(env(renderRunReport(processRun()))).not.toContain('freed memory');
    run.environment.memoryReturn = 'virtio-balloon free page reporting (virtio0, blocks of 2 MiB and up): freed memory goes back to the host';
    expect(env(renderRunReport(run))).toContain('<th scope="row">freed memory</th><td>virtio-balloon free page reporting (virtio0, blocks of 2 MiB and up)');
  });

  it('keeps hostile text inert: a </script> in a cell id or the question cannot end a script element', () => {
    const run = processRun();
    run.scenario.question = 'Does </script><script>alert(1)</script> <!-- survive?';
    run.cells[0].id = '</script><b>x</b>';
    const html = renderRunReport(run);
    expect(count(html.toLowerCase(), '<script')).toBe(count(html.toLowerCase(), '</script'));
    expect(html).toContain('Does &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &lt;!-- survive?');
    expect(html).toContain('\\u003c/script>\\u003cb>x\\u003c/b>');
    expect(escapeScriptText('a="</SCRIPT>"; b="<!--"')).toBe('a="<\\/SCRIPT>"; b="<\\!--"');
  });

  it('marks an incomplete VM run, failed cells, trials and TCG', () => {
    const run = powerCutRun();
    const html = renderRunReport(run);
    expect(html).toContain('id="status-banner"');
    expect(html).toContain('INCOMPLETE RUN');
    expect(html).toContain('id="tcg-banner"');
    expect(html).toContain('not comparable');
    expect(html).toContain('VM did not boot within 120 s');
    expect(html).toContain('FAILED 1 of 1');
    const loss = html.slice(html.indexOf('id="loss-table"'));
    expect(count(loss.slice(0, loss.indexOf('</table>')), 'class="trial-row"')).toBe(6);
    expect(loss).toContain('trial 2 · power-cut of broker 0 at 8.1 s');
    expect(loss).toContain('82.0 MiB / 4.1 MiB'); // 21,000 / 1,050 guest pages before the first cut
  });

  it('renders runs with nothing to chart: no cells, all skipped, no probe samples', () => {
    const empty = makeRun([], { status: 'failed', expectations: [] });
    const html = renderRunReport(empty);
    expect(html).toContain('No cell has figures to chart.');
    expect(html).toContain('FAILED RUN');
    expect(html).toContain('no expectations');
    expect(findings(empty)).toEqual([
      'This run failed: 0 of 0 cells finished; everything below covers only what was recorded.',
      'No record was acknowledged in any cell, so there is no loss to measure.',
    ]);
    const bare = makeRun([{ id: 'a', params: {}, recordsPerSec: 10, latency: { medianUs: 100, sigma: 0.1, count: 3 }, seconds: 3 }]);
    for (const p of bare.cells[0].timeseries) {
      p.p99Us = null;
      delete p.nrDirty;
      delete p.nrWriteback;
      delete p.writesPerSec;
      delete p.flushesPerSec;
      delete p.writeKBPerSec;
    }
    const series = runCharts(bare).find((c) => c.id === 'chart-timeseries')!;
    expect(series.notes).toEqual(['No samples for: p99 µs (log), page cache MiB, disk ops/s, disk write MB/s, disk read MB/s, page cache misses /s.']);
    expect(compileChart(series).warnings).toEqual([]);
  });

  it('compiles every chart to Vega without warnings', () => {
    for (const run of [processRun(), powerCutRun()]) {
      const charts = runCharts(run);
      expect(charts.map((c) => c.id)).toEqual(['chart-throughput', 'chart-latency', 'chart-timeseries']);
      for (const chart of charts) expect(compileChart(chart).warnings, chart.id).toEqual([]);
    }
  });

  it('fails the build, naming the chart, when a spec is bad', () => {
    const [chart] = runCharts(processRun());
    const bad = { ...chart, spec: { ...chart.spec, hconcat: [{ mark: 'bar', encoding: { x: { field: 'a', type: 'nonsense' } } }] } as unknown as typeof chart.spec };
    expect(() => compileChart(bad)).toThrow(/chart 'chart-throughput' does not compile/);
  });
});

describe('percentile curves', () => {
  it('samples the decoded histogram on the nines axis up to its max', () => {
    const cell = processRun().cells[1];
    const curve = ninesFromHistogram(cell.histograms.latencyUs, cell.latencyUs);
    expect(curve.source).toBe('histogram');
    expect(curve.count).toBe(40_000);
    expect(curve.points[0].x).toBe(1);
    const h = decodeFromCompressedBase64(cell.histograms.latencyUs);
    const at = (x: number) => curve.points.find((p) => Math.abs(p.x - x) < 1e-9)!;
    expect(at(2).us).toBe(h.getValueAtPercentile(50));
    expect(at(1024).us).toBe(h.getValueAtPercentile(100 * (1 - 1 / 1024)));
    expect(at(1024).us).toBeGreaterThan(cell.latencyUs.p99);
    expect(curve.points[curve.points.length - 1].us).toBe(cell.latencyUs.max);
    // Stops where one sample is the whole tail: x never passes count by more than one step.
    expect(Math.max(...curve.points.map((p) => p.x))).toBeLessThan(40_000 * 1.08);
    for (let i = 1; i < curve.points.length; i++) expect(curve.points[i].us).toBeGreaterThanOrEqual(curve.points[i - 1].us);
    h.destroy();
  });

  it('falls back to the stored percentiles when the histogram is missing or corrupt, and says so', () => {
    const cell = processRun().cells[0];
    const missing = ninesFromHistogram('', cell.latencyUs);
    expect(missing.source).toBe('summary');
    expect(missing.points.map((p) => p.us)).toEqual([cell.latencyUs.p50, cell.latencyUs.p90, cell.latencyUs.p99, cell.latencyUs.p999, cell.latencyUs.p9999, cell.latencyUs.max]);
    const corrupt = ninesFromHistogram('bm90IGEgaGlzdG9ncmFt', cell.latencyUs);
    expect(corrupt.source).toBe('summary');
    expect(corrupt.problem).toMatch(/did not decode|empty/);
    const run = processRun();
    run.cells[2].histograms.latencyUs = '';
    const latency = runCharts(run).find((c) => c.id === 'chart-latency')!;
    expect(latency.notes.join(' ')).toContain('O_DIRECT (measured): no histogram stored');
  });
});

describe('findings', () => {
  function knownRun(): RunResult {
    const run = makeRun([
      { id: 'buffered', params: { flush: 'never' }, recordsPerSec: 100_000, latency: { medianUs: 50, sigma: 0.3, count: 2_000 } },
      { id: 'fdatasync per batch', params: { flush: 'per-batch' }, recordsPerSec: 25_000, latency: { medianUs: 150, sigma: 0.3, count: 2_000 }, flushesPerSec: 2_500 },
      { id: 'fsync every 1000', params: { flush: 1000 }, recordsPerSec: 80_000, latency: { medianUs: 60, sigma: 0.3, count: 2_000 }, ackedLost: 120 },
    ]);
    run.cells[0].latencyUs.p99 = 100;
    run.cells[1].latencyUs.p99 = 340;
    run.cells[2].latencyUs.p99 = 125;
    return run;
  }

  it('states ratios against the first cell, the fastest and slowest, and the most loss', () => {
    const f = findings(knownRun());
    expect(f).toContain('fdatasync per batch: 0.25x the throughput and 3.4x the p99 of buffered, 0 acked records lost.');
    expect(f).toContain('fsync every 1000: 0.8x the throughput and 1.3x the p99 of buffered, 120 acked records lost.');
    expect(f).toContain('Fastest: buffered at 100,000 records/s (102 MB/s); slowest: fdatasync per batch at 25,000 records/s, 4.0x slower.');
    expect(f).toContain('Lowest p99: buffered at 100 µs; highest: fdatasync per batch at 340 µs (3.4x); worst max ' + `${Math.max(...knownRun().cells.map((c) => c.latencyUs.max)).toLocaleString('en-US')} µs.`);
    expect(f).toContain('Most loss: fsync every 1000 lost 120 of 2,400,000 acknowledged records (<0.01%).');
    expect(f).toContain('No acknowledged loss: buffered, fdatasync per batch.');
    expect(f.find((s) => s.startsWith('Slowest flushes:'))).toBe(
      'Slowest flushes: fdatasync per batch, p99 430 µs, max 2,100 µs over 75,000 flushes (10 acknowledged records per flush).',
    );
    expect(f.some((s) => /TCG|incomplete/.test(s))).toBe(false);
  });

  it('moves the baseline to the first measured cell when the first cell was skipped', () => {
    const run = knownRun();
    run.cells[0].status = 'skipped';
    run.cells[0].note = 'no O_DIRECT on tmpfs';
    const f = findings(run);
    expect(f).toContain('Not measured: buffered (skipped: no O_DIRECT on tmpfs).');
    expect(f).toContain('Ratios below are against fdatasync per batch (the first measured cell, since buffered was skipped).');
    expect(f).toContain('fsync every 1000: 3.2x the throughput and 0.37x the p99 of fdatasync per batch, 120 acked records lost.');
  });

  it('finds the writeback stall in the time series', () => {
    const f = findings(processRun());
    const stall = f.find((s) => s.includes('stalled'));
    expect(stall).toMatch(/^buffered, flush never stalled for 3 seconds \(under 10% of its median [\d,]+ records\/s\) between t=14 and 16 s, with nr_writeback up to [\d.]+ MiB/);
  });

  it('reports trials, loss windows, incomplete runs and TCG', () => {
    const f = findings(powerCutRun());
    expect(f[0]).toBe('This run is incomplete: 2 of 3 cells finished and it has no end time; everything below covers only what was recorded.');
    expect(f).toContain(
      'Most loss: vm buffered acks=1 lost 5,900 of 120,500 acknowledged records (4.9%); 2 of 3 trials lost data, the worst 3,100 records, acknowledged up to 4.2 s before the cut.',
    );
    expect(f.find((s) => s.includes('TCG'))).toContain('not comparable to the process target');
  });

  it('says so when nothing was lost and no fault was injected', () => {
    const run = knownRun();
    run.cells[2].ledger.ackedLost = 0;
    expect(findings(run)).toContain('No acknowledged record was lost in any cell (6,150,000 acknowledged, no fault injected).');
  });
});

describe('writing reports and the index', () => {
  it('writes the run page atomically and lists every run newest first, unreadable ones included', async () => {
    const older = processRun();
    const newer = powerCutRun();
    await saveRun(older);
    await saveRun(newer);
    const broken = path.join(resultsDir, 'io-modes', 'broken-run');
    await mkdir(broken, { recursive: true });
    await writeFile(path.join(broken, 'run.json'), '{"schemaVersion": 1, "cells": [');

    const file = await writeRunReport(older, { resultsDir, reportsDir });
    expect(file).toBe(path.join(reportsDir, 'io-modes', older.runId, 'index.html'));
    expect((await readFile(file, 'utf8')).startsWith('<!doctype html>')).toBe(true);
    expect((await readdir(path.dirname(file))).filter((n) => n.includes('.tmp-'))).toEqual([]);

    const index = await readFile(path.join(reportsDir, 'index.html'), 'utf8');
    const rows = index.slice(index.indexOf('<tbody>'), index.indexOf('</tbody>')).split('<tr').slice(1);
    expect(rows).toHaveLength(3);
    // Newest first: the power-cut run started a day later; the broken file sorts by mtime (now).
    expect(rows[0]).toContain('unreadable');
    expect(rows[0]).toContain('is not valid JSON');
    expect(rows[1]).toContain(newer.runId);
    expect(rows[1]).toContain('not rendered');
    expect(rows[1]).toContain('FAILED 1 of 1');
    expect(rows[2]).toContain(`href="io-modes/${older.runId}/index.html"`);
    expect(rows[2]).toContain('passed 2/2');

    await rm(broken, { recursive: true });
    const again = await writeReportsIndex({ resultsDir, reportsDir });
    expect(count(await readFile(again, 'utf8'), '<tr data-run=')).toBe(2);
  });

  it('refuses a run whose id cannot be a folder name', async () => {
    const run = processRun();
    run.runId = '../escape';
    await expect(writeRunReport(run, { resultsDir, reportsDir })).rejects.toThrow(/runId '..\/escape' cannot be used as a folder name/);
  });
});

describe('durolab report (main)', () => {
  it('prints help', async () => {
    const { code, out } = await runMain(['--help']);
    expect(code).toBe(0);
    expect(out).toContain('usage: durolab report [run]');
  });

  it('renders a scenario\'s latest run, a run directory, a run.json, and the latest of all', async () => {
    const a = makeRun([{ id: 'only', params: { x: 1 }, recordsPerSec: 1000, latency: { medianUs: 100, sigma: 0.2, count: 500 } }], {
      runId: 'r1',
      startedAt: '2025-03-01T00:00:00.000Z',
      scenario: { name: 'cli-test', file: 'scenarios/cli-test.yaml', question: 'q', raw: {} },
    });
    const b = { ...a, runId: 'r2', startedAt: '2025-03-02T00:00:00.000Z' };
    const dirA = await saveRun(a);
    await saveRun(b);
    const flags = ['--results-dir', resultsDir, '--reports-dir', reportsDir];

    let r = await runMain(['cli-test', ...flags]);
    expect(r.code).toBe(0);
    expect(r.out.trim()).toBe(path.join(reportsDir, 'cli-test', 'r2', 'index.html'));

    r = await runMain([dirA, ...flags]);
    expect(r.out.trim()).toBe(path.join(reportsDir, 'cli-test', 'r1', 'index.html'));

    r = await runMain([path.join(dirA, 'run.json'), ...flags]);
    expect(r.out.trim()).toBe(path.join(reportsDir, 'cli-test', 'r1', 'index.html'));

    r = await runMain(['cli-test/r1', ...flags]);
    expect(r.out.trim()).toBe(path.join(reportsDir, 'cli-test', 'r1', 'index.html'));

    // The latest run of any scenario: r2 (March) is newer than the fixtures from January.
    r = await runMain(flags);
    expect(r.out.trim()).toBe(path.join(reportsDir, 'cli-test', 'r2', 'index.html'));
  });

  it('names the path when there is no run, bad JSON, or not a run', async () => {
    const flags = ['--results-dir', resultsDir, '--reports-dir', reportsDir];
    const missing = path.join(dir, 'nowhere');
    await expect(main([missing, ...flags])).rejects.toThrow(`no run.json found for '${missing}'`);
    await expect(main(['--results-dir', path.join(dir, 'empty-results')])).rejects.toThrow(/no run\.json found in .*empty-results/);

    const badJson = path.join(dir, 'bad', 'run.json');
    await mkdir(path.dirname(badJson), { recursive: true });
    await writeFile(badJson, 'not json');
    await expect(main([badJson, ...flags])).rejects.toThrow(`${badJson} is not valid JSON`);

    const notRun = path.join(dir, 'notrun', 'run.json');
    await mkdir(path.dirname(notRun), { recursive: true });
    const run = processRun() as unknown as { cells: Array<{ latencyUs: unknown }> };
    run.cells[1].latencyUs = { p50: 'fast' };
    await writeFile(notRun, JSON.stringify(run));
    await expect(main([notRun, ...flags])).rejects.toThrow(`${notRun} is not a durolab run result`);
    await expect(main([notRun, ...flags])).rejects.toThrow(/cells\.1\.latencyUs\.p50/);
  });
});
