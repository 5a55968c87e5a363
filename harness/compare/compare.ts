// `durolab compare`: runs side by side. Cells are aligned by target and settings (never by
// position); each figure shows its median with the min-max band over repetitions or trials,
// the ratio to the first run, and "within noise" when the bands overlap. The environment
// facts that differ between the runs are listed, since they can explain any difference.

import type { RunResult } from '../results/types.ts';
import { ranAsHostProcesses } from '../targets/run-targets.ts';
import { renderTable } from '../../engine/common/text-table.ts';
import { fmtRatio } from '../report/format.ts';
import { FIGURE_LABEL, HIGHER_IS_BETTER, cellFigure, cellKey, fmtFigure, isFaultRun, type Figure, type FigureName } from '../results/figures.ts';

export const PERFORMANCE_FIGURES: FigureName[] = ['recordsPerSec', 'mbPerSec', 'p50Us', 'p99Us', 'p999Us'];
export const LOSS_FIGURES: FigureName[] = ['acked', 'ackedLost', 'lossWindowSec'];

export type Difference = 'baseline' | 'within noise' | 'higher' | 'lower' | 'no band' | 'missing';

export interface ComparedFigure {
  name: FigureName;
  /** One per run, in the order given; null where that run has no such cell or figure. */
  values: Array<Figure | null>;
  /** Against the first run's median; NaN where either is missing or the first is 0. */
  ratios: number[];
  differences: Difference[];
}

export interface ComparedCell {
  key: string;
  /** The cell's id in each run (null: absent there). */
  ids: Array<string | null>;
  figures: ComparedFigure[];
}

export interface Comparison {
  runs: RunResult[];
  cells: ComparedCell[];
  /** Environment facts that differ: name and the value in each run. */
  environment: Array<{ fact: string; values: string[] }>;
}

/** Bands [min, max] that overlap are within noise; a band needs 2 samples on both sides. */
export function difference(base: Figure | null, other: Figure | null): Difference {
  if (!base || !other) return 'missing';
  if (base.n < 2 || other.n < 2) return 'no band';
  if (other.min <= base.max && base.min <= other.max) return 'within noise';
  return other.median > base.median ? 'higher' : 'lower';
}

function environmentFacts(run: RunResult): Record<string, string> {
  const e = run.environment;
  const accels = [...new Set(run.cells.map((c) => c.accelerator).filter(Boolean))].join(', ');
  const w = (run.scenario.raw as { workload?: unknown } | null)?.workload;
  return {
    target: run.target,
    accelerator: accels || (ranAsHostProcesses(run.target) ? 'none (process)' : 'unrecorded'),
    cpu: e.cpu,
    cores: String(e.cores),
    memory: `${(e.memoryBytes / 2 ** 30).toFixed(1)} GiB`,
    kernel: e.kernel,
    os: e.os,
    node: e.node,
    // How full the disk is changes from run to run; it is not a difference worth listing.
    filesystem: e.filesystem.replace(/, [\d.]+ % used$/, ''),
    disk: e.device,
    'disk model': run.diskModel ?? '—',
    'git commit': run.gitCommit ? run.gitCommit.slice(0, 12) : 'unknown',
    workload: w === undefined ? '—' : JSON.stringify(w),
  };
}

export function compareRuns(runs: RunResult[]): Comparison {
  if (runs.length < 2) throw new Error(`compare needs at least two runs, got ${runs.length}`);
  const keys: string[] = [];
  for (const run of runs) for (const c of run.cells) if (!keys.includes(cellKey(run, c))) keys.push(cellKey(run, c));
  const fault = runs.some(isFaultRun);
  const names = fault ? [...LOSS_FIGURES, ...PERFORMANCE_FIGURES] : PERFORMANCE_FIGURES;
  const cells = keys.map((key) => {
    const found = runs.map((run) => run.cells.find((c) => cellKey(run, c) === key) ?? null);
    const figures = names.map((name) => {
      const values = found.map((c, i) => (c ? cellFigure(c, name) : null));
      const base = values[0];
      return {
        name,
        values,
        ratios: values.map((v) => (base && v && base.median !== 0 ? v.median / base.median : NaN)),
        differences: values.map((v, i): Difference => (i === 0 ? 'baseline' : difference(base, v))),
      };
    });
    return { key, ids: found.map((c) => c?.id ?? null), figures };
  });
  const facts = runs.map(environmentFacts);
  const environment = Object.keys(facts[0])
    .filter((k) => facts.some((f) => f[k] !== facts[0][k]))
    .map((fact) => ({ fact, values: facts.map((f) => f[fact]) }));
  return { runs, cells, environment };
}

/** "1.8x higher", "within noise", ... for the terminal and the page. */
export function differenceText(f: ComparedFigure, i: number): string {
  const d = f.differences[i];
  const r = f.ratios[i];
  if (d === 'baseline') return 'baseline';
  if (d === 'missing') return 'missing';
  const ratio = Number.isFinite(r) ? fmtRatio(r) : '—';
  if (d === 'within noise') return `${ratio} within noise`;
  if (d === 'no band') return `${ratio} (1 sample, no noise band)`;
  const better = HIGHER_IS_BETTER.has(f.name) ? d === 'higher' : d === 'lower';
  return `${ratio} ${d}${f.name === 'ackedLost' || f.name === 'lossWindowSec' || HIGHER_IS_BETTER.has(f.name) || f.name.endsWith('Us') ? (better ? ' (better)' : ' (worse)') : ''}`;
}

export function runLabel(run: RunResult): string {
  return `${run.scenario.name}/${run.runId}`;
}

export function comparisonText(cmp: Comparison): string {
  const out: string[] = [];
  out.push(`runs (ratios against the first; bands are min-max over repetitions or trials):`);
  cmp.runs.forEach((r, i) => out.push(`  ${String.fromCharCode(65 + i)}: ${runLabel(r)}  ${r.target} target, started ${r.startedAt}, ${r.status}`));
  const letters = cmp.runs.map((_, i) => String.fromCharCode(65 + i));
  const headers = ['cell', 'figure', ...letters, ...letters.slice(1).map((l) => `${l}/A`)];
  const rows: string[][] = [];
  for (const c of cmp.cells) {
    c.figures.forEach((f, j) => {
      rows.push([j === 0 ? c.key : '', FIGURE_LABEL[f.name], ...f.values.map((v) => fmtFigure(f.name, v)), ...letters.slice(1).map((_, i) => differenceText(f, i + 1))]);
    });
  }
  out.push('', renderTable(headers, rows, (i) => i >= 2 && i < 2 + letters.length));
  out.push('');
  if (cmp.environment.length === 0) out.push('environment: the same in every run (cpu, cores, memory, kernel, disk, accelerator, commit, workload)');
  else {
    out.push('environment differences:');
    for (const e of cmp.environment) out.push(`  ${e.fact}: ${e.values.map((v, i) => `${letters[i]}=${v}`).join('; ')}`);
  }
  return out.join('\n');
}

export interface TrendRow {
  key: string;
  /** Per run (oldest first): records/s, p99 and acked lost with their bands. */
  values: Array<{ recordsPerSec: Figure | null; p99Us: Figure | null; ackedLost: Figure | null } | null>;
}

/** A scenario's runs, oldest first, one row per aligned cell. */
export function scenarioTrend(runs: RunResult[]): TrendRow[] {
  const ordered = [...runs].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const keys: string[] = [];
  for (const run of ordered) for (const c of run.cells) if (!keys.includes(cellKey(run, c))) keys.push(cellKey(run, c));
  return keys.map((key) => ({
    key,
    values: ordered.map((run) => {
      const c = run.cells.find((x) => cellKey(run, x) === key);
      return c ? { recordsPerSec: cellFigure(c, 'recordsPerSec'), p99Us: cellFigure(c, 'p99Us'), ackedLost: cellFigure(c, 'ackedLost') } : null;
    }),
  }));
}

export function trendText(scenario: string, runs: RunResult[]): string {
  const ordered = [...runs].sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const rows = scenarioTrend(ordered);
  const headers = ['cell', ...ordered.map((r) => r.runId)];
  const body = rows.map((r) => [
    r.key,
    ...r.values.map((v) => (v ? `${fmtFigure('recordsPerSec', v.recordsPerSec)} rec/s, p99 ${fmtFigure('p99Us', v.p99Us)} µs, lost ${fmtFigure('ackedLost', v.ackedLost)}` : '—')),
  ]);
  return [`${scenario}: ${ordered.length} run(s), oldest first (median, min-max band over repetitions or trials)`, '', renderTable(headers, body, () => false)].join('\n');
}
