// The report's consumer groups (workload.consumers): per cell and group, medians over the
// repetitions of records/s, MB/s, fetch and end-to-end latency, lag, the producers' p99 before
// and while a late group read, a late group's catch-up speed and the brokers' CPU per GB it was
// served, and Jepsen's poll checks (in red when not 0).
import type { RunResult } from '../results/types.ts';
import { catchUpMedians, measuredMedians, measuredRates, membershipText } from '../results/consumer-groups.ts';
import { escapeHtml, fmtInt } from './format.ts';

/** '' without consumers. */
export function consumersSection(run: RunResult): string {
  const rows: string[] = [];
  for (const c of run.cells) {
    const names = [...new Set((c.consumers ?? []).flatMap((r) => r.groups.map((g) => g.name)))];
    for (const name of names) {
      const gs = (c.consumers ?? []).flatMap((r) => r.groups.filter((g) => g.name === name));
      const checks = gs.reduce((a, g) => ({ nonMonotonic: a.nonMonotonic + g.checks.nonMonotonic, skipped: a.skipped + g.checks.skipped, neverAcked: a.neverAcked + g.checks.neverAcked, corrupt: a.corrupt + g.checks.corrupt }), { nonMonotonic: 0, skipped: 0, neverAcked: 0, corrupt: 0 });
      const bad = checks.nonMonotonic + checks.skipped + checks.corrupt > 0;
      const around = gs[0]!.producerP99Us;
      const { mbPerSec: catchUpMBps, brokerCpuMsPerGB: cpuPerGB } = catchUpMedians(gs);
      const num = (v: number) => `<td class="num" data-v="${v}">${fmtInt(v)}</td>`;
      // Not measured (no sample, no fetch answered): a dash, never 0.
      const numOr = (v: number | null) => (v === null ? '<td class="num">—</td>' : num(v));
      const measured = measuredMedians(gs);
      const rates = measuredRates(gs);
      rows.push(
        `<tr><th scope="row" data-v="${escapeHtml(c.id)}">${escapeHtml(c.id)}</th><td>${escapeHtml(name)}</td><td>${escapeHtml(gs[0]!.start)}${gs[0]!.startAtSec ? ` at ${gs[0]!.startAtSec} s` : ''}${escapeHtml(membershipText(gs[0]!, true))}</td>` +
          numOr(rates.recordsPerSec) +
          (rates.mbPerSec === null ? '<td class="num">—</td>' : `<td class="num" data-v="${rates.mbPerSec}">${rates.mbPerSec.toFixed(1)}</td>`) +
          numOr(measured.fetchP99Us) +
          numOr(measured.e2eP50Us) +
          numOr(measured.e2eP99Us) +
          numOr(measured.lagMax) +
          `<td class="num">${around ? `${fmtInt(around.before)} &rarr; ${fmtInt(around.during)}` : '—'}</td>` +
          `<td class="num">${typeof gs[0]!.cacheHitRatio === 'number' ? `${(gs[0]!.cacheHitRatio * 100).toFixed(0)} %` : '—'}</td>` +
          (catchUpMBps === null ? '<td class="num">—</td>' : `<td class="num" data-v="${catchUpMBps}">${catchUpMBps.toFixed(0)}</td>`) +
          (cpuPerGB === null ? '<td class="num">—</td>' : num(cpuPerGB)) +
          `<td class="${bad ? 'bad' : ''}">${escapeHtml(`${checks.nonMonotonic} back, ${checks.skipped} skipped, ${checks.corrupt} corrupt; ${checks.neverAcked} never acknowledged`)}</td></tr>`,
      );
    }
  }
  if (rows.length === 0) return '';
  return (
    '<section id="consumers"><h2>Consumers</h2>' +
    '<p class="muted">Each group reads every partition, one fetch loop per partition, while the producers write. End-to-end: the ledger\'s send time to the fetch answer (one host clock, ms resolution). Poll checks (Jepsen): an offset served below one already consumed (back), acknowledged offsets passed over (skipped), corrupt batches; records never acknowledged are allowed and counted. Producer p99: medians of the per-second p99 before a late group started and while it read (first repetition). Catch-up: a group starting behind, from its start until every partition\'s lag first reached 0; the brokers\' CPU meanwhile per 10<sup>9</sup> bytes served (host processes only).</p>' +
    '<div class="table-wrap"><table class="sortable" id="consumers-table"><thead><tr><th scope="col">cell</th><th scope="col">group</th><th scope="col">start</th><th scope="col" class="num">records/s</th><th scope="col" class="num">MB/s</th><th scope="col" class="num">fetch p99 µs</th><th scope="col" class="num">e2e p50 µs</th><th scope="col" class="num">e2e p99 µs</th><th scope="col" class="num">lag max</th><th scope="col" class="num">producer p99 µs before &rarr; during</th><th scope="col" class="num" title="1 - device read bytes / bytes served while the group read (first repetition; device reads count every reader)">cache hit</th><th scope="col" class="num" title="a group starting behind: bytes served until every partition\'s lag first reached 0, over that time (median over repetitions)">catch-up MB/s</th><th scope="col" class="num" title="CPU time of the broker processes (utime + stime from /proc/PID/stat, all threads) while the group caught up, per 10^9 bytes served">broker CPU ms/GB</th><th scope="col">poll checks</th></tr></thead>' +
    `<tbody>${rows.join('\n')}</tbody></table></div></section>`
  );
}
