// docs/findings.md's tables come from results/: the newest complete run of each scenario, with
// its run id, commit and verdicts, the terminal's own tables, and no path of the machine that ran it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findingsMarkdown } from './findings.ts';
import { powerCutRun } from '../report/test-fixtures.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-findings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function store(runId: string, startedAt: string, status: 'complete' | 'incomplete', note?: string): void {
  const run = { ...powerCutRun(), runId, startedAt, status, gitCommit: '0123456789abcdef0123' };
  if (note) run.cells[0]!.note = note;
  mkdirSync(path.join(dir, run.scenario.name, runId), { recursive: true });
  writeFileSync(path.join(dir, run.scenario.name, runId, 'run.json'), JSON.stringify(run));
}

describe('findings', () => {
  it('quotes the newest complete run of each scenario, without local paths', async () => {
    store('20261201-000000-aaaa', '2026-12-01T00:00:00.000Z', 'complete');
    store('20261202-000000-bbbb', '2026-12-02T00:00:00.000Z', 'complete', 'evidence kept in /work/x/results/power-cut/20261202-000000-bbbb/cells/01/rep-1 and /tmp/durolab-hd-abc/mnt');
    store('20261203-000000-cccc', '2026-12-03T00:00:00.000Z', 'incomplete');
    const md = await findingsMarkdown(dir);
    expect(md).toContain('Run `20261202-000000-bbbb` (started 2026-12-02T00:00:00.000Z, commit `0123456789ab`');
    expect(md).not.toContain('20261203-000000-cccc');
    expect(md).not.toContain('20261201-000000-aaaa');
    expect(md).toMatch(/```text\ncell +records\/s/);
    expect(md).toContain('evidence kept in results/power-cut/20261202-000000-bbbb/cells/01/rep-1 and /tmp/…/mnt');
    expect(md).not.toContain('/work/');
    expect(await findingsMarkdown(path.join(dir, 'none'))).toMatch(/^No complete run under /);
  });

  it('puts the headlines first, each with its number, condition, run id and command; the raw tables follow as evidence', async () => {
    const md = await findingsMarkdown(dir);
    const headline = md.indexOf('### power-cut\n');
    const evidence = md.indexOf('## The evidence: the newest run of each scenario');
    expect(headline).toBeGreaterThanOrEqual(0);
    expect(evidence).toBeGreaterThan(headline);
    // The buffered cell lost 5,900 of 120,500 acknowledged over its 3 trials of a power cut of broker 0.
    expect(md.slice(0, evidence)).toContain("- **durolab's broker, vm buffered acks=1: lost 5,900 of 120,500 acknowledged records** over 3 trial(s) of a power-cut of broker 0. Run `20261202-000000-bbbb`, `durolab bench power-cut`.");
    expect(md.slice(0, evidence)).toContain("- **durolab's broker, vm fdatasync acks=1: lost none of 9,050 acknowledged records**");
    expect(md.slice(evidence)).toMatch(/```text\ncell +records\/s/);
  });

  it('keeps an earlier section it has no run for, marked, with no headline; a throughput that is not steady is left out and says why', async () => {
    const earlier = '## The evidence: the newest run of each scenario\n\n### acks-all\n\nOld question?\n\n```text\nold table\n```';
    const md = await findingsMarkdown(dir, earlier);
    const evidence = md.indexOf('## The evidence');
    expect(md.slice(evidence)).toContain('### acks-all\n\n_Kept from an earlier regeneration: its run.json is not on the machine that regenerated this page');
    expect(md.slice(evidence)).toContain('old table');
    expect(md.slice(0, evidence)).not.toContain('### acks-all');
    // The failed cell has no throughput to quote: left out, with its reason.
    expect(md.slice(0, evidence)).toContain('Left out: vm fdatasync acks=all: throughput not quoted, status failed.');
  });
});
