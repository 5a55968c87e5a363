// The published site end to end: real short runs through the CLI bundle (io-modes twice with
// 2 repetitions, acks-all once) plus a fixture power-cut run, `durolab compare` of the two
// io-modes runs, `durolab publish`, then every page in headless Chromium: every link resolves
// inside the site, every chart has marks, no console errors, no network requests; and no
// published file carries the checkout path, the results path or the host name.

import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, marksPerChart, openPage } from '../report/browser-helpers.ts';
import { powerCutRun } from '../report/test-fixtures.ts';
import type { RunResult } from '../results/types.ts';
import { difference } from '../compare/compare.ts';
import { cellFigure } from '../results/figures.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'bin/durolab.mjs');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-site-test-'));
const results = path.join(work, 'results');
const site = path.join(work, 'site');
let context: Awaited<ReturnType<typeof launchChromium>>;
const ioRuns: RunResult[] = [];
let acksAllStdout = '';

async function durolab(args: string[], timeout = 240_000) {
  const r = await execa(process.execPath, [cli, ...args], { reject: false, timeout, cwd: work });
  if (r.exitCode !== 0) throw new Error(`durolab ${args.join(' ')} exited ${r.exitCode}:\n${r.stderr}\n${r.stdout.slice(-3000)}`);
  return r;
}

function runsOf(scenario: string): RunResult[] {
  const dir = path.join(results, scenario);
  return readdirSync(dir)
    .filter((d) => d !== 'latest')
    .sort()
    .map((d) => JSON.parse(readFileSync(path.join(dir, d, 'run.json'), 'utf8')) as RunResult);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => statSync(path.join(dir, f)).isFile());
}

beforeAll(async () => {
  for (let i = 0; i < 2; i++) await durolab(['bench', 'io-modes', '--duration', '2', '--repeat', '2', '--no-report', '--results-dir', results]);
  // --summary json: stdout carries only the summary (progress goes to stderr).
  acksAllStdout = (await durolab(['bench', 'acks-all', '--duration', '2', '--repeat', '1', '--no-report', '--summary', 'json', '--results-dir', results])).stdout;
  // A VM power-cut run would need QEMU; its run.json shape comes from the report fixtures.
  const pc = powerCutRun();
  mkdirSync(path.join(results, pc.scenario.name, pc.runId), { recursive: true });
  writeFileSync(path.join(results, pc.scenario.name, pc.runId, 'run.json'), JSON.stringify(pc));
  ioRuns.push(...runsOf('io-modes'));
  context = await launchChromium(path.join(work, 'chromium-profile'));
}, 600_000);

afterAll(async () => {
  await context?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('durolab compare of two real io-modes runs', () => {
  it('keeps every repetition, prints ratios and labels overlapping bands "within noise"', async () => {
    expect(ioRuns).toHaveLength(2);
    for (const run of ioRuns) for (const c of run.cells) expect(c.repetitions, c.id).toHaveLength(2);
    const [a, b] = ioRuns;
    const r = await durolab(['compare', `io-modes/${a.runId}`, `io-modes/${b.runId}`, '--results-dir', results, '--reports-dir', path.join(work, 'reports')]);
    const lines = r.stdout.split('\n');
    expect(lines).toContain(`  A: io-modes/${a.runId}  process target, started ${a.startedAt}, complete`);
    for (const cell of a.cells) {
      // Cells align by target and settings, keyed by their settings in name order.
      const params = Object.entries(cell.params).sort(([x], [y]) => x.localeCompare(y)).map(([k, v]) => `${k}=${v}`).join(' ');
      const row = lines.findIndex((l) => l.startsWith(`process: ${params}  `));
      expect(row, cell.id).toBeGreaterThan(0);
      // The label follows the bands in run.json: overlapping min-max ranges are within noise.
      const other = b.cells.find((c) => c.id === cell.id)!;
      const expected = difference(cellFigure(cell, 'recordsPerSec'), cellFigure(other, 'recordsPerSec'));
      const ratio = other.throughput!.recordsPerSec / cell.throughput!.recordsPerSec;
      expect(lines[row]).toMatch(/records\/s/);
      expect(lines[row].trimEnd().endsWith(expected === 'within noise' ? 'within noise' : expected === 'higher' ? 'higher (better)' : 'lower (worse)'), lines[row]).toBe(true);
      expect(lines[row]).toContain(`${ratio >= 10 ? ratio.toFixed(0) : ratio >= 1 ? ratio.toFixed(1) : Number(ratio.toPrecision(2))}x`);
    }
    expect(r.stdout).toMatch(/^environment(?: differences:|: the same in every run)/m);
    const page = r.stdout.match(/^page: (.+)$/m)?.[1];
    expect(page).toBeDefined();
    expect(readFileSync(path.resolve(work, page!), 'utf8')).toContain('id="compare-table"');

    const trend = await durolab(['compare', '--scenario', 'io-modes', '--no-html', '--results-dir', results]);
    expect(trend.stdout).toContain(`io-modes: 2 run(s), oldest first`);
    expect(trend.stdout).toContain(a.runId);
  });
});

describe('summaries to paste', () => {
  it('bench --summary json prints only the summary; report --summary markdown prints the table', async () => {
    const summary = JSON.parse(acksAllStdout) as { scenario: string; cells: Array<{ cell: string; acked: number }>; verdict: { code: number } };
    expect(summary.scenario).toBe('acks-all');
    expect(summary.cells.map((c) => c.cell)).toEqual(['acks=0', 'acks=1', 'acks=all']);
    expect(summary.cells[0].acked).toBe(0);
    expect(summary.cells[2].acked).toBeGreaterThan(0);
    const md = (await durolab(['report', `io-modes/${ioRuns[0].runId}`, '--summary', 'markdown', '--results-dir', results])).stdout;
    const rows = md.split('\n').filter((l) => l.startsWith('| io='));
    // One row per cell of the run, in its order (io-modes runs each write path over both drivers).
    expect(rows.map((r) => r.split(' | ')[0])).toEqual(ioRuns[0].cells.map((c) => `| ${c.id}`));
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(md).toContain(`**io-modes** \`${ioRuns[0].runId}\``);
  });
});

describe('durolab publish', () => {
  it('writes a site whose every page loads offline, links inside itself and draws its charts', async () => {
    const r = await durolab(['publish', '--out', site, '--results-dir', results]);
    expect(r.stdout).toMatch(/^site: .*index\.html \(4 runs, \d+ files\)/);
    const files = filesUnder(site);
    for (const run of ioRuns) {
      expect(files).toContain(`runs/io-modes/${run.runId}/index.html`);
      expect(files).toContain(`runs/io-modes/${run.runId}/run.json`);
    }
    expect(files).toEqual(expect.arrayContaining(['index.html', 'claims.html', 'compare/io-modes-trend.html', 'compare/io-modes-latest.html', 'compare/acks-all-trend.html', 'docs/index.html', 'docs/getting-started.html', 'docs/faults.html']));

    const pages = files.filter((f) => f.endsWith('.html'));
    let charts = 0;
    for (const rel of pages) {
      const { page, problems } = await openPage(context, path.join(site, rel));
      expect(problems.console, rel).toEqual([]);
      expect(problems.requests, rel).toEqual([]);
      const marks = await marksPerChart(page);
      for (const [id, perPanel] of Object.entries(marks)) {
        charts++;
        for (const n of perPanel) expect(n, `${rel} ${id}`).toBeGreaterThan(0);
      }
      // vega-embed's export menu (.vega-actions) makes its download links on click: not site links.
      const hrefs = await page.$$eval('a[href]', (as) => as.filter((a) => !a.closest('.vega-actions')).map((a) => a.getAttribute('href') ?? ''));
      const ids = new Set(await page.$$eval('[id]', (els) => els.map((e) => e.id)));
      for (const href of hrefs) {
        expect(href, `${rel}: ${href}`).not.toMatch(/^[a-z][a-z0-9+.-]*:|^\/|^\\/i);
        const [file, fragment] = href.split('#');
        if (file === '') {
          expect(ids.has(fragment), `${rel}: #${fragment}`).toBe(true);
          continue;
        }
        const target = path.resolve(path.dirname(path.join(site, rel)), file);
        expect(target.startsWith(site + path.sep), `${rel}: ${href} leaves the site`).toBe(true);
        expect(statSync(target, { throwIfNoEntry: false })?.isFile(), `${rel}: ${href} resolves to nothing`).toBe(true);
      }
      await page.close();
    }
    // Every run page draws throughput, latency and the time series at least; each trend page its records/s and p99 over the runs.
    expect(charts).toBeGreaterThanOrEqual(4 * 3 + 2 * 2);
    const trendPage = await openPage(context, path.join(site, 'compare/io-modes-trend.html'));
    expect(Object.keys(await marksPerChart(trendPage.page))).toEqual(expect.arrayContaining(['trend-recordsPerSec', 'trend-p99Us']));
    await trendPage.page.close();

    // The index filters: io-modes alone leaves its two runs.
    const { page } = await openPage(context, path.join(site, 'index.html'));
    await page.selectOption('#filter-scenario', 'io-modes');
    expect(await page.locator('#runs-table tbody tr:visible').count()).toBe(2);
    await page.selectOption('#filter-scenario', '');
    await page.selectOption('#filter-target', 'vm');
    expect(await page.locator('#runs-table tbody tr:visible').count()).toBe(1);
    await page.selectOption('#filter-target', '');
    await page.fill('#filter-since', '2030-01-01');
    expect(await page.locator('#runs-table tbody tr:visible').count()).toBe(0);
    await page.close();

    // A run page leads with the answer and lists the machine facts; the summary's extra columns sit behind the toggle.
    const runPage = await openPage(context, path.join(site, `runs/io-modes/${ioRuns[1].runId}/index.html`));
    const env = await runPage.page.locator('#environment-table').innerText();
    for (const fact of ['cores', 'memory', 'kernel', 'disk', 'accelerator', 'engine CRC-32C', 'engine write path']) expect(env).toContain(fact);
    expect(env).not.toMatch(/^host\t|^data directory\t/m);
    // The engine's native parts by name only: their recorded detail holds local paths.
    expect(env).toMatch(/^engine CRC-32C\t(native|isa-l|@node-rs\/crc32)( \(fallback\))?$/m);
    expect(env).toMatch(/^engine write path\t(native|fs\.writeSync)( \(fallback\))?$/m);
    expect(env).not.toContain('/dist/');
    expect(await runPage.page.locator('#answer-table').isVisible()).toBe(true);
    const flushes = runPage.page.locator('#summary-table thead th', { hasText: 'flushes' });
    expect(await flushes.isVisible()).toBe(false);
    await runPage.page.check('#summary-all-columns');
    expect(await flushes.isVisible()).toBe(true);
    await runPage.page.close();

    // The claims page: every claim with a verdict, the measured ones linked to their run.
    const claims = await openPage(context, path.join(site, 'claims.html'));
    const verdicts = await claims.page.$$eval('#claims-table tbody tr', (rows) => rows.map((r) => r.getAttribute('data-verdict')));
    expect(verdicts.length).toBeGreaterThanOrEqual(9);
    for (const v of verdicts) expect(['supported', 'contradicted', 'depends', 'not measured yet']).toContain(v);
    const pageCache = claims.page.locator('tr[data-claim="page-cache-speed"]');
    expect(await pageCache.getAttribute('data-verdict')).not.toBe('not measured yet');
    expect(await pageCache.locator('a').getAttribute('href')).toBe(`runs/io-modes/${ioRuns[1].runId}/index.html`);
    expect(await claims.page.locator('tr[data-claim="power-cut-expiry"], tr[data-claim="dirty-expiry-bounds-loss"]').getAttribute('data-verdict')).toBe('not measured yet');
    await claims.page.close();
  });

  it('carries no local path and no host name in any published file', () => {
    const forbidden = [root, results, work, os.tmpdir() + '/', os.homedir() + '/'];
    const hosts = [os.hostname(), ...ioRuns.map((r) => r.environment.hostname)].filter((h) => h.length >= 4);
    for (const rel of filesUnder(site)) {
      const text = readFileSync(path.join(site, rel), 'utf8');
      // The docs pages are the repository's own text, which names /tmp/ where the lab puts its sockets and mounts.
      for (const p of forbidden) if (!(rel.startsWith('docs/') && p === os.tmpdir() + '/')) expect(text.includes(p), `${rel} contains ${p}`).toBe(false);
      for (const h of hosts) expect(new RegExp(`(?<![\\w.-])${h.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`).test(text), `${rel} names the host ${h}`).toBe(false);
    }
    for (const run of ioRuns) {
      const published = JSON.parse(readFileSync(path.join(site, `runs/io-modes/${run.runId}/run.json`), 'utf8')) as RunResult;
      expect(published.environment.hostname).toBe('(host name not published)');
      expect(published.environment.dataDir).toBe('(local path)');
      expect(published.cells.map((c) => c.throughput)).toEqual(run.cells.map((c) => c.throughput));
    }
  });
});
