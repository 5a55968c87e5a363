// The report's fault figures beyond the loss table: the distribution of acknowledged loss
// over a cell's trials, and the loss window on the time axis (when the records that were
// lost had been acknowledged, relative to the cut, trial by trial).

import type { TopLevelSpec } from 'vega-lite';
import { distribution, median } from '../../engine/common/stats.ts';
import type { CellResult, RunResult, Trial } from '../results/types.ts';
import type { Chart } from './charts.ts';
import { unavailableLine } from '../results/unavailable-text.ts';
import { escapeHtml, fmtBytes, fmtInt, fmtMs, fmtSeconds, PAGE_BYTES } from './format.ts';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

/** "min / median / max" of a cell's trials, sorting on the median; '—' without trials. */
function dist(values: number[], f: (n: number) => string): { text: string; v: number | '' } {
  const d = distribution(values);
  if (d === null) return { text: '—', v: '' };
  return { text: `${f(d.min)} / ${f(d.median)} / ${f(d.max)}`, v: d.median };
}

/** The median of a cell's trials, formatted; '—' without trials. */
function medianCell(values: number[], f: (n: number) => string): { text: string; v: number | '' } {
  const m = median(values);
  return m === null ? { text: '—', v: '' } : { text: f(m), v: m };
}

function faultTrials(c: CellResult): Trial[] {
  return (c.trials ?? []).filter((t) => t.fault || t.suspect);
}

/** Problems the checker must never find, per trial; '' when none. */
export function integrityText(l: Trial['ledger']): string {
  return [
    l.corrupt ? `${fmtInt(l.corrupt)} corrupt batch${l.corrupt === 1 ? '' : 'es'} served` : '',
    l.replicasDisagree ? `replicas disagree below HW (${fmtInt(l.replicasDisagree)} partition${l.replicasDisagree === 1 ? '' : 's'})` : '',
    l.replicasDiverged ? `replica bytes diverge (${fmtInt(l.replicasDiverged)} partition${l.replicasDiverged === 1 ? '' : 's'})` : '',
    l.hwWentBack ? `HW went back ${fmtInt(l.hwWentBack)} offsets` : '',
    l.offsetChanged ? `${fmtInt(l.offsetChanged)} acked record${l.offsetChanged === 1 ? '' : 's'} at another offset` : '',
    l.inconsistentOffsets ? `${fmtInt(l.inconsistentOffsets)} inconsistent offset${l.inconsistentOffsets === 1 ? '' : 's'}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/** Per kind of problem: in how many trials, and the worst. */
function integritySummary(ts: Trial[]): string {
  const kinds: Array<[keyof Trial['ledger'], string]> = [
    ['corrupt', 'corrupt batches served'],
    ['replicasDisagree', 'replicas disagree below HW'],
    ['replicasDiverged', 'replica bytes diverge'],
    ['hwWentBack', 'HW went back'],
    ['offsetChanged', 'acked records at another offset'],
    ['inconsistentOffsets', 'inconsistent offsets'],
  ];
  return kinds
    .map(([k, label]) => {
      const hits = ts.map((t) => Number(t.ledger[k] ?? 0)).filter((v) => v > 0);
      return hits.length ? `${label} in ${hits.length} of ${ts.length} trials (max ${fmtInt(Math.max(...hits))})` : '';
    })
    .filter(Boolean)
    .join('; ');
}

/** Fault trials whose HW going back was not measured (its HW before the fault unknown), said beside the integrity text; '' when none. */
function hwNotMeasuredText(ts: Trial[]): string {
  const n = ts.filter((t) => t.fault && t.ledger.hwWentBack === undefined).length;
  return n ? `HW going back not measured in ${n} of ${ts.length} trials` : '';
}

/** A ledger count summed over trials ('—' when no trial recorded it: not sampled, or an older run.json). */
function summedLedgerCount(ts: Trial[], key: 'ackedWithoutOffset' | 'ackedWhileIsrShrunk'): { text: string; v: number | '' } {
  const counts = ts.map((t) => t.ledger[key]).filter((v): v is number => typeof v === 'number');
  if (counts.length === 0) return { text: '—', v: '' };
  const sum = counts.reduce((a, b) => a + b, 0);
  return { text: fmtInt(sum), v: sum };
}

/** A cell with fault trials: checked ones, or ones whose cluster did not come back. */
const hasFaulted = (c: CellResult) => faultTrials(c).length > 0 || (c.unavailableTrials?.length ?? 0) > 0;

export function hasFaultTrials(run: RunResult): boolean {
  return run.cells.some(hasFaulted);
}

/** Trials whose cluster did not come back after the fault, one line each (a finding; not in the loss figures); '' when none. */
function unavailableList(run: RunResult): string {
  const items = run.cells.flatMap((c) => (c.unavailableTrials ?? []).map((u) => `<li><b>${escapeHtml(c.id)} trial ${u.index + 1}</b>: ${escapeHtml(unavailableLine(u))}</li>`));
  if (items.length === 0) return '';
  return `<p class="bad">Unavailable after the fault: the cluster did not come back within the recovery timeout, so these trials were not checked; their acknowledged records are neither lost nor kept in the figures above, and an expectation on a ledger figure is NOT EVALUATED for them.</p><ul class="unavailable-trials">${items.join('')}</ul>`;
}

/** One row per cell with fault trials: min / median / max over its trials. */
export function lossDistributionTable(run: RunResult): string {
  const cells = run.cells.filter(hasFaulted);
  if (cells.length === 0) return '';
  const td = (d: { text: string; v: number | '' }, cls = '') => `<td class="num${cls ? ` ${cls}` : ''}" data-v="${d.v}">${escapeHtml(d.text)}</td>`;
  const head = [
    ['cell', ''],
    ['trials', 'checked trials with a fault (suspect ones in brackets), and trials whose cluster did not come back (unavailable, not checked)'],
    ['acked lost min / median / max', 'acknowledged records missing after recovery, over the trials'],
    ['lost per trial', ''],
    ['acked without offset', 'acknowledged records whose delivery report carried no offset (librdkafka reports a retry the broker found a duplicate of that way), over the trials: counted in acked, they must survive and are found by their identity'],
    ['acked while ISR shrunk', 'acks=all: records acknowledged while their partition\'s ISR held fewer replicas than the replication factor (sampled every 250 ms), over the trials; — where not sampled'],
    ['loss window min / median / max', 'how long before the cut the oldest lost record had been acknowledged, over trials that lost records'],
    ['guest dirty at cut (median)', 'nr_dirty in the cut guests just before the cut'],
    ['back in service (median)', 'from the restart (VM: the reboot) until every partition is led again and the replicas caught up'],
    ['truncated (median)', 'bytes recovery cut from the log tails'],
    ['trial cycle min / median / max', 'fresh cluster, load, fault, recovery, check, stop'],
    ['integrity', 'corrupt batches served, replicas disagreeing below HW, HW gone back, records at another offset: all must be 0 (and whether the HW going back was measured)'],
  ]
    .map(([l, t], i) => `<th scope="col"${i > 0 && i !== 3 && i !== 11 ? ' class="num"' : ''}${t ? ` title="${escapeHtml(t)}"` : ''}>${escapeHtml(l)}</th>`)
    .join('');
  const rows = cells.map((c) => {
    const ts = faultTrials(c);
    const lost = ts.map((t) => t.ledger.ackedLost);
    const windows = ts.map((t) => t.fault?.lossWindowSec).filter((v): v is number => typeof v === 'number');
    const dirty = ts.map((t) => t.fault?.guestDirtyBeforeCut?.nrDirty).filter((v): v is number => typeof v === 'number');
    const recover = ts.map((t) => t.fault?.recoverMs).filter((v): v is number => typeof v === 'number');
    const truncated = ts.filter((t) => t.fault?.recovery.some((r) => r.bytesTruncated !== undefined)).map((t) => t.fault!.recovery.reduce((a, r) => a + (r.bytesTruncated ?? 0), 0));
    const cycles = ts.map((t) => t.cycleMs).filter((v): v is number => typeof v === 'number');
    const suspect = ts.filter((t) => t.suspect).length;
    const integrity = integritySummary(ts);
    const unmeasured = hwNotMeasuredText(ts);
    const anyLost = lost.some((n) => n > 0);
    return (
      '<tr>' +
      `<th scope="row" data-v="${escapeHtml(c.id)}">${escapeHtml(c.id)}</th>` +
      `<td class="num" data-v="${ts.length}">${ts.length}${suspect ? ` <span class="warn" title="${escapeHtml(ts.filter((t) => t.note).map((t) => `trial ${t.index + 1}: ${t.note}`).join('\n'))}">(${suspect} suspect)</span>` : ''}${unavailableBadge(c)}</td>` +
      td(dist(lost, fmtInt), anyLost ? 'bad' : '') +
      `<td class="mono">${escapeHtml(lost.map(fmtInt).join(', '))}</td>` +
      td(summedLedgerCount(ts, 'ackedWithoutOffset')) +
      td(summedLedgerCount(ts, 'ackedWhileIsrShrunk')) +
      td(dist(windows, fmtSeconds)) +
      td(medianCell(dirty, (pages) => fmtBytes(pages * PAGE_BYTES))) +
      td(medianCell(recover, fmtMs)) +
      td(medianCell(truncated, fmtBytes)) +
      td(dist(cycles, fmtMs)) +
      `<td${integrity ? ' class="bad"' : ''} style="white-space:nowrap">${escapeHtml([integrity || 'clean', unmeasured].filter(Boolean).join('; '))}</td>` +
      '</tr>'
    );
  });
  return `<table class="sortable" id="loss-distribution-table"><thead><tr>${head}</tr></thead><tbody>${rows.join('\n')}</tbody></table>${unavailableList(run)}`;
}

function unavailableBadge(c: CellResult): string {
  const us = c.unavailableTrials ?? [];
  return us.length ? ` <span class="bad" title="${escapeHtml(us.map((u) => `trial ${u.index + 1}: ${u.failed}`).join('\n'))}">+ ${us.length} unavailable</span>` : '';
}

interface TimelineRow {
  trial: string;
  cell: string;
  t: number;
  t2: number;
  acked: number;
  lost: number;
  lostFraction: number;
}

/** Lost records by acknowledgement time relative to the cut, one row per trial; null when no trial lost anything. */
export function lossWindowChart(run: RunResult): Chart | null {
  const values: TimelineRow[] = [];
  const rows: string[] = [];
  const notes: string[] = [];
  for (const c of run.cells) {
    for (const t of c.trials ?? []) {
      const tl = t.fault?.lossTimeline;
      if (!tl || tl.bins.length === 0) continue;
      const label = `${c.id} · trial ${t.index + 1}${t.suspect ? ' (suspect)' : ''}`;
      rows.push(label);
      for (const b of tl.bins) {
        values.push({
          trial: label,
          cell: c.id,
          t: b.t / 1000,
          t2: (b.t + tl.binMs) / 1000,
          acked: b.acked,
          lost: b.lost,
          lostFraction: b.acked > 0 ? Math.min(1, b.lost / b.acked) : b.lost > 0 ? 1 : 0,
        });
      }
    }
  }
  if (!values.some((v) => v.lost > 0)) return null;
  const tooltip = [
    { field: 'trial', type: 'nominal' },
    { field: 't', type: 'quantitative', title: 'acknowledged at (s from the cut)', format: '.2f' },
    { field: 'acked', type: 'quantitative', title: 'records acknowledged in this bin', format: ',' },
    { field: 'lost', type: 'quantitative', title: 'of them lost', format: ',' },
  ];
  const y = { field: 'trial', type: 'nominal', sort: rows, title: null, axis: { labelLimit: 320 } };
  const spec = {
    $schema: SCHEMA,
    width: 700,
    height: { step: 22 },
    data: { values },
    encoding: { y },
    layer: [
      {
        mark: { type: 'rect', color: '#c9d3de', tooltip: true },
        encoding: {
          x: { field: 't', type: 'quantitative', title: 'acknowledgement time relative to the cut (s; the cut is at 0)' },
          x2: { field: 't2' },
          tooltip,
        },
      },
      {
        transform: [{ filter: 'datum.lost > 0' }],
        mark: { type: 'rect', tooltip: true },
        encoding: {
          x: { field: 't', type: 'quantitative' },
          x2: { field: 't2' },
          color: {
            field: 'lostFraction',
            type: 'quantitative',
            title: 'share lost',
            scale: { domain: [0, 1], range: ['#f7c4b8', '#b2182b'] },
            legend: { format: '.0%' },
          },
          tooltip,
        },
      },
      {
        data: { values: [{ t: 0 }] },
        mark: { type: 'rule', color: '#222', strokeWidth: 1.5, strokeDash: [4, 3] },
        encoding: { x: { field: 't', type: 'quantitative' }, y: null },
      },
    ],
    config: { font: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif', view: { stroke: '#ddd' } },
  } as unknown as TopLevelSpec;
  const without = run.cells.flatMap((c) => (c.trials ?? []).filter((t) => t.fault && !t.fault.lossTimeline).map((t) => `${c.id} trial ${t.index + 1}`));
  if (without.length) notes.push(`No timeline recorded for ${without.join(', ')} (an older run.json).`);
  return {
    id: 'chart-loss-window',
    title: 'Loss window',
    caption:
      'Each row is a trial; grey bins are when records were acknowledged, red bins hold records that were acknowledged and then lost ' +
      '(darker = a larger share of that bin). The dashed line is the cut. How far the red reaches left of it is the loss window.',
    spec,
    notes,
  };
}
