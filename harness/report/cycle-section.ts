// The report's trial-cycle breakdown: per cell, the median time of each step of its trials
// (image staging, boot, broker start, load, cut, restart, recovery, check, ...) as a table and
// a stacked bar, next to the goal for a power-cut trial cycle and the load average measured.

import type { RunResult } from '../results/types.ts';
import { cycleBreakdowns, type CycleBreakdown } from '../results/cycle-goals.ts';
import { TRIAL_STEPS } from '../results/trial-steps.ts';
import { faultDiskOfTarget } from '../targets/run-targets.ts';
import { escapeHtml, fmtMs } from './format.ts';

/** One colour per step, in TRIAL_STEPS order. */
const COLOURS = ['#9e9e9e', '#bcaaa4', '#1f77b4', '#6baed6', '#c6dbef', '#2ca02c', '#d62728', '#ff7f0e', '#fdae6b', '#9467bd', '#8c564b', '#e0e0e0'];

const VERDICT_TEXT = { pass: 'PASS', fail: 'FAIL', unknown: 'UNKNOWN' } as const;
const VERDICT_TONE = { pass: 'pass', fail: 'fail', unknown: 'none' } as const;

function bar(b: CycleBreakdown, scaleMs: number): string {
  const segs = TRIAL_STEPS.map((s, i) => ({ s, ms: b.medianSteps[s.key], colour: COLOURS[i]! }))
    .filter((x) => x.ms !== undefined && x.ms > 0)
    .map(
      (x) =>
        `<span class="cycle-seg" data-step="${x.s.key}" style="width:${((x.ms! / scaleMs) * 100).toFixed(2)}%;background:${x.colour}" title="${escapeHtml(`${x.s.label}: ${fmtMs(x.ms!)} (median) — ${x.s.meaning}`)}"></span>`,
    );
  const goal = b.verdict.goalMs !== null ? `<span class="cycle-goal" style="left:${((b.verdict.goalMs / scaleMs) * 100).toFixed(2)}%" title="goal ${fmtMs(b.verdict.goalMs)}"></span>` : '';
  return `<div class="cycle-bar">${segs.join('')}${goal}</div>`;
}

/** '' when no trial was timed step by step (run.json files written before Trial.timing existed). */
export function cycleSection(run: RunResult): string {
  // Fault trials only: a performance run's repetitions are not trial cycles anyone waits for.
  if (!run.cells.some((c) => (c.trials ?? []).some((t) => t.fault))) return '';
  const rows = cycleBreakdowns(run, faultDiskOfTarget);
  if (rows.length === 0) return '';
  const steps = TRIAL_STEPS.filter((s) => rows.some((r) => r.b.medianSteps[s.key] !== undefined));
  const scaleMs = Math.max(...rows.map((r) => Math.max(r.b.medianTotalMs, r.b.verdict.goalMs ?? 0)), 1);
  const head =
    '<th scope="col">cell</th><th scope="col" class="num">trials</th>' +
    steps.map((s) => `<th scope="col" class="num" title="${escapeHtml(s.meaning)}">${escapeHtml(s.label)}</th>`).join('') +
    '<th scope="col" class="num" title="median of the trials\' whole cycles">cycle (median)</th><th scope="col">goal</th><th scope="col" class="num" title="1-minute load average at the end of each trial, min-max">load avg</th><th scope="col">steps (median)</th>';
  const body = rows
    .map(({ cell, b }) => {
      const v = b.verdict;
      const load = b.loadAvg1.min === b.loadAvg1.max ? b.loadAvg1.min.toFixed(1) : `${b.loadAvg1.min.toFixed(1)}–${b.loadAvg1.max.toFixed(1)}`;
      return (
        `<tr data-cell="${escapeHtml(cell)}">` +
        `<th scope="row" data-v="${escapeHtml(cell)}">${escapeHtml(cell)}</th><td class="num" data-v="${b.trials}">${b.trials}</td>` +
        steps.map((s) => {
          const ms = b.medianSteps[s.key];
          return ms === undefined ? '<td class="num" data-v="">—</td>' : `<td class="num" data-step="${s.key}" data-v="${ms}">${escapeHtml(fmtMs(ms))}</td>`;
        }).join('') +
        `<td class="num" data-v="${b.medianTotalMs}"><strong>${escapeHtml(fmtMs(b.medianTotalMs))}</strong></td>` +
        `<td><span class="verdict ${VERDICT_TONE[v.state]}" data-verdict="${v.state}">${VERDICT_TEXT[v.state]}</span> ${v.goalMs !== null ? `&le; ${escapeHtml(fmtMs(v.goalMs))}` : ''}<div class="muted">${escapeHtml(v.reason)}</div></td>` +
        `<td class="num" data-v="${b.loadAvg1.max}">${escapeHtml(load)} <span class="muted">/ ${b.cores} cores</span></td>` +
        `<td style="min-width:280px">${bar(b, scaleMs)}</td>` +
        '</tr>'
      );
    })
    .join('\n');
  const legend = steps
    .map((s) => `<span class="cycle-key"><span class="cycle-swatch" style="background:${COLOURS[TRIAL_STEPS.indexOf(s)]}"></span>${escapeHtml(s.label)}</span>`)
    .join(' ');
  const details = rows
    .filter((r) => Object.keys(r.b.medianDetail).length > 0)
    .map(({ cell, b }) => {
      const d = b.medianDetail;
      const parts = [
        d.resumedBoots ? `VM starts resumed from a saved guest (median per trial) ${d.resumedBoots}` : '',
        d.templateMadeMs !== undefined ? `saving that guest first ${fmtMs(d.templateMadeMs)}` : '',
        d.spawnToInitMs !== undefined ? `QEMU spawn to /init ${fmtMs(d.spawnToInitMs)}` : '',
        d.figuresWarmUpMs !== undefined ? `first read of the broker figures ${fmtMs(d.figuresWarmUpMs)}` : '',
        d.killToExitMs !== undefined ? `SIGKILL to QEMU exit ${fmtMs(d.killToExitMs)}` : '',
        d.restartSpawnToInitMs !== undefined ? `restart: spawn to /init ${fmtMs(d.restartSpawnToInitMs)}` : '',
        d.restartMountMs !== undefined ? `mount with journal replay ${fmtMs(d.restartMountMs)}` : '',
        d.restartBrokerStartMs !== undefined ? `broker start ${fmtMs(d.restartBrokerStartMs)}` : '',
        d.logRecoveryMs !== undefined ? `of which the broker's own log recovery ${fmtMs(d.logRecoveryMs)}` : '',
      ].filter(Boolean);
      return `<li><strong>${escapeHtml(cell)}</strong>: ${escapeHtml(parts.join('; '))}</li>`;
    })
    .join('');
  // A VM start that booted instead of resuming the saved guest takes seconds longer: say which and why.
  const cold = run.cells.flatMap((c) =>
    (c.trials ?? []).flatMap((t) => (t.timing?.notResumed ?? []).map((why) => `<li><strong>${escapeHtml(c.id)}</strong> trial ${t.index + 1}: ${escapeHtml(why)}</li>`)),
  );
  return `<section id="cycle">
<h2>Trial cycle, step by step</h2>
<p class="muted">Each trial's wall time split into contiguous steps (their sum is the trial's cycle); the median of each step over a cell's trials, so the step medians need not add up to the median cycle.
Goals: a power-cut trial cycle of one VM under TCG at most 10 s, three VMs at most 20 s (issue 14); on the host route's fault disk (targets kafka and process) at most 20 s (issue 27); each on an idle machine: above the goal on a busy machine the verdict is UNKNOWN. Above a host-route goal the verdict names how much of the cycle the brokers' own start and restart took. The black tick on a bar marks the goal.</p>
<div class="table-wrap"><table class="sortable" id="cycle-table"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>
<p class="cycle-legend">${legend}</p>
${details ? `<p class="muted">Inside the steps (medians):</p><ul class="cycle-detail">${details}</ul>` : ''}
${cold.length ? `<p class="muted">VM starts that booted instead of resuming the saved guest:</p><ul class="cycle-cold">${cold.join('')}</ul>` : ''}
</section>`;
}

