// The report's predicted vs measured loss: per trial, the acknowledged records the settings
// allowed the fault to lose (harness/checker/loss-prediction.ts, from the ledger before the
// check), what was lost, and in red any record lost outside that window, named by partition and
// offset: a completed fdatasync or a surviving replica covered it, so the disk lied or the engine
// has a bug.
import type { RunResult } from '../results/types.ts';
import { beyondPredictionText } from '../checker/loss-prediction.ts';
import { escapeHtml, fmtInt } from './format.ts';

/** '' when no trial of the run carries a prediction. */
export function predictionTable(run: RunResult): string {
  const rows: string[] = [];
  const findings: string[] = [];
  for (const c of run.cells) {
    for (const t of c.trials ?? []) {
      const p = t.fault?.predicted;
      if (!p) continue;
      const bad = p.beyond > 0;
      rows.push(
        `<tr${bad ? ' class="bad"' : ''}><th scope="row" data-v="${escapeHtml(c.id)}">${escapeHtml(c.id)}</th>` +
          `<td class="num" data-v="${t.index + 1}">${t.index + 1}</td>` +
          `<td class="num" data-v="${p.atRisk}">${fmtInt(p.atRisk)}</td>` +
          `<td class="num" data-v="${t.ledger.ackedLost}">${fmtInt(t.ledger.ackedLost)}</td>` +
          `<td class="num${bad ? ' bad' : ''}" data-v="${p.beyond}">${fmtInt(p.beyond)}</td>` +
          `<td>${escapeHtml(p.rule)}</td></tr>`,
      );
      const text = beyondPredictionText(p);
      if (text) {
        const offsets = p.beyondSample.map((s) => `${s.partition}:${s.offset}`).join(', ');
        findings.push(`<li class="bad">${escapeHtml(`${c.id}, trial ${t.index + 1}: ${text}. Lost batches (partition:offset): ${offsets}${p.beyond > p.beyondSample.length ? ', ...' : ''}`)}</li>`);
      }
    }
  }
  if (rows.length === 0) return '';
  return (
    '<h3 id="predicted">Predicted vs measured loss</h3>' +
    '<p class="muted">At risk: the acknowledged records the settings allow the fault to lose, computed from the ack ledger before the disk is read (replication: acks and min.insync.replicas against the brokers hit; the page cache: the flush policy, O_DIRECT/O_DSYNC, the writeback sysctls and the journal commit interval). A lost record outside that set was covered by a completed flush or a surviving replica.</p>' +
    (findings.length ? `<ul>${findings.join('')}</ul>` : '<p>No trial lost a record outside the predicted window.</p>') +
    '<div class="table-wrap"><table class="sortable" id="prediction-table"><thead><tr><th scope="col">cell</th><th scope="col" class="num">trial</th><th scope="col" class="num">at risk</th><th scope="col" class="num">lost</th><th scope="col" class="num">lost beyond</th><th scope="col">rule</th></tr></thead>' +
    `<tbody>${rows.join('\n')}</tbody></table></div>`
  );
}
