// `durolab publish`: a static site of runs. Every page opens from disk with no network, links
// are relative, and nothing carries a local path or the host name (harness/publish/redact.ts);
// the build checks the last part itself before it finishes.
//
// site/index.html                        runs, filterable; links to everything below
// site/claims.html                       the source articles' claims and their verdicts
// site/compare/<scenario>-trend.html     a scenario's runs, oldest first
// site/compare/<scenario>-latest.html    its latest run against the one before
// site/frontier/<scenario>-<target>.html  a measure-axis scenario's durability/cost frontier per target
// site/runs/<scenario>/<run id>/         index.html (the report) and run.json
// site/docs/index.html, site/docs/<name>.html  README.md and docs/*.md, rendered (docs-pages.ts)

import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../engine/common/atomic-file.ts';
import { repoRoot } from '../../engine/common/repo-root.ts';
import { listRuns } from '../report/load-runs.ts';
import { renderRunReport } from '../report/run-page.ts';
import type { RunResult } from '../results/types.ts';
import { compareRuns } from '../compare/compare.ts';
import { renderComparePage, renderTrendPage } from '../compare/compare-page.ts';
import { evaluateClaims, loadClaims, type Claim } from '../claims/claims.ts';
import { renderClaimsPage } from '../claims/claims-page.ts';
import { redactRun } from './redact.ts';
import { frontierPages } from './frontier-page.ts';
import { frontiersOf } from '../report/frontier.ts';
import { renderSiteIndex, type SiteRun, type SiteScenario } from './site-index.ts';
import { docsPages } from './docs-pages.ts';

/** Marks a folder as a site this command wrote, so a rebuild may empty it and nothing else. */
export const SITE_MARKER = '.durolab-site';

export interface PublishOptions {
  resultsDir: string;
  outDir: string;
  repoRoot: string;
  /** Only these scenarios. */
  scenarios?: string[];
  /** Only runs started on or after this time. */
  since?: Date;
  /** Only these runs, as '<scenario>/<run id>'. */
  runs?: string[];
  claims?: Claim[];
  /** Unreadable run.json files and the like. */
  warn?: (line: string) => void;
  now?: Date;
}

export interface PublishResult {
  outDir: string;
  files: string[];
  runs: number;
}

const runPagePath = (r: RunResult) => `runs/${r.scenario.name}/${r.runId}/index.html`;

function prepareOutDir(outDir: string): void {
  if (existsSync(outDir)) {
    const entries = readdirSync(outDir);
    if (entries.length > 0 && !entries.includes(SITE_MARKER)) {
      throw new Error(`--out ${outDir}: the folder is not empty and was not written by durolab publish (no ${SITE_MARKER}); choose an empty or new folder`);
    }
    rmSync(outDir, { recursive: true, force: true });
  }
  writeFileAtomic(path.join(outDir, SITE_MARKER), 'written by durolab publish; the next publish empties this folder\n', { mkdir: true });
}

export async function publishSite(opts: PublishOptions): Promise<PublishResult> {
  const warn = opts.warn ?? (() => undefined);
  const entries = await listRuns(opts.resultsDir);
  for (const e of entries) if (!e.run) warn(`skipped ${path.relative(opts.repoRoot, e.file)}: ${e.error}`);
  let runs = entries.filter((e) => e.run).map((e) => e.run as RunResult);
  if (opts.scenarios?.length) {
    const unknown = opts.scenarios.filter((s) => !runs.some((r) => r.scenario.name === s));
    if (unknown.length) throw new Error(`--scenario: no run of ${unknown.join(', ')} under the results folder (scenarios with runs: ${[...new Set(runs.map((r) => r.scenario.name))].join(', ') || 'none'})`);
    runs = runs.filter((r) => opts.scenarios!.includes(r.scenario.name));
  }
  if (opts.since) runs = runs.filter((r) => Date.parse(r.startedAt) >= opts.since!.getTime());
  if (opts.runs?.length) {
    const wanted = new Set(opts.runs);
    const missing = opts.runs.filter((id) => !runs.some((r) => `${r.scenario.name}/${r.runId}` === id));
    if (missing.length) throw new Error(`--runs: no run ${missing.join(', ')} (expected '<scenario>/<run id>' of a run under the results folder)`);
    runs = runs.filter((r) => wanted.has(`${r.scenario.name}/${r.runId}`));
  }
  // The checkout around the working directory and the one holding this code may differ.
  const codeRoot = repoRoot();
  const ctx = { repoRoot: opts.repoRoot, extraPaths: [opts.resultsDir, opts.outDir, codeRoot] };
  const published = runs.map((r) => redactRun(r, ctx));

  prepareOutDir(opts.outDir);
  const files: string[] = [];
  const write = (rel: string, text: string) => {
    writeFileAtomic(path.join(opts.outDir, rel), text, { mkdir: true });
    files.push(rel);
  };

  const byScenario = new Map<string, RunResult[]>();
  for (const r of published) byScenario.set(r.scenario.name, [...(byScenario.get(r.scenario.name) ?? []), r]);
  const scenarios: SiteScenario[] = [...byScenario.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, rs]) => ({ name, runs: rs.length, trend: `compare/${name}-trend.html`, ...(rs.length > 1 ? { latestCompare: `compare/${name}-latest.html` } : {}) }));

  const siteRuns: SiteRun[] = [];
  for (const run of published) {
    const page = runPagePath(run);
    const html = renderRunReport(run, {
      homeHref: '../../../index.html',
      navLinks: [
        { href: '../../../claims.html', text: 'claims' },
        { href: `../../../compare/${run.scenario.name}-trend.html`, text: `${run.scenario.name} over its runs` },
        { href: 'run.json', text: 'run.json' },
      ],
      docsHref: '../../../docs/index.html',
      publish: true,
    });
    write(page, html);
    write(`runs/${run.scenario.name}/${run.runId}/run.json`, JSON.stringify(run, null, 2) + '\n');
    siteRuns.push({ run, page, json: `runs/${run.scenario.name}/${run.runId}/run.json` });
  }

  const fromCompare = { home: '../index.html', runHref: (r: RunResult) => `../${runPagePath(r)}` };
  for (const [name, rs] of byScenario) {
    write(`compare/${name}-trend.html`, renderTrendPage(name, rs, fromCompare));
    if (rs.length > 1) write(`compare/${name}-latest.html`, renderComparePage(compareRuns([rs[1], rs[0]]), fromCompare));
  }

  // A frontier page per target, from each scenario's newest run that has one.
  for (const [name, rs] of byScenario) {
    const newest = [...rs].sort((a, b) => b.startedAt.localeCompare(a.startedAt)).find((r) => frontiersOf(r).length > 0);
    if (!newest) continue;
    const entry = scenarios.find((s) => s.name === name);
    for (const { file, target, html } of frontierPages(newest, { home: '../index.html', runHref: `../${runPagePath(newest)}` })) {
      write(file, html);
      if (entry) entry.frontiers = [...(entry.frontiers ?? []), { href: file, target }];
    }
  }

  const outcomes = evaluateClaims(opts.claims ?? loadClaims(), published);
  write('claims.html', renderClaimsPage(outcomes, { home: 'index.html', runHref: (r) => runPagePath(r) }));
  write('index.html', renderSiteIndex(siteRuns, scenarios, (opts.now ?? new Date()).toISOString()));
  for (const { file, html } of docsPages(codeRoot)) write(file, html);

  // The promise of the site, checked on what was written.
  const forbidden = [opts.repoRoot, codeRoot, opts.resultsDir, opts.outDir].filter((p) => p.length > 1);
  for (const rel of files) {
    const text = readFileSync(path.join(opts.outDir, rel), 'utf8');
    const hit = forbidden.find((p) => text.includes(p));
    if (hit) throw new Error(`publish: ${rel} would carry the local path ${hit}; not published (report this as a bug)`);
  }
  return { outDir: opts.outDir, files, runs: published.length };
}
