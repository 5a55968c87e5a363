// The claims as an HTML page (for the published site) and as terminal text.

import type { RunResult } from '../results/types.ts';
import { escapeHtml } from '../report/format.ts';
import { pageHead } from '../report/page-assets.ts';
import { verdictText, type ClaimOutcome } from './claims.ts';

const TONE: Record<ClaimOutcome['verdict'], string> = {
  supported: 'pass',
  contradicted: 'fail',
  depends: 'depends',
  'not measured yet': 'none',
};

type Judged = Omit<ClaimOutcome, 'kafka'>;

/** One engine's cell: scenario, verdict with its figures, and the run judged. */
function verdictCell(o: Judged, runHref: ((run: RunResult) => string | undefined) | undefined): string {
  const href = o.run ? runHref?.(o.run) : undefined;
  const run = o.run ? (href ? `<a href="${escapeHtml(href)}">${escapeHtml(o.run.runId)}</a>` : escapeHtml(o.run.runId)) : '<span class="muted">no run yet</span>';
  return (
    `<td data-verdict="${escapeHtml(o.verdict)}"><div class="mono">${escapeHtml(o.claim.scenario)} · ${run}</div>` +
    `<span class="verdict ${TONE[o.verdict]}">${escapeHtml(o.verdict === 'depends' ? 'depends' : o.verdict)}</span>` +
    `${o.condition ? `<div class="note">${escapeHtml(o.condition)}</div>` : ''}<div class="note">${escapeHtml(o.detail)}</div></td>`
  );
}

export function renderClaimsPage(outcomes: ClaimOutcome[], links: { home?: string; runHref?: (run: RunResult) => string | undefined } = {}): string {
  const rows = outcomes
    .map(
      (o) =>
        `<tr data-claim="${escapeHtml(o.claim.id)}" data-verdict="${escapeHtml(o.verdict)}"${o.kafka ? ` data-kafka-verdict="${escapeHtml(o.kafka.verdict)}"` : ''}>` +
        `<td>${escapeHtml(o.claim.claim)}<div class="muted mono">${escapeHtml(o.claim.id)}</div></td>` +
        `<td>${escapeHtml(o.claim.source)}</td>` +
        verdictCell(o, links.runHref) +
        (o.kafka ? verdictCell(o.kafka, links.runHref) : '<td><span class="muted">no Kafka scenario for this claim</span></td>') +
        '</tr>',
    )
    .join('\n');
  const count = (v: ClaimOutcome['verdict']) => outcomes.filter((o) => o.verdict === v).length;
  const kafkaCount = (v: ClaimOutcome['verdict']) => outcomes.filter((o) => o.kafka?.verdict === v).length;
  return `${pageHead('durolab: the source articles\' claims')}
<body>
<main>
${links.home ? `<p class="sub"><a href="${escapeHtml(links.home)}">all runs</a></p>` : ''}
<h1>The source articles' claims</h1>
<p class="sub">${outcomes.length} claims: ${count('supported')} supported, ${count('contradicted')} contradicted, ${count('depends')} depend on a condition, ${count('not measured yet')} not measured yet on durolab's broker;
on Apache Kafka ${kafkaCount('supported')} supported, ${kafkaCount('contradicted')} contradicted, ${kafkaCount('depends')} depend on a condition, ${kafkaCount('not measured yet')} not measured yet, ${outcomes.length - outcomes.filter((o) => o.kafka).length} with no Kafka scenario.
Each verdict is computed by the claim's rule (harness/claims/claims.yaml) over the latest run of its scenario on the machine the run names (Apache Kafka: the target=kafka cells of a peer scenario); absolute figures belong to that machine.</p>
<div class="table-wrap"><table id="claims-table"><thead><tr><th>claim</th><th>source</th><th>durolab's broker: scenario, verdict and figures</th><th>Apache Kafka: scenario, verdict and figures</th></tr></thead>
<tbody>${rows}</tbody></table></div>
</main>
</body>
</html>
`;
}

export function claimsText(outcomes: ClaimOutcome[]): string {
  const width = Math.max(...outcomes.map((o) => o.verdict.length));
  return outcomes
    .map((o) =>
      [
        `${o.verdict.toUpperCase().padEnd(width)}  ${o.claim.id} (${o.claim.scenario}${o.run ? `/${o.run.runId}` : ''}; source ${o.claim.source})`,
        `${' '.repeat(width)}  ${o.claim.claim}`,
        ...(o.verdict === 'depends' ? [`${' '.repeat(width)}  ${verdictText(o)}`] : []),
        `${' '.repeat(width)}  ${o.detail}`,
        ...(o.kafka
          ? [`${' '.repeat(width)}  on Apache Kafka (${o.kafka.claim.scenario}${o.kafka.run ? `/${o.kafka.run.runId}` : ''}): ${verdictText(o.kafka).toUpperCase()}: ${o.kafka.detail}`]
          : []),
      ].join('\n'),
    )
    .join('\n\n');
}
