// `durolab claims`: every claim of the source articles with its computed verdict.

import path from 'node:path';
import { parseCommandFlags } from '../../engine/common/flags.ts';
import { listRuns } from '../report/load-runs.ts';
import { defaultDirs, requireResultsDir } from '../report/repo-paths.ts';
import type { RunResult } from '../results/types.ts';
import { CLAIMS_FILE, evaluateClaims, loadClaims } from './claims.ts';
import { claimsText } from './claims-page.ts';

const HELP = `usage: durolab claims [options]

Prints every measurable claim of the three source articles (${CLAIMS_FILE}) with the
verdict its rule computes from the latest run of its scenario: supported, contradicted,
depends (with the conditions where it holds and where not) or not measured yet, and the
figures behind it, on durolab's broker and, where the claim names a peer scenario (peers:
{ kafka: ... }), on that system from the scenario's cells on it (target=kafka). \`durolab publish\` renders the
same as the site's claims page.

  --json               the outcomes as JSON
  --claims FILE        default: <repo>/${CLAIMS_FILE}
  --results-dir DIR    default: <repo>/results
  -h, --help           this text
`;

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags('claims', argv, {
    json: { type: 'boolean', default: false },
    claims: { type: 'string' },
    'results-dir': { type: 'string' },
  }, HELP);
  if (parsed === null) return 0;
  const { values } = parsed;
  const { resultsDir } = defaultDirs({ resultsDir: values['results-dir'] });
  requireResultsDir(values['results-dir']);
  const claims = loadClaims(values.claims ? path.resolve(values.claims) : undefined);
  const runs = (await listRuns(resultsDir)).filter((e) => e.run).map((e) => e.run as RunResult);
  const outcomes = evaluateClaims(claims, runs);
  if (values.json) {
    console.log(
      JSON.stringify(
        outcomes.map((o) => ({ id: o.claim.id, claim: o.claim.claim, source: o.claim.source, scenario: o.claim.scenario, verdict: o.verdict, condition: o.condition, detail: o.detail, run: o.run ? `${o.run.scenario.name}/${o.run.runId}` : null,
          peers: Object.fromEntries(Object.entries(o.peers).map(([system, p]) => [system, { scenario: p.claim.scenario, verdict: p.verdict, condition: p.condition, detail: p.detail, run: p.run ? `${p.run.scenario.name}/${p.run.runId}` : null }])) })),
        null,
        2,
      ),
    );
  } else {
    console.log(claimsText(outcomes));
  }
  return 0;
}
