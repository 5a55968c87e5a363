// The report's consumer groups (workload.consumers): per cell and group, medians over the
// repetitions of records/s, MB/s, fetch and end-to-end latency, lag, the producers' p99 before
// and while a late group read, and Jepsen's poll checks (in red when not 0).
import { median } from '../../engine/common/stats.ts';
import type { RunResult } from '../results/types.ts';
import type { ConsumerGroupResult } from '../workload/consumers.ts';
import { producerP99Around } from '../runner/consumer-lines.ts';
import { escapeHtml, fmtInt } from './format.ts';

/** '' without consumers. */
export function consumersSection(run: RunResult): string {
  const warmupSec = (run.settings.workload as { warmupSec?: number } | undefined)?.warmupSec ?? 0;
  const rows: string[] = [];
  for (const c of run.cells) {
    const names = [...new Set((c.consumers ?? []).flatMap((r) => r.groups.map((g) => g.name)))];
    for (const name of names) {
      const gs = (c.consumers ?? []).flatMap((r) => r.groups.filter((g) => g.name === name));
      const m = (f: (g: ConsumerGroupResult) => number) => median(gs.map(f)) ?? 0;
      const checks = gs.reduce((a, g) => ({ nonMonotonic: a.nonMonotonic + g.checks.nonMonotonic, skipped: a.skipped + g.checks.skipped, neverAcked: a.neverAcked + g.checks.neverAcked, corrupt: a.corrupt + g.checks.corrupt }), { nonMonotonic: 0, skipped: 0, neverAcked: 0, corrupt: 0 });
      const bad = checks.nonMonotonic + checks.skipped + checks.corrupt > 0;
      const around = producerP99Around(c, gs[0]!.startAtSec - warmupSec);
      const num = (v: number) => `<td class="num" data-v="${v}">${fmtInt(v)}</td>`;
      rows.push(
        `<tr><th scope="row" data-v="${escapeHtml(c.id)}">${escapeHtml(c.id)}</th><td>${escapeHtml(name)}</td><td>${escapeHtml(gs[0]!.start)}${gs[0]!.startAtSec ? ` at ${gs[0]!.startAtSec} s` : ''}</td>` +
          num(m((g) => g.recordsPerSec)) +
          `<td class="num" data-v="${m((g) => g.mbPerSec)}">${m((g) => g.mbPerSec).toFixed(1)}</td>` +
          num(m((g) => g.fetchLatencyUs.p99)) +
          num(m((g) => g.endToEndUs.p50)) +
          num(m((g) => g.endToEndUs.p99)) +
          num(m((g) => g.lag.max)) +
          `<td class="num">${around ? `${fmtInt(around.before)} &rarr; ${fmtInt(around.during)}` : '—'}</td>` +
          `<td class="num">${typeof gs[0]!.cacheHitRatio === 'number' ? `${(gs[0]!.cacheHitRatio * 100).toFixed(0)} %` : '—'}</td>` +
          `<td class="${bad ? 'bad' : ''}">${escapeHtml(`${checks.nonMonotonic} back, ${checks.skipped} skipped, ${checks.corrupt} corrupt; ${checks.neverAcked} never acknowledged`)}</td></tr>`,
      );
    }
  }
  if (rows.length === 0) return '';
  return (
    '<section id="consumers"><h2>Consumers</h2>' +
    '<p class="muted">Each group reads every partition, one fetch loop per partition, while the producers write. End-to-end: the ledger\'s send time to the fetch answer (one host clock, ms resolution). Poll checks (Jepsen): an offset served below one already consumed (back), acknowledged offsets passed over (skipped), corrupt batches; records never acknowledged are allowed and counted. Producer p99: medians of the per-second p99 before a late group started and while it read.</p>' +
    '<div class="table-wrap"><table class="sortable" id="consumers-table"><thead><tr><th scope="col">cell</th><th scope="col">group</th><th scope="col">start</th><th scope="col" class="num">records/s</th><th scope="col" class="num">MB/s</th><th scope="col" class="num">fetch p99 µs</th><th scope="col" class="num">e2e p50 µs</th><th scope="col" class="num">e2e p99 µs</th><th scope="col" class="num">lag max</th><th scope="col" class="num">producer p99 µs before &rarr; during</th><th scope="col" class="num" title="1 - device read bytes / bytes served while the group read (first repetition; device reads count every reader)">cache hit</th><th scope="col">poll checks</th></tr></thead>' +
    `<tbody>${rows.join('\n')}</tbody></table></div></section>`
  );
}
