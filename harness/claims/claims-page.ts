// The claims as an HTML page (for the published site) and as terminal text.

import type { RunResult } from '../results/types.ts';
import { escapeHtml } from '../report/format.ts';
import { pageHead } from '../report/page-assets.ts';
import { peerColumns, verdictText, type ClaimOutcome, type PeerOutcome } from './claims.ts';
import { labSystem } from '../targets/run-targets.ts';
import { systemLabel } from '../targets/registry.ts';

const TONE: Record<ClaimOutcome['verdict'], string> = {
  supported: 'pass',
  contradicted: 'fail',
  depends: 'depends',
  'not measured yet': 'none',
};

/** One engine's cell: scenario, verdict with its figures, and the run judged. */
function verdictCell(o: PeerOutcome, runHref: ((run: RunResult) => string | undefined) | undefined): string {
  const href = o.run ? runHref?.(o.run) : undefined;
  const run = o.run ? (href ? `<a href="${escapeHtml(href)}">${escapeHtml(o.run.runId)}</a>` : escapeHtml(o.run.runId)) : '<span class="muted">no run yet</span>';
  return (
    `<td data-verdict="${escapeHtml(o.verdict)}"><div class="mono">${escapeHtml(o.claim.scenario)} · ${run}</div>` +
    `<span class="verdict ${TONE[o.verdict]}">${escapeHtml(o.verdict === 'depends' ? 'depends' : o.verdict)}</span>` +
    `${o.condition ? `<div class="note">${escapeHtml(o.condition)}</div>` : ''}<div class="note">${escapeHtml(o.detail)}</div></td>`
  );
}

export function renderClaimsPage(outcomes: ClaimOutcome[], links: { home?: string; runHref?: (run: RunResult) => string | undefined } = {}): string {
  const peers = peerColumns(outcomes);
  const rows = outcomes
    .map(
      (o) =>
        `<tr data-claim="${escapeHtml(o.claim.id)}" data-verdict="${escapeHtml(o.verdict)}"${peers.map((s) => (o.peers[s] ? ` data-${escapeHtml(s)}-verdict="${escapeHtml(o.peers[s].verdict)}"` : '')).join('')}>` +
        `<td>${escapeHtml(o.claim.claim)}<div class="muted mono">${escapeHtml(o.claim.id)}</div></td>` +
        `<td>${escapeHtml(o.claim.source)}</td>` +
        verdictCell(o, links.runHref) +
        peers.map((s) => (o.peers[s] ? verdictCell(o.peers[s], links.runHref) : `<td><span class="muted">no ${escapeHtml(systemLabel(s))} scenario for this claim</span></td>`)).join('') +
        '</tr>',
    )
    .join('\n');
  const count = (v: ClaimOutcome['verdict']) => outcomes.filter((o) => o.verdict === v).length;
  const peerSentence = (s: string) => {
    const n = (v: ClaimOutcome['verdict']) => outcomes.filter((o) => o.peers[s]?.verdict === v).length;
    return `on ${escapeHtml(systemLabel(s))} ${n('supported')} supported, ${n('contradicted')} contradicted, ${n('depends')} depend on a condition, ${n('not measured yet')} not measured yet, ${outcomes.length - outcomes.filter((o) => o.peers[s]).length} with no ${escapeHtml(systemLabel(s))} scenario`;
  };
  const lab = escapeHtml(systemLabel(labSystem()));
  return `${pageHead('durolab: the source articles\' claims')}
<body>
<main>
${links.home ? `<p class="sub"><a href="${escapeHtml(links.home)}">all runs</a></p>` : ''}
<h1>The source articles' claims</h1>
<p class="sub">${outcomes.length} claims: ${count('supported')} supported, ${count('contradicted')} contradicted, ${count('depends')} depend on a condition, ${count('not measured yet')} not measured yet on ${lab}${peers.map((s) => `;\n${peerSentence(s)}`).join('')}.
Each verdict is computed by the claim's rule (harness/claims/claims.yaml) over the latest run of its scenario on the machine the run names (a peer system: the cells of a peer scenario on that system, e.g. target=kafka); absolute figures belong to that machine.</p>
<div class="table-wrap"><table id="claims-table"><thead><tr><th>claim</th><th>source</th><th>${lab}: scenario, verdict and figures</th>${peers.map((s) => `<th>${escapeHtml(systemLabel(s))}: scenario, verdict and figures</th>`).join('')}</tr></thead>
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
        ...Object.entries(o.peers).map(([s, p]) => `${' '.repeat(width)}  on ${systemLabel(s)} (${p.claim.scenario}${p.run ? `/${p.run.runId}` : ''}): ${verdictText(p).toUpperCase()}: ${p.detail}`),
      ].join('\n'),
    )
    .join('\n\n');
}
