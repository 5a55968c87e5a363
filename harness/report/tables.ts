// HTML tables of the run report. Numeric cells carry their raw value in data-v so the
// page's sorter orders by value, not by formatted text.

import type { CellResult, RunResult, Trial } from '../results/types.ts';
import { ranAsHostProcesses } from '../targets/run-targets.ts';
import { cellTargetName } from '../results/cell-target.ts';
import { STATE_LABEL, expectationState } from '../results/verdict.ts';
import {
  errorCount,
  escapeHtml,
  fmtBytes,
  fmtInt,
  fmtMB,
  fmtMs,
  fmtPages,
  PAGE_BYTES,
  fmtPct,
  fmtRate,
  fmtSeconds,
  fmtUs,
  isMeasured,
} from './format.ts';
import { integrityText } from './loss-section.ts';

function num(value: number | undefined | null, text: string, extraClass = '', title = ''): string {
  const v = value == null || !Number.isFinite(value) ? '' : String(value);
  const t = title ? ` title="${escapeHtml(title)}"` : '';
  return `<td class="num${extraClass ? ` ${extraClass}` : ''}" data-v="${v}"${t}>${escapeHtml(v === '' ? '—' : text)}</td>`;
}

function txt(value: unknown, cls = ''): string {
  return `<td${cls ? ` class="${cls}"` : ''}>${escapeHtml(value)}</td>`;
}

function th(label: string, title?: string, numeric = false): string {
  return `<th scope="col"${numeric ? ' class="num"' : ''}${title ? ` title="${escapeHtml(title)}"` : ''}>${escapeHtml(label)}</th>`;
}

function statusCell(cell: CellResult): string {
  const label = cell.status === 'ok' ? 'ok' : cell.status;
  const note = cell.note ? `<div class="note">${escapeHtml(cell.note)}</div>` : '';
  // A window that averages a ramp is said where its figures are read.
  const ramp = cell.steadiness?.state === 'ramping' ? ` <span class="status status-not-steady warn" title="${escapeHtml(cell.steadiness.reason)}">not steady</span>` : '';
  return `<td data-v="${escapeHtml(cell.status)}"><span class="status status-${escapeHtml(cell.status)}">${escapeHtml(label)}</span>${ramp}${note}</td>`;
}

function paramKeys(run: RunResult): string[] {
  const keys: string[] = [];
  for (const c of run.cells) for (const k of Object.keys(c.params ?? {})) if (!keys.includes(k)) keys.push(k);
  return keys;
}

/** Puts a column behind the "all columns" toggle: class "extra" on its th or td. */
function markExtra(tag: string): string {
  return tag.replace(/^<(td|th)([^>]*)>/, (_m, t: string, attrs: string) =>
    / class="/.test(attrs) ? `<${t}${attrs.replace(/ class="([^"]*)"/, ' class="$1 extra"')}>` : `<${t} class="extra"${attrs}>`,
  );
}

/** Columns a laptop screen shows first, per scenario kind; the rest sit behind a toggle. */
const FAULT_COLUMNS = new Set(['cell', 'status', 'acked', 'acked lost', 'inconsistent offsets', 'errors']);
const PERFORMANCE_COLUMNS = new Set(['cell', 'status', 'records/s', 'MB/s', 'p50 µs', 'p99 µs', 'p99.9 µs', 'acked lost']);

export function summaryTable(run: RunResult): string {
  const keys = paramKeys(run);
  const fault = run.cells.some((c) => (c.trials ?? []).some((t) => t.fault));
  const primary = fault ? FAULT_COLUMNS : PERFORMANCE_COLUMNS;
  const columns: Array<{ label: string; head: string }> = [
    { label: 'cell', head: th('cell') },
    { label: 'status', head: th('status') },
    // The cell's name already spells its settings: their own columns sit behind the toggle.
    ...keys.map((k) => ({ label: `param ${k}`, head: th(k, 'scenario parameter') })),
    { label: 'records/s', head: th('records/s', 'acknowledged records per second', true) },
    { label: 'MB/s', head: th('MB/s', 'payload megabytes (10^6) per second', true) },
    { label: 'p50 µs', head: th('p50 µs', 'produce latency, 50th percentile', true) },
    { label: 'p99 µs', head: th('p99 µs', undefined, true) },
    { label: 'p99.9 µs', head: th('p99.9 µs', undefined, true) },
    { label: 'max µs', head: th('max µs', undefined, true) },
    { label: 'errors', head: th('errors', 'failed requests, all kinds', true) },
    { label: 'acked', head: th('acked', 'records acknowledged to the producer', true) },
    { label: 'acked lost', head: th('acked lost', 'acknowledged records missing afterwards', true) },
    { label: 'duplicates', head: th('duplicates', undefined, true) },
    { label: 'inconsistent offsets', head: th('inconsistent offsets', 'offsets served with two different records, or acknowledged offsets now holding another record', true) },
    { label: 'flushes', head: th('flushes', 'fsync/fdatasync calls by the broker', true) },
    { label: 'segments', head: th('segments', 'segment files at the end', true) },
  ];
  const extra = columns.map((c) => !primary.has(c.label));
  const place = (tags: string[]) => tags.map((t, i) => (extra[i] ? markExtra(t) : t)).join('');
  const rows = run.cells.map((c) => {
    const m = isMeasured(c);
    const show = (v: number | undefined, text: (n: number) => string, cls = '') => (m ? num(v, v == null ? '' : text(v), cls) : num(null, ''));
    const latency = c.latencyUs.count > 0 ? c.latencyUs : undefined;
    const errors = errorCount(c);
    const errorTitle = Object.entries(c.errors ?? {})
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ');
    const tags = [
      `<th scope="row" data-v="${escapeHtml(c.id)}">${escapeHtml(c.id)}</th>`,
      statusCell(c),
      ...keys.map((k) => (c.params?.[k] === undefined ? txt('') : typeof c.params[k] === 'number' ? num(c.params[k] as number, String(c.params[k])) : txt(c.params[k]))),
      // Not measured (no repetition finished its load): a dash, never 0.
      show(c.throughput?.recordsPerSec, fmtRate),
      show(c.throughput?.mbPerSec, fmtMB),
      show(latency?.p50, fmtUs),
      show(latency?.p99, fmtUs),
      show(latency?.p999, fmtUs),
      show(latency?.max, fmtUs),
      m ? num(errors, fmtInt(errors), errors ? 'bad' : '', errorTitle) : num(null, ''),
      show(c.ledger.acked, fmtInt),
      show(c.ledger.ackedLost, fmtInt, c.ledger.ackedLost > 0 ? 'bad' : ''),
      show(c.ledger.duplicates, fmtInt, c.ledger.duplicates > 0 ? 'bad' : ''),
      show(c.ledger.inconsistentOffsets, fmtInt, (c.ledger.inconsistentOffsets ?? 0) > 0 ? 'bad' : ''),
      show(c.broker.flushes, fmtInt),
      show(c.broker.segments, fmtInt),
    ];
    return `<tr class="${m ? '' : 'not-measured'}" data-cell="${escapeHtml(c.id)}">${place(tags)}</tr>`;
  });
  const hidden = extra.filter(Boolean).length;
  return (
    `<p class="column-toggle"><label><input type="checkbox" id="summary-all-columns" data-toggles="summary-table"> show all ${columns.length} columns (${hidden} more: ${escapeHtml(columns.filter((_, i) => extra[i]).map((c) => c.label.replace(/^param /, '')).join(', '))})</label></p>` +
    `<table class="sortable compact" id="summary-table"><thead><tr>${place(columns.map((c) => c.head))}</tr></thead>` +
    `<tbody>${rows.join('\n')}</tbody></table>`
  );
}

function trialRecovery(t: Trial) {
  // Only what the brokers measured (NATS reports no log recovery; Kafka's may lack its time or a partition's bytes): each figure over the brokers that gave it.
  const rec = t.fault?.recovery ?? [];
  const durations = rec.map((r) => r.durationMs).filter((v): v is number => v !== undefined);
  const truncated = rec.filter((r): r is typeof r & { bytesTruncated: number } => r.bytesTruncated !== undefined);
  return {
    durationMs: durations.length ? Math.max(...durations) : undefined,
    bytes: truncated.length ? truncated.reduce((a, r) => a + r.bytesTruncated, 0) : undefined,
    batches: truncated.length && truncated.every((r) => r.batchesTruncated !== undefined) ? truncated.reduce((a, r) => a + r.batchesTruncated!, 0) : undefined,
  };
}

/** One broker's log recovery in words: what it did not report or measure is said, never shown as 0. */
function brokerRecoveryText(x: NonNullable<Trial['fault']>['recovery'][number]): string {
  if (x.durationMs === undefined && x.bytesTruncated === undefined) return `broker ${x.broker}: log recovery not reported`;
  const time = x.durationMs === undefined ? 'time not reported' : fmtMs(x.durationMs);
  const cut = x.bytesTruncated === undefined ? 'truncation not measured' : `${fmtBytes(x.bytesTruncated)}${x.batchesTruncated === undefined ? '' : ` in ${x.batchesTruncated} batches`}`;
  return `broker ${x.broker}: ${time}, ${cut}`;
}

function dirtyCell(d: { nrDirty: number; nrWriteback: number } | undefined): string {
  if (!d) return txt('—');
  const title = `nr_dirty ${fmtPages(d.nrDirty)} pages, nr_writeback ${fmtPages(d.nrWriteback)} pages`;
  return `<td class="num" data-v="${d.nrDirty}" title="${escapeHtml(title)}">${escapeHtml(`${fmtBytes(d.nrDirty * PAGE_BYTES)} / ${fmtBytes(d.nrWriteback * PAGE_BYTES)}`)}</td>`;
}

function faultText(t: Trial): string {
  const f = t.fault;
  if (!f) return `trial ${t.index + 1}: no fault`;
  return `trial ${t.index + 1} · ${f.kind} of broker${f.targets.length === 1 ? '' : 's'} ${f.targets.join(', ')} at ${fmtMs(f.atMs)}${f.when ? ` (${f.when})` : ''}`;
}

function integrityCell(text: string, bad: boolean): string {
  return `<td${bad ? ' class="bad"' : ''} style="white-space:nowrap">${escapeHtml(text)}</td>`;
}

/** A few offsets keep the column narrow; run.json holds the rest of the sample. */
function offsetsText(offsets: number[]): string {
  if (offsets.length === 0) return '—';
  return offsets.slice(0, 6).join(', ') + (offsets.length > 6 ? ', …' : '');
}

export function lossTable(run: RunResult): string {
  const head = [
    th('cell / trial'),
    th('accelerator'),
    th('acked', 'acknowledged to the producer', true),
    th('acked lost', 'acknowledged but missing after the fault', true),
    th('loss', 'acked lost / acked', true),
    th('unacked present', 'records present that were never acknowledged (allowed)', true),
    th('loss window', 'how long before the cut the oldest lost record was acknowledged', true),
    th('recovery', 'longest broker recovery after the fault', true),
    th('truncated', 'bytes (batches) cut from the log tail by recovery', true),
    th('guest dirty / writeback', 'nr_dirty / nr_writeback in the VM page cache just before the cut (4 KiB pages)', true),
    th('integrity', 'corrupt batches served, replicas disagreeing below HW, HW gone back, acked records at another offset: all must be 0'),
    th('first lost offsets'),
  ];
  const groups = run.cells.map((c) => {
    const trials = c.trials ?? [];
    const windows = trials.map((t) => t.fault?.lossWindowSec).filter((w): w is number => typeof w === 'number');
    const recs = trials.map(trialRecovery);
    const durations = recs.map((r) => r.durationMs).filter((v): v is number => v !== undefined);
    const bytes = recs.map((r) => r.bytes).filter((v): v is number => v !== undefined);
    const batches = recs.map((r) => r.batches).filter((v): v is number => v !== undefined);
    const maxWindow = windows.length ? Math.max(...windows) : undefined;
    const maxRecovery = durations.length ? Math.max(...durations) : undefined;
    const sumBytes = bytes.length ? bytes.reduce((a, b) => a + b, 0) : undefined;
    // Batches only when every trial's recovery counted them (Kafka's gives bytes alone).
    const sumBatches = batches.length && batches.length === bytes.length ? batches.reduce((a, b) => a + b, 0) : undefined;
    const dirty = trials.map((t) => t.fault?.guestDirtyBeforeCut).filter((d) => d !== undefined);
    const maxDirty = dirty.length
      ? { nrDirty: Math.max(...dirty.map((d) => d!.nrDirty)), nrWriteback: Math.max(...dirty.map((d) => d!.nrWriteback)) }
      : undefined;
    const l = c.ledger;
    const trialUnacked = trials.map((t) => t.ledger.unackedPresent).filter((v): v is number => v !== undefined);
    const unacked = l.unackedPresent ?? (trialUnacked.length ? trialUnacked.reduce((a, b) => a + b, 0) : undefined);
    const lostSample = l.lostOffsetsSample?.length ? l.lostOffsetsSample : trials.flatMap((t) => t.ledger.lostOffsetsSample ?? []).slice(0, 8);
    const lossFraction = l.acked > 0 ? l.ackedLost / l.acked : undefined;
    const cellRow =
      `<tr class="cell-row${isMeasured(c) ? '' : ' not-measured'}">` +
      `<th scope="row" data-v="${escapeHtml(c.id)}">${escapeHtml(c.id)}${trials.length ? ` <span class="muted">(${trials.length} trial${trials.length === 1 ? '' : 's'})</span>` : ''}</th>` +
      txt(c.accelerator ?? (ranAsHostProcesses(cellTargetName(run, c)) ? 'none (process)' : '—'), c.accelerator === 'tcg' ? 'warn' : '') +
      num(l.acked, fmtInt(l.acked)) +
      num(l.ackedLost, fmtInt(l.ackedLost), l.ackedLost > 0 ? 'bad' : '') +
      num(lossFraction, lossFraction === undefined ? '' : fmtPct(lossFraction), l.ackedLost > 0 ? 'bad' : '') +
      num(unacked, unacked === undefined ? '' : fmtInt(unacked)) +
      num(maxWindow, maxWindow === undefined ? '' : fmtSeconds(maxWindow)) +
      num(maxRecovery, maxRecovery === undefined ? '' : fmtMs(maxRecovery)) +
      num(sumBytes, sumBytes === undefined ? '' : `${fmtBytes(sumBytes)}${sumBatches === undefined ? '' : ` (${fmtInt(sumBatches)})`}`) +
      dirtyCell(maxDirty) +
      integrityCell(integrityText(l) || (trials.length ? 'clean' : '—'), integrityText(l) !== '') +
      txt(offsetsText(lostSample), 'mono') +
      '</tr>';
    const trialRows = trials.map((t) => {
      const r = trialRecovery(t);
      const tl = t.ledger;
      const frac = tl.acked > 0 ? tl.ackedLost / tl.acked : undefined;
      const recoveryDetail = (t.fault?.recovery ?? []).map(brokerRecoveryText).join('; ');
      return (
        '<tr class="trial-row">' +
        `<td class="trial-label" title="${escapeHtml([t.fault ? `${fmtInt(t.fault.ackedBeforeCut)} records acknowledged before the fault` : '', t.note ?? ''].filter(Boolean).join('\n'))}">${escapeHtml(faultText(t))}${t.suspect ? ` <span class="warn suspect">suspect: ${escapeHtml(t.note ?? '')}</span>` : ''}</td>` +
        txt('') +
        num(tl.acked, fmtInt(tl.acked)) +
        num(tl.ackedLost, fmtInt(tl.ackedLost), tl.ackedLost > 0 ? 'bad' : '') +
        num(frac, frac === undefined ? '' : fmtPct(frac), tl.ackedLost > 0 ? 'bad' : '') +
        num(tl.unackedPresent, tl.unackedPresent === undefined ? '' : fmtInt(tl.unackedPresent)) +
        num(t.fault?.lossWindowSec, t.fault?.lossWindowSec === undefined ? '' : fmtSeconds(t.fault.lossWindowSec)) +
        num(r.durationMs, r.durationMs === undefined ? '' : fmtMs(r.durationMs), '', recoveryDetail) +
        num(r.bytes, r.bytes === undefined ? '' : `${fmtBytes(r.bytes)}${r.batches === undefined ? '' : ` (${fmtInt(r.batches)})`}`) +
        dirtyCell(t.fault?.guestDirtyBeforeCut) +
        integrityCell(integrityText(tl) || 'clean', integrityText(tl) !== '') +
        txt(offsetsText(tl.lostOffsetsSample ?? []), 'mono') +
        '</tr>'
      );
    });
    // One tbody per cell so sorting moves a cell together with its trials.
    return `<tbody>${cellRow}${trialRows.join('')}</tbody>`;
  });
  return `<table class="sortable" id="loss-table"><thead><tr>${head.join('')}</tr></thead>${groups.join('\n')}</table>`;
}

export function expectationsTable(run: RunResult): string {
  if (run.expectations.length === 0) return '<p class="muted">The scenario states no expectations.</p>';
  const rows = run.expectations.map(
    (e) => {
      const state = expectationState(e);
      const [cls, status] = ({ pass: ['pass', 'ok'], fail: ['fail', 'failed'], 'not-evaluated': ['not-evaluated', 'skipped'] } as const)[state];
      // A NOT EVALUATED detail is its reason; say it once, labelled.
      const body =
        state === 'not-evaluated' && e.reason
          ? `<div class="reason"><b>why not evaluated:</b> ${escapeHtml(e.reason)}</div>`
          : escapeHtml(e.detail);
      return `<tr class="${cls}" data-state="${state}"><td><span class="status status-${status}">${STATE_LABEL[state]}</span></td>` +
      `<td class="mono">${escapeHtml(e.expression)}</td><td>${body}</td></tr>`;
    },
  );
  return `<table id="expectations-table"><thead><tr>${th('')}${th('expectation')}${th('detail')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function settingValue(v: unknown): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/**
 * An environment line of the engine's native parts ("native: AVX-512 … ISA-L 2.30.0 … (N-API addon /path)",
 * "fs.writeSync (fallback: /path … does not exist)"): whole in a local report; published, only the
 * implementation's name and whether it was a fallback, since the rest names local paths.
 */
export function engineImplementation(line: string, publish = false): string {
  if (!publish) return line;
  const name = line.split(/[: (]/, 1)[0] ?? line;
  return line.includes('(fallback') ? `${name} (fallback)` : name;
}

export function environmentTable(run: RunResult, opts: { publish?: boolean } = {}): string {
  const e = run.environment;
  const started = Date.parse(run.startedAt);
  const ended = run.endedAt ? Date.parse(run.endedAt) : NaN;
  const accels = [...new Set(run.cells.map((c) => c.accelerator).filter(Boolean))];
  // A published page names the machine by its facts, never by its host name or local paths.
  const rows: Array<[string, string]> = [
    ['target', run.target],
    // What each target's system is (target: kafka: Apache Kafka's version and the JVM).
    ...Object.entries({ ...(run.targetInfo ? { [run.target]: run.targetInfo } : {}), ...(run.targetInfos ?? {}) }).map(
      ([kind, info]): [string, string] => [`${kind} target`, Object.entries(info).map(([k, v]) => `${k} ${v}`).join(', ')],
    ),
    ['accelerator', accels.length ? accels.join(', ') : run.cells.length > 0 && run.cells.every((c) => ranAsHostProcesses(cellTargetName(run, c))) ? 'none (host processes)' : 'not recorded'],
    ...(opts.publish ? [] : ([['host', e.hostname]] as Array<[string, string]>)),
    ['CPU', e.cpu],
    ['cores', String(e.cores)],
    ['memory', fmtBytes(e.memoryBytes)],
    ...(e.memoryReturn ? ([['freed memory', e.memoryReturn]] as Array<[string, string]>) : []),
    ['kernel', e.kernel],
    ['OS', e.os],
    ['Node.js', e.node],
    ...(opts.publish ? [] : ([['data directory', e.dataDir]] as Array<[string, string]>)),
    ['filesystem', e.filesystem],
    ['disk', e.device],
    // Which native code the engine ran (run.json keeps the detail; a published page names the implementation only).
    ...(e.crc32c ? ([['engine CRC-32C', engineImplementation(e.crc32c, opts.publish)]] as Array<[string, string]>) : []),
    ...(e.pwrite ? ([['engine write path', engineImplementation(e.pwrite, opts.publish)]] as Array<[string, string]>) : []),
    ['started', run.startedAt],
    ['ended', run.endedAt ?? 'not recorded (run did not finish)'],
    ['duration', Number.isFinite(ended - started) ? fmtSeconds((ended - started) / 1000) : '—'],
    ['git commit', run.gitCommit ?? 'unknown'],
    ['scenario file', run.scenario.file],
  ];
  const env = rows.map(([k, v]) => `<tr><th scope="row">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('');
  const settings = Object.entries(run.settings ?? {})
    .map(([k, v]) => `<tr><th scope="row">${escapeHtml(k)}</th><td class="mono">${escapeHtml(settingValue(v))}</td></tr>`)
    .join('');
  return (
    `<div class="two-col"><table class="kv" id="environment-table"><caption>Machine</caption><tbody>${env}</tbody></table>` +
    `<table class="kv" id="settings-table"><caption>Settings</caption><tbody>${settings || '<tr><td class="muted">none recorded</td></tr>'}</tbody></table></div>`
  );
}
