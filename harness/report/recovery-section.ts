// The report's recovery figures after a fault, stage by stage (harness/faults/recover.ts): the
// hit brokers restarted, leaders elected, replicas caught up, the ISR whole again. One row per
// cell over its trials, so a rack cut on durolab's broker and on Apache Kafka read side by side:
// whether the cluster came back, how long each stage took.
import { distribution } from '../../engine/common/stats.ts';
import type { RecoverySteps, RunResult, Trial } from '../results/types.ts';
import { escapeHtml, fmtMs } from './format.ts';
import { recoveryCompareRows } from './recovery-compare.ts';

type Stage = { key: keyof Omit<RecoverySteps, 'isrShort'>; label: string; title: string };

const STAGES: readonly Stage[] = [
  { key: 'restartMs', label: 'restart', title: 'the hit brokers restarted on their disks (a VM booted, the disk mounted and its journal replayed, the broker recovered its log and serves)' },
  { key: 'electionMs', label: 'leader election', title: 'then every partition led by a live broker (the controller elected leaders)' },
  { key: 'catchUpMs', label: 'replicas caught up', title: "then every replica at its leader's log end, the leader's HW there (followers truncated what diverged and fetched the rest)" },
  { key: 'isrMs', label: 'ISR whole', title: 'then every replica back in the ISR, as the leader (durolab) or the controller (Kafka) says' },
];

function withSteps(ts: Trial[] | undefined): Array<Trial & { fault: { recoverySteps: RecoverySteps } }> {
  return (ts ?? []).filter((t): t is Trial & { fault: { recoverySteps: RecoverySteps } } => t.fault?.recoverySteps !== undefined);
}

function cell(values: number[]): string {
  const d = distribution(values);
  if (d === null) return '<td class="num" data-v="">—</td>';
  return `<td class="num" data-v="${d.median}">${escapeHtml(`${fmtMs(d.min)} / ${fmtMs(d.median)} / ${fmtMs(d.max)}`)}</td>`;
}

/** Per cell: the log before the fault, restart and the broker's own log recovery, each target against durolab's broker ('' without a restart). */
function sideBySide(run: RunResult): string {
  const rows = recoveryCompareRows(run);
  if (rows.length === 0) return '';
  const num = (v: number | null, text: string) => `<td class="num" data-v="${v ?? ''}">${escapeHtml(v === null ? '—' : text)}</td>`;
  const body = rows.map(
    (r) =>
      '<tr>' +
      `<th scope="row" data-v="${escapeHtml(r.cell)}">${escapeHtml(r.cell)}</th>` +
      num(r.trials, String(r.trials)) +
      num(r.logBytes, `${((r.logBytes ?? 0) / 2 ** 20).toFixed(0)} MiB`) +
      num(r.segments, String(r.segments)) +
      num(r.restartMs, fmtMs(r.restartMs ?? 0)) +
      num(r.logRecoveryMs, fmtMs(r.logRecoveryMs ?? 0)) +
      num(r.vsDurolab, `${(r.vsDurolab ?? 0).toFixed(2)}×`) +
      '</tr>',
  );
  return (
    '<h3 id="recovery-side-by-side">Recovery against the log, side by side</h3>' +
    "<p class=\"muted\">Medians over the trials whose fault fired. Restart: the hit brokers' exec (or a VM's boot) to serving; log recovery: the broker's own figure (durolab's recovery report summed over its partitions, Kafka's log loading); the log as the broker figures read it before the fault. The last column divides a target's restart by durolab's broker's in the cell with the same other parameters.</p>" +
    '<div class="table-wrap"><table class="sortable" id="recovery-compare-table"><thead><tr>' +
    ['cell', 'trials', 'log', 'segments', 'restart', 'log recovery', "restart / durolab's"].map((h, i) => `<th scope="col"${i > 0 ? ' class="num"' : ''}>${escapeHtml(h)}</th>`).join('') +
    `</tr></thead><tbody>${body.join('\n')}</tbody></table></div>`
  );
}

/** '' when no trial of the run timed its recovery stage by stage. */
export function recoveryTable(run: RunResult): string {
  const cells = run.cells.filter((c) => withSteps(c.trials).length > 0);
  if (cells.length === 0) return sideBySide(run);
  const head = [
    '<th scope="col">cell</th>',
    '<th scope="col" class="num" title="trials whose brokers came back and were checked, of the trials with a fault">came back</th>',
    ...STAGES.map((s) => `<th scope="col" class="num" title="${escapeHtml(`${s.title}; min / median / max over the trials`)}">${escapeHtml(s.label)}</th>`),
    '<th scope="col" class="num" title="restart + election + catch-up (the loss table\'s back in service), min / median / max">back in service</th>',
  ].join('');
  const rows = cells.map((c) => {
    const faulted = (c.trials ?? []).filter((t) => t.fault);
    const ts = withSteps(c.trials);
    const short = ts.filter((t) => t.fault.recoverySteps.isrMs === null);
    const stageCells = STAGES.map((s) => {
      const values = ts.map((t) => t.fault.recoverySteps[s.key]).filter((v): v is number => typeof v === 'number');
      if (s.key !== 'isrMs' || short.length === 0) return cell(values);
      const why = short.map((t) => `trial ${t.index + 1}: ${t.fault.recoverySteps.isrShort ?? 'short'}`).join('\n');
      return `${cell(values).replace('</td>', '')} <span class="warn" title="${escapeHtml(why)}">(short in ${short.length})</span></td>`;
    });
    return (
      '<tr>' +
      `<th scope="row" data-v="${escapeHtml(c.id)}">${escapeHtml(c.id)}</th>` +
      `<td class="num${ts.length < faulted.length ? ' bad' : ''}" data-v="${ts.length}">${ts.length} of ${faulted.length}</td>` +
      stageCells.join('') +
      cell(ts.map((t) => t.fault.recoverySteps.restartMs + t.fault.recoverySteps.electionMs + t.fault.recoverySteps.catchUpMs)) +
      '</tr>'
    );
  });
  return (
    '<h3 id="recovery">Recovery after the fault, stage by stage</h3>' +
    '<p class="muted">Each stage starts where the one before ended. A cluster that does not come back fails its cell with the reason (a trial is only checked once every partition is led again); "short" means the ISR still lacked a replica 30 s after the replicas caught up (the reason is on hover).</p>' +
    `<div class="table-wrap"><table class="sortable" id="recovery-table"><thead><tr>${head}</tr></thead><tbody>${rows.join('\n')}</tbody></table></div>` +
    sideBySide(run)
  );
}
