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

export function renderClaimsPage(outcomes: ClaimOutcome[], links: { home?: string; runHref?: (run: RunResult) => string | undefined } = {}): string {
  const rows = outcomes
    .map((o) => {
      const href = o.run ? links.runHref?.(o.run) : undefined;
      const run = o.run ? (href ? `<a href="${escapeHtml(href)}">${escapeHtml(o.run.runId)}</a>` : escapeHtml(o.run.runId)) : '<span class="muted">no run yet</span>';
      return (
        `<tr data-claim="${escapeHtml(o.claim.id)}" data-verdict="${escapeHtml(o.verdict)}">` +
        `<td>${escapeHtml(o.claim.claim)}<div class="muted mono">${escapeHtml(o.claim.id)}</div></td>` +
        `<td>${escapeHtml(o.claim.source)}</td>` +
        `<td class="mono">${escapeHtml(o.claim.scenario)}</td>` +
        `<td><span class="verdict ${TONE[o.verdict]}">${escapeHtml(o.verdict === 'depends' ? 'depends' : o.verdict)}</span>` +
        `${o.condition ? `<div class="note">${escapeHtml(o.condition)}</div>` : ''}<div class="note">${escapeHtml(o.detail)}</div></td>` +
        `<td class="mono">${run}</td>` +
        '</tr>'
      );
    })
    .join('\n');
  const count = (v: ClaimOutcome['verdict']) => outcomes.filter((o) => o.verdict === v).length;
  return `${pageHead('durolab: the source articles\' claims')}
<body>
<main>
${links.home ? `<p class="sub"><a href="${escapeHtml(links.home)}">all runs</a></p>` : ''}
<h1>The source articles' claims</h1>
<p class="sub">${outcomes.length} claims: ${count('supported')} supported, ${count('contradicted')} contradicted, ${count('depends')} depend on a condition, ${count('not measured yet')} not measured yet.
Each verdict is computed by the claim's rule (harness/claims/claims.yaml) over the latest run of its scenario on the machine the run names; absolute figures belong to that machine.</p>
<div class="table-wrap"><table id="claims-table"><thead><tr><th>claim</th><th>source</th><th>scenario</th><th>verdict and figures</th><th>run</th></tr></thead>
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
      ].join('\n'),
    )
    .join('\n\n');
}
