// Opens written reports from file:// in headless Chromium: no console errors, no network
// requests, and every chart has drawn marks. Needs /usr/bin/chromium (Debian `chromium`).

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, marksPerChart, openPage } from './browser-helpers.ts';
import type { RunResult } from '../results/types.ts';
import { writeRunReport } from './index.ts';
import { powerCutRun, processRun } from './test-fixtures.ts';

let userDataDir: string;
let dir: string;
let context: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'durolab-report-browser-'));
  userDataDir = path.join(dir, 'chromium-profile');
  context = await launchChromium(userDataDir);
});

afterAll(async () => {
  await context?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function writeRun(run: RunResult): Promise<string> {
  const resultsDir = path.join(dir, 'results');
  const runDir = path.join(resultsDir, run.scenario.name, run.runId);
  await mkdir(runDir, { recursive: true });
  await writeFile(path.join(runDir, 'run.json'), JSON.stringify(run));
  return writeRunReport(run, { resultsDir, reportsDir: path.join(dir, 'reports') });
}

const open = (file: string) => openPage(context, file);

describe('report in headless Chromium', () => {
  it('loads a process run from file:// with no errors and draws every chart', async () => {
    const file = await writeRun(processRun());
    const { page, problems } = await open(file);
    expect(problems.console).toEqual([]);
    expect(problems.requests).toEqual([]);
    const marks = await marksPerChart(page);
    expect(Object.keys(marks).sort()).toEqual(['chart-latency', 'chart-throughput', 'chart-timeseries']);
    for (const [id, perPanel] of Object.entries(marks)) {
      for (const n of perPanel) expect(n, `${id} panels ${perPanel.join(',')}`).toBeGreaterThan(0);
    }
    // Throughput: hconcat of records/s and MB/s; time series: 5 panels sharing t.
    expect(marks['chart-throughput']).toHaveLength(2);
    expect(marks['chart-timeseries']).toHaveLength(5);
    // The SVG carries the marks too (what a reader sees, not only the scenegraph).
    const svgPaths = await page.$$eval('#chart-latency svg .role-mark path', (els) => els.length);
    expect(svgPaths).toBeGreaterThan(0);

    // Sorting: click records/s twice -> descending -> the fastest cell first.
    const header = page.locator('#summary-table thead th', { hasText: 'records/s' });
    await header.click();
    await header.click();
    expect(await header.getAttribute('aria-sort')).toBe('descending');
    const firstCell = await page.locator('#summary-table tbody tr').first().getAttribute('data-cell');
    expect(firstCell).toBe('buffered, flush never');

    // Picking one cell in the time series leaves only that cell's lines, in every panel.
    await page.selectOption('#chart-timeseries select', 'fdatasync per batch');
    await page.evaluate(() =>
      (globalThis as unknown as { durolabViews: Record<string, { runAsync(): Promise<unknown> }> }).durolabViews['chart-timeseries']
        .runAsync()
        .then(() => undefined),
    );
    const after = await marksPerChart(page);
    after['chart-timeseries'].forEach((n, i) => {
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThan(marks['chart-timeseries'][i]);
    });

    await page.screenshot({ path: path.join(os.tmpdir(), 'durolab-report-process.png'), fullPage: true });
    await page.close();
  });

  it('loads an incomplete VM run with trials and shows the banners and the index', async () => {
    const file = await writeRun(powerCutRun());
    const { page, problems } = await open(file);
    expect(problems.console).toEqual([]);
    expect(problems.requests).toEqual([]);
    expect(await page.locator('#status-banner').textContent()).toContain('INCOMPLETE');
    expect(await page.locator('#tcg-banner').isVisible()).toBe(true);
    const marks = await marksPerChart(page);
    for (const [id, perPanel] of Object.entries(marks)) {
      for (const n of perPanel) expect(n, id).toBeGreaterThan(0);
    }
    await page.screenshot({ path: path.join(os.tmpdir(), 'durolab-report-powercut.png'), fullPage: true });
    await page.close();

    // The index has no charts: durolabReady is undefined there and open() just loads it.
    const index = await open(path.join(dir, 'reports', 'index.html'));
    expect(index.problems.console).toEqual([]);
    const rows = await index.page.locator('#runs-table tbody tr').count();
    expect(rows).toBe(2);
    await index.page.locator('#runs-table a', { hasText: '20250101T120000Z-a1b2' }).click();
    await index.page.waitForLoadState('load');
    expect(index.page.url()).toContain('/io-modes/20250101T120000Z-a1b2/index.html');
    await index.page.close();
  });
});
