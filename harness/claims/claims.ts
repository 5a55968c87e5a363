// The source articles' claims as data (harness/claims/claims.yaml), each with a rule over the
// cells of its scenario's latest run. The verdict is computed here: supported, contradicted,
// depends on (the conditions where it holds and where not), or not measured yet.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { repoRoot } from '../../engine/common/repo-root.ts';
import type { CellResult, RunResult } from '../results/types.ts';
import { SETTINGS } from '../scenario/settings.ts';
import { FIGURES, FIGURE_LABEL, TRIAL_LOSS_FIGURES, cellFigure, fmtFigureValue, unavailableCount, type FigureName } from '../results/figures.ts';
import { fmtRatio } from '../report/format.ts';
import { cellSystem, labSystem } from '../targets/run-targets.ts';
import { systemNames } from '../targets/registry.ts';

const settingValue = z.union([z.string(), z.number(), z.boolean()]);
const where = z.record(z.string(), settingValue);
const op = z.enum(['>', '>=', '<', '<=', '==', '!=']);
const figure = z.enum(FIGURES);

const valueRule = z
  .object({ kind: z.literal('value'), figure, aggregate: z.enum(['median', 'min', 'max']).default('median'), where, op, value: z.number() })
  .strict();
const ratioRule = z.object({ kind: z.literal('ratio'), figure, of: where, to: where, op, value: z.number() }).strict();
const simpleRule = z.discriminatedUnion('kind', [valueRule, ratioRule]);
const casesRule = z
  .object({ kind: z.literal('cases'), cases: z.array(z.object({ when: z.string().min(1), rule: simpleRule }).strict()).min(2) })
  .strict();

const anyRule = z.discriminatedUnion('kind', [valueRule, ratioRule, casesRule]);
const scenarioName = z.string().regex(/^[A-Za-z0-9._-]+$/, 'a scenario name');

const claimSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9-]+$/, 'lower-case letters, digits and dashes'),
    claim: z.string().min(10),
    source: z.string().min(1),
    scenario: scenarioName,
    rule: anyRule,
    /**
     * The claim on peer systems, by system name (the target registry's: kafka, ...): each a
     * scenario with a target axis (`matrix: { target: [durolab, kafka] }`) whose cells on that
     * system the rule (its own, or the claim's) is evaluated over.
     */
    peers: z
      .record(z.string(), z.object({ scenario: scenarioName, rule: anyRule.optional() }).strict())
      .superRefine((peers, ctx) => {
        for (const system of Object.keys(peers)) {
          if (!peerSystems().includes(system)) ctx.addIssue({ code: 'custom', path: [system], message: `expected a peer system: ${peerSystems().join(' | ')} (the target registry's systems besides the lab's own), found '${system}'` });
        }
      })
      .optional(),
  })
  .strict();

export type Claim = z.infer<typeof claimSchema>;
type SimpleRule = z.infer<typeof simpleRule>;

export const CLAIMS_FILE = 'harness/claims/claims.yaml';

/** Parses and checks claims; errors name the file, the claim's index and id, and the field. */
export function parseClaims(text: string, file: string): Claim[] {
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (err) {
    throw new Error(`${file}: not valid YAML: ${(err as Error).message}`);
  }
  if (!Array.isArray(data)) throw new Error(`${file}: expected a list of claims, found ${data === null ? 'nothing' : typeof data}`);
  const claims: Claim[] = [];
  const ids = new Set<string>();
  data.forEach((item, i) => {
    const parsed = claimSchema.safeParse(item);
    const id = (item as { id?: unknown } | null)?.id;
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`${file}: claim ${i + 1}${typeof id === 'string' ? ` (${id})` : ''}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`);
    }
    if (ids.has(parsed.data.id)) throw new Error(`${file}: claim ${i + 1}: id '${parsed.data.id}' is used twice`);
    ids.add(parsed.data.id);
    claims.push(parsed.data);
  });
  return claims;
}

/** The claims shipped with this code (source or bundle), wherever the command runs from. */
export function loadClaims(file = path.join(repoRoot(), CLAIMS_FILE)): Claim[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${file}: cannot read the claims file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parseClaims(text, file);
}

export type ClaimVerdict = 'supported' | 'contradicted' | 'depends' | 'not measured yet';

/** A claim judged over one system's cells: the lab's own scenario, or a peer's (ClaimOutcome.peers). */
export type PeerOutcome = Omit<ClaimOutcome, 'peers'>;

export interface ClaimOutcome {
  claim: Claim;
  verdict: ClaimVerdict;
  /** The figures behind the verdict, or why it could not be judged. */
  detail: string;
  /** For 'depends': where it holds and where it does not. */
  condition?: string;
  /** The run judged (absent: none). */
  run?: RunResult;
  /** The same claim on each peer system the claim names (claims.yaml `peers:`), judged over its scenario's cells on that system; a system absent: the claim names no scenario for it. */
  peers: Record<string, PeerOutcome>;
}

const normalize = (key: string, v: unknown) => JSON.stringify(SETTINGS[key]?.parse(v) ?? v);

function matches(cell: CellResult, w: Record<string, string | number | boolean>): boolean {
  return Object.entries(w).every(([k, v]) => cell.params[k] !== undefined && normalize(k, cell.params[k]) === normalize(k, v));
}

function whereText(w: Record<string, string | number | boolean>): string {
  return Object.entries(w).map(([k, v]) => `${k}=${v}`).join(' ');
}

function holds(a: number, o: z.infer<typeof op>, b: number): boolean {
  switch (o) {
    case '>': return a > b;
    case '>=': return a >= b;
    case '<': return a < b;
    case '<=': return a <= b;
    case '==': return a === b;
    case '!=': return a !== b;
  }
}

type Simple = { state: 'holds' | 'fails' | 'unmeasured'; detail: string };

/** '' unless a loss figure speaks for cells some of whose trials left the cluster unavailable (never checked). */
function unavailableDoubt(fig: FigureName, cells: readonly CellResult[]): string {
  if (!TRIAL_LOSS_FIGURES.has(fig)) return '';
  const gone = cells.filter((c) => unavailableCount(c) > 0).map((c) => `${c.id}: ${unavailableCount(c)} trial(s) unavailable after the fault, not checked`);
  return gone.join('; ');
}

function evalSimple(run: RunResult, rule: SimpleRule): Simple {
  const fig = rule.figure as FigureName;
  const label = FIGURE_LABEL[fig];
  if (rule.kind === 'value') {
    const cells = run.cells.filter((c) => matches(c, rule.where));
    const judged = cells.map((c) => ({ c, f: cellFigure(c, fig) })).filter((x) => x.f !== null);
    if (judged.length === 0) {
      return { state: 'unmeasured', detail: cells.length ? `no measured ${label} in the cells where ${whereText(rule.where)}` : `no cell where ${whereText(rule.where)}` };
    }
    const vals = judged.map(({ c, f }) => ({ c, v: f![rule.aggregate] }));
    const ok = vals.every(({ v }) => holds(v, rule.op, rule.value));
    const agg = rule.aggregate === 'median' ? '' : `${rule.aggregate} `;
    const detail = vals.map(({ c, v }) => `${c.id}: ${agg}${label} ${fmtFigureValue(fig, v)}`).join('; ') + ` (rule: ${rule.op} ${rule.value})`;
    // Jepsen's merge: a loss figure that held over the checked trials is in doubt while some trial was never checked.
    const doubt = ok ? unavailableDoubt(fig, judged.map(({ c }) => c)) : '';
    return doubt ? { state: 'unmeasured', detail: `${detail}; but ${doubt}` } : { state: ok ? 'holds' : 'fails', detail };
  }
  const a = run.cells.find((c) => matches(c, rule.of));
  const b = run.cells.find((c) => matches(c, rule.to));
  const fa = a ? cellFigure(a, fig) : null;
  const fb = b ? cellFigure(b, fig) : null;
  if (!a || !b || !fa || !fb) {
    const missing = [!a ? `no cell where ${whereText(rule.of)}` : !fa ? `${a.id} not measured` : '', !b ? `no cell where ${whereText(rule.to)}` : !fb ? `${b.id} not measured` : ''].filter(Boolean);
    return { state: 'unmeasured', detail: missing.join('; ') };
  }
  if (fb.median === 0) return { state: 'unmeasured', detail: `${b.id}: ${label} is 0, no ratio` };
  const doubt = unavailableDoubt(fig, [a, b]);
  if (doubt) return { state: 'unmeasured', detail: doubt };
  const r = fa.median / fb.median;
  return {
    state: holds(r, rule.op, rule.value) ? 'holds' : 'fails',
    detail: `${a.id} ${fmtRatio(r)} the ${label} of ${b.id} (${fmtFigureValue(fig, fa.median)} vs ${fmtFigureValue(fig, fb.median)}; rule: ratio ${rule.op} ${rule.value})`,
  };
}

/** The claim's verdict on one run (undefined: its scenario has no run yet). */
export function evaluateClaim(claim: Claim, run: RunResult | undefined): PeerOutcome {
  if (!run) return { claim, verdict: 'not measured yet', detail: `no run of ${claim.scenario} yet (durolab bench ${claim.scenario})` };
  if (claim.rule.kind !== 'cases') {
    const s = evalSimple(run, claim.rule);
    const verdict: ClaimVerdict = s.state === 'holds' ? 'supported' : s.state === 'fails' ? 'contradicted' : 'not measured yet';
    return { claim, verdict, detail: s.detail, run };
  }
  const cases = claim.rule.cases.map((c) => ({ when: c.when, ...evalSimple(run, c.rule) }));
  const detail = cases.map((c) => `${c.when}: ${c.state === 'holds' ? 'holds' : c.state === 'fails' ? 'does not hold' : 'not measured'} (${c.detail})`).join('; ');
  const measured = cases.filter((c) => c.state !== 'unmeasured');
  if (measured.length === 0) return { claim, verdict: 'not measured yet', detail, run };
  if (measured.length < cases.length) {
    const unmeasured = cases.filter((c) => c.state === 'unmeasured').map((c) => c.when);
    if (measured.every((c) => c.state === 'fails')) return { claim, verdict: 'contradicted', detail, run };
    return { claim, verdict: 'not measured yet', detail: `partly measured; missing: ${unmeasured.join(', ')}. ${detail}`, run };
  }
  if (measured.every((c) => c.state === 'holds')) return { claim, verdict: 'supported', detail, run };
  if (measured.every((c) => c.state === 'fails')) return { claim, verdict: 'contradicted', detail, run };
  const yes = measured.filter((c) => c.state === 'holds').map((c) => c.when);
  const no = measured.filter((c) => c.state === 'fails').map((c) => c.when);
  return { claim, verdict: 'depends', condition: `holds for ${yes.join(', ')}; not for ${no.join(', ')}`, detail, run };
}

/** The newest run of a scenario that measured something (runs: newest first). */
export function latestMeasuredRun(runs: RunResult[], scenario: string): RunResult | undefined {
  return runs.find((r) => r.scenario.name === scenario && r.cells.some((c) => c.status === 'ok' || c.status === 'interrupted'));
}

/** The run's cells on one system (results/cell-target.ts: a target-axis cell's, or the run's target's system). */
function cellsOn(run: RunResult, system: string): RunResult {
  return { ...run, cells: run.cells.filter((c) => cellSystem(run, c) === system) };
}

/** The systems a claim may name under peers: (the registry's, besides the lab's own), in its order. */
export function peerSystems(): string[] {
  return systemNames().filter((s) => s !== labSystem());
}

/** The claim on one peer system: its peers.<system> scenario's latest run with cells on that system, those cells only. */
export function evaluatePeerClaim(claim: Claim, system: string, runsNewestFirst: RunResult[]): PeerOutcome | undefined {
  const p = claim.peers?.[system];
  if (!p) return undefined;
  const asPeer: Claim = { ...claim, scenario: p.scenario, rule: p.rule ?? claim.rule };
  const measured = (r: RunResult) => r.cells.some((c) => (c.status === 'ok' || c.status === 'interrupted') && cellSystem(r, c) === system);
  const run = runsNewestFirst.find((r) => r.scenario.name === p.scenario && measured(r));
  if (!run) return { claim: asPeer, verdict: 'not measured yet', detail: `no run of ${p.scenario} with target=${system} cells yet (durolab bench ${p.scenario})` };
  // Judged over the system's cells; the outcome links the whole run.
  return { ...evaluateClaim(asPeer, cellsOn(run, system)), run };
}

export function evaluateClaims(claims: Claim[], runsNewestFirst: RunResult[]): ClaimOutcome[] {
  return claims.map((c) => {
    const o = evaluateClaim(c, latestMeasuredRun(runsNewestFirst, c.scenario));
    const peers: Record<string, PeerOutcome> = {};
    for (const system of peerSystems()) {
      const p = evaluatePeerClaim(c, system, runsNewestFirst);
      if (p) peers[system] = p;
    }
    return { ...o, peers };
  });
}

/** The peer systems any of the outcomes names, in the registry's order: the claims page's and terminal's columns. */
export function peerColumns(outcomes: ClaimOutcome[]): string[] {
  return peerSystems().filter((s) => outcomes.some((o) => o.peers[s]));
}

export function verdictText(o: PeerOutcome): string {
  return o.verdict === 'depends' ? `depends: ${o.condition}` : o.verdict;
}
