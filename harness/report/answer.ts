// The first screen of a run's report: the one figure that answers the scenario's question.
// A fault scenario is answered by acknowledged loss per cell over its trials; a performance
// scenario by each cell's ratios to the first measured cell. Connection errors after a fault
// (clients meeting a broker that is down) are environment noise, summarised in one line.

import type { CellResult, RunResult } from '../results/types.ts';
import { cellFigure, hasThroughput, isFaultRun, judgedTrials, unavailableCount } from '../results/figures.ts';
import { escapeHtml, fmtInt, fmtMB, fmtPct, fmtRate, fmtRatio, fmtSeconds, fmtUs, isMeasured } from './format.ts';

/** Errors a client meets when a broker is unreachable (refused, reset, timed out): CLIENT_<errno>, CLIENT_TIMEOUT. */
export function isConnectionError(name: string): boolean {
  return name.startsWith('CLIENT_');
}

/** One line for connection errors in a fault run, or null when there were none (or no fault). */
export function connectionNoiseLine(run: RunResult): string | null {
  if (!isFaultRun(run)) return null;
  const byName = new Map<string, number>();
  let cells = 0;
  for (const c of run.cells) {
    let any = false;
    for (const [k, v] of Object.entries(c.errors ?? {})) {
      if (!isConnectionError(k) || !(v > 0)) continue;
      byName.set(k, (byName.get(k) ?? 0) + v);
      any = true;
    }
    if (any) cells++;
  }
  const total = [...byName.values()].reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const kinds = [...byName.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${fmtInt(v)}`).join(', ');
  return `${fmtInt(total)} client connection errors in ${cells} of ${run.cells.length} cells (${kinds}): clients reaching a broker that the fault had taken down, not a finding about durability.`;
}

function lossRow(c: CellResult): string {
  const trials = judgedTrials(c);
  const lost = cellFigure(c, 'ackedLost');
  const window = cellFigure(c, 'lossWindowSec');
  const acked = trials.reduce((a, t) => a + t.ledger.acked, 0);
  const lostSum = trials.reduce((a, t) => a + t.ledger.ackedLost, 0);
  const losing = trials.filter((t) => t.ledger.ackedLost > 0).length;
  const bad = lostSum > 0 ? ' bad' : '';
  return (
    `<tr data-cell="${escapeHtml(c.id)}"><th scope="row">${escapeHtml(c.id)}</th>` +
    `<td class="num">${trials.length ? `${losing} of ${trials.length}` : '—'}${unavailableCount(c) ? ` <span class="bad">+ ${unavailableCount(c)} unavailable, not checked</span>` : ''}</td>` +
    `<td class="num${bad}">${lost ? `${fmtInt(lost.min)} / ${fmtInt(lost.median)} / ${fmtInt(lost.max)}` : '—'}</td>` +
    `<td class="num${bad}">${trials.length ? `${fmtInt(lostSum)} of ${fmtInt(acked)} (${fmtPct(acked ? lostSum / acked : NaN)})` : '—'}</td>` +
    `<td class="num">${window && window.max > 0 ? fmtSeconds(window.max) : '—'}</td></tr>`
  );
}

function ratioRows(run: RunResult): string {
  const measured = run.cells.filter(hasThroughput).filter((c) => c.throughput.recordsPerSec > 0);
  const base = measured[0];
  if (!base) return '';
  return measured
    .map((c) => {
      const r = (a: number, b: number) => (b > 0 ? fmtRatio(a / b) : '—');
      return (
        `<tr data-cell="${escapeHtml(c.id)}"><th scope="row">${escapeHtml(c.id)}${c === base ? ' <span class="muted">(baseline)</span>' : ''}</th>` +
        `<td class="num">${fmtRate(c.throughput.recordsPerSec)} <b>${r(c.throughput.recordsPerSec, base.throughput.recordsPerSec)}</b></td>` +
        `<td class="num">${fmtMB(c.throughput.mbPerSec)}</td>` +
        `<td class="num">${fmtUs(c.latencyUs.p99)} <b>${r(c.latencyUs.p99, base.latencyUs.p99)}</b></td>` +
        `<td class="num${c.ledger.ackedLost ? ' bad' : ''}">${fmtInt(c.ledger.ackedLost)}</td></tr>`
      );
    })
    .join('');
}

/** The answer block under the question and verdict. */
export function answerBlock(run: RunResult): string {
  const noise = connectionNoiseLine(run);
  const noiseHtml = noise ? `<p class="muted" id="connection-noise">${escapeHtml(noise)}</p>` : '';
  if (isFaultRun(run)) {
    const cells = run.cells.filter((c) => (c.trials ?? []).some((t) => t.fault) || isMeasured(c));
    return (
      '<h3>The answer: acknowledged records lost, per cell</h3>' +
      '<p class="muted">Over the trials whose fault fired and that are not suspect: in how many trials records were lost, min / median / max lost per trial, the total against what was acknowledged, and how far before the cut the oldest lost record had been acknowledged.</p>' +
      '<div class="table-wrap"><table id="answer-table"><thead><tr><th>cell</th><th class="num">trials losing</th><th class="num">lost min / median / max</th><th class="num">lost of acked</th><th class="num">loss window (max)</th></tr></thead>' +
      `<tbody>${cells.map(lossRow).join('')}</tbody></table></div>` +
      noiseHtml
    );
  }
  const rows = ratioRows(run);
  if (!rows) return noiseHtml;
  return (
    '<h3>The answer: each cell against the first</h3>' +
    '<p class="muted">records/s and p99 with their ratio to the baseline cell (bold); ratios within one run are what carries to other machines.</p>' +
    '<div class="table-wrap"><table id="answer-table"><thead><tr><th>cell</th><th class="num">records/s</th><th class="num">MB/s</th><th class="num">p99 µs</th><th class="num">acked lost</th></tr></thead>' +
    `<tbody>${rows}</tbody></table></div>` +
    noiseHtml
  );
}
