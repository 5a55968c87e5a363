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
});
