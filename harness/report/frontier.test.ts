// The durability/cost frontier from a run with a measure axis (fixture cells: a seam beside the
// durability-frontier scenario's real runs): each setting's throughput and loss paired, the
// Pareto front, the one-sentence answer per target, and the report section with its chart.
import { describe, expect, it } from 'vitest';
import type { Trial } from '../results/types.ts';
import { makeRun } from './test-fixtures.ts';
import { frontierText, frontiersOf } from './frontier.ts';
import { frontierCharts, frontierSection } from './frontier-section.ts';
import { renderRunReport } from './run-page.ts';

const trial = (index: number, acked: number, lost: number): Trial => ({
  index,
  ledger: { acked, ackedLost: lost, duplicates: 0, outOfOrder: 0, corrupt: 0 },
  fault: { kind: 'power-cut', targets: [1, 2, 3], atMs: 4000, ackedBeforeCut: acked, recovery: [] },
});

function run() {
  const cells = [];
  // flush never: fastest, loses most; messages:1000: loses a little; per-batch: loses nothing; a dominated one (slower and lossier).
  const settings: Array<[string, string, number, number[]]> = [
    ['durolab', 'never', 40_000, [50_000, 60_000]],
    ['durolab', 'messages:1000', 30_000, [200, 800]],
    ['durolab', 'per-batch', 9_000, [0, 0]],
    ['durolab', 'ms:1000', 8_000, [300, 900]],
    ['kafka', 'never', 12_000, [10_000, 13_000]],
    ['kafka', 'per-batch', 4_000, [0, 0]],
  ];
  for (const [target, flush, rps, lost] of settings) {
    cells.push({ id: `target=${target},flush=${flush},measure=throughput`, params: { target, flush, measure: 'throughput' }, recordsPerSec: rps, latency: { medianUs: 1000, sigma: 0.5, count: 1000 } });
    cells.push({
      id: `target=${target},flush=${flush},measure=loss`,
      params: { target, flush, measure: 'loss' },
      recordsPerSec: rps * 0.9,
      latency: { medianUs: 1000, sigma: 0.5, count: 1000 },
      trials: lost.map((l, i) => trial(i, 60_000, l)),
    });
  }
  return makeRun(cells);
}

describe('durability/cost frontier', () => {
  it('pairs each setting, finds the front and answers with the fastest setting that lost nothing', () => {
    const [durolab, kafka] = frontiersOf(run());
    expect(durolab!.target).toBe('durolab');
    expect(durolab!.points.map((p) => [p.setting, p.recordsPerSec.median, p.lost.max, p.onFront])).toEqual([
      ['flush=never', 40_000, 60_000, true],
      ['flush=messages:1000', 30_000, 800, true],
      ['flush=per-batch', 9_000, 0, true],
      ['flush=ms:1000', 8_000, 900, false],
    ]);
    expect(durolab!.answer).toBe(
      'On durolab, the fastest setting that lost nothing in any trial is flush=per-batch at 9,000 records/s (2 trials); faster ones lost (min / median / max): flush=never (40,000 records/s) lost 50,000 / 55,000 / 60,000 per cut; flush=messages:1000 (30,000 records/s) lost 200 / 500 / 800 per cut.',
    );
    expect(kafka!.answer).toContain('flush=per-batch at 4,000 records/s');
    expect(frontierText([durolab!, kafka!])).toMatch(/\* flush=per-batch\s+9,000 records\/s\s+lost 0 \/ 0 \/ 0 of ~60,000/);
  });

  it('does not call a setting lossless when some of its cuts left the cluster unavailable, and names every such setting', () => {
    const r = run();
    const gone = { index: 2, fault: 'power-cut', targets: [1, 2, 3], cutAtSec: 4, acked: 60_000, ackedBeforeCut: 60_000, recoveryTimeoutMs: 60_000, failed: 'no leader', evidence: '/r' };
    r.cells.find((c) => c.id === 'target=durolab,flush=per-batch,measure=loss')!.unavailableTrials = [gone];
    const never = r.cells.find((c) => c.id === 'target=kafka,flush=never,measure=loss')!;
    never.trials = [];
    never.unavailableTrials = [gone, { ...gone, index: 3 }];
    const [durolab, kafka] = frontiersOf(r);
    expect(durolab!.points.find((p) => p.setting === 'flush=per-batch')!.unavailable).toBe(1);
    expect(durolab!.answer).toBe(
      'On durolab, no setting was checked after every cut without a loss; the least: flush=per-batch, at most 0 per cut at 9,000 records/s. After some cuts the cluster did not come back (not checked): flush=per-batch (1 of 3 cuts).',
    );
    expect(kafka!.points.map((p) => p.setting)).toEqual(['flush=per-batch']);
    expect(kafka!.unavailableOnly).toEqual([{ setting: 'flush=never', trials: 2 }]);
    expect(kafka!.answer).toContain('After some cuts the cluster did not come back (not checked): flush=never (every cut, 2).');
    expect(frontierSection(r, () => '')).toContain('+ 1 unavailable');
  });

  it('says when every setting lost something, and has nothing to say without a measure axis', () => {
    const r = run();
    r.cells = r.cells.filter((c) => c.params.flush !== 'per-batch');
    expect(frontiersOf(r)[0]!.answer).toBe('On durolab, every setting lost acknowledged records in some trial; the least: flush=messages:1000, at most 800 per cut at 30,000 records/s.');
    const plain = run();
    plain.cells = plain.cells.filter((c) => c.params.measure === 'loss');
    expect(frontiersOf(plain)).toEqual([]);
    expect(frontierSection(plain, () => '')).toBe('');
  });

  it('names a setting without the driver when each target ran through one driver (kafka for durolab, nats for NATS), and with it otherwise', () => {
    const cells = [];
    const rows: Array<[string, string, string, number, number[]]> = [
      ['durolab', 'kafka', 'per-batch', 9_000, [0, 0]],
      ['nats', 'nats', 'never', 11_000, [150_000, 110_000]],
      ['nats', 'nats', 'ms:10000', 10_000, [40_000, 60_000]],
      ['nats', 'nats', 'per-batch', 3_000, [0, 0]],
    ];
    for (const [target, driver, flush, rps, lost] of rows) {
      for (const measure of ['throughput', 'loss']) {
        cells.push({
          id: `target=${target},driver=${driver},flush=${flush},measure=${measure}`,
          params: { target, driver, flush, measure },
          recordsPerSec: rps,
          latency: { medianUs: 1000, sigma: 0.5, count: 1000 },
          ...(measure === 'loss' ? { trials: lost.map((l, i) => trial(i, 160_000, l)) } : {}),
        });
      }
    }
    const [, nats] = frontiersOf(makeRun(cells));
    expect(nats!.target).toBe('nats');
    expect(nats!.points.map((p) => [p.setting, p.lost.max, p.onFront])).toEqual([
      ['flush=never', 150_000, true],
      ['flush=ms:10000', 60_000, true],
      ['flush=per-batch', 0, true],
    ]);
    expect(nats!.answer).toContain('On nats, the fastest setting that lost nothing in any trial is flush=per-batch at 3,000 records/s');
    // durolab through two drivers: the driver is part of the setting.
    const both = makeRun([
      ...cells,
      ...['throughput', 'loss'].map((measure) => ({
        id: `target=durolab,driver=http,flush=per-batch,measure=${measure}`,
        params: { target: 'durolab', driver: 'http', flush: 'per-batch', measure },
        recordsPerSec: 8_000,
        latency: { medianUs: 1000, sigma: 0.5, count: 1000 },
        ...(measure === 'loss' ? { trials: [trial(0, 60_000, 0)] } : {}),
      })),
    ]);
    expect(frontiersOf(both)[0]!.points.map((p) => p.setting)).toEqual(['driver=kafka,flush=per-batch', 'driver=http,flush=per-batch']);
  });

  it('draws one chart per target in the report, with the answer and the table', () => {
    const r = run();
    expect(frontierCharts(r).map((c) => c.id)).toEqual(['chart-frontier-0', 'chart-frontier-1']);
    const html = renderRunReport(r);
    expect(html).toContain('<section id="frontier"><h2>Durability/cost frontier</h2>');
    expect(html).toContain('id="chart-frontier-1"');
    expect(html).toContain('<td data-v="0">dominated</td>');
    expect(html).toContain('the fastest setting that lost nothing in any trial is flush=per-batch at 4,000 records/s');
  });
});

describe('the published frontier pages', () => {
  it('writes one self-contained page per target, linked to its run', async () => {
    const { frontierPages } = await import('../publish/frontier-page.ts');
    const pages = frontierPages(run(), { home: '../index.html', runHref: '../runs/io-modes/r1/index.html' });
    expect(pages.map((p) => [p.file, p.target])).toEqual([
      ['frontier/io-modes-durolab.html', 'durolab'],
      ['frontier/io-modes-kafka.html', 'kafka'],
    ]);
    const kafka = pages[1]!.html;
    expect(kafka).toContain('<h1>io-modes: durability/cost frontier on kafka</h1>');
    expect(kafka).toContain('href="../runs/io-modes/r1/index.html"');
    expect(kafka).toContain('the fastest setting that lost nothing in any trial is flush=per-batch at 4,000 records/s');
    expect(kafka).not.toContain('flush=messages:1000');
    expect(kafka).toContain('<script data-lib="vega"');
  });
});
