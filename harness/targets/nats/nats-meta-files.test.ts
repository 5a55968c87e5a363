// A cause docs/findings.md once gave, tested alone (scenarios/nats-meta-emptied.yaml, one trial):
// 3 nats-server nodes, one R3 stream, every write fsynced; every node stopped cleanly, meta.inf
// and meta.sum emptied on all three, restarted. The hypothesis "0-byte meta files keep the
// stream leaderless" predicts an unavailable cluster or lost messages; what is asserted is what
// was measured: the files were emptied on every node (6 changes to 0 bytes), the stream came
// back with a leader, every acknowledged message was read back, and the server rewrote the
// emptied meta.inf when it opened the store (read back after the check).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileScenario } from '../../scenario/validate.ts';
import { requireNats } from '../../../test/requirements.ts';
import { runScenarioHere } from '../../runner/run-scenario-test-helpers.ts';
import { repoRoot } from '../../../engine/common/repo-root.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-nats-meta-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('nats: emptied meta.inf and meta.sum', () => {
  it('on every node after a clean stop, and after a kill of all three: the R3 stream comes back with a leader and nothing acknowledged is lost', async (ctx) => {
    await requireNats(ctx);
    const file = path.join(repoRoot(), 'scenarios', 'nats-meta-emptied.yaml');
    const scenario = compileScenario(readFileSync(file, 'utf8'), file, { defaultName: 'nats-meta-emptied', repeat: 1 });
    const { run, out } = await runScenarioHere(scenario, path.join(work, 'results'));
    expect(run.cells.map((c) => c.params.faults)).toEqual(['after-clean-stop', 'after-kill']);
    const c = run.cells[0]!;
    expect(c.status, `${c.note}\n${out}`).toBe('ok');
    const t = c.trials![0]!;
    const ff = t.fault!.fileFault!;
    console.log(`acked ${t.ledger.acked}, lost ${t.ledger.ackedLost}, recovery ${t.fault!.recoverMs} ms; changes ${ff.changes.map((x) => `${x.broker}:${path.basename(x.file)} ${x.sizeBefore}->${x.sizeAfter}`).join(', ')}; after ${JSON.stringify(ff.afterCheck)}`);
    expect(ff).toMatchObject({ files: 'metadata', phase: 'stopped', stop: 'clean', unchanged: [] });
    expect(ff.changes).toHaveLength(6);
    expect(ff.changes.every((x) => x.how === 'truncate' && x.sizeAfter === 0 && x.sizeBefore > 0)).toBe(true);
    expect(new Set(ff.changes.map((x) => path.basename(x.file)))).toEqual(new Set(['meta.inf', 'meta.sum']));
    expect(t.ledger.acked).toBeGreaterThan(0);
    expect(t.ledger.ackedLost, out).toBe(0);
    expect(t.suspect, `${t.note}`).toBeUndefined();
    expect(c.unavailableTrials).toBeUndefined();
    // The server rewrote the emptied meta.inf on every node when it opened the store.
    const metaInf = ff.afterCheck!.filter((a) => a.file.endsWith('meta.inf'));
    expect(metaInf.map((a) => a.state)).toEqual(['rewritten', 'rewritten', 'rewritten']);
    // The same after a kill of all three (what the issue's rack cut leaves when every write was synced).
    const k = run.cells[1]!;
    expect(k.status, `${k.note}\n${out}`).toBe('ok');
    const kt = k.trials![0]!;
    console.log(`after a kill: acked ${kt.ledger.acked}, lost ${kt.ledger.ackedLost}, recovery ${kt.fault!.recoverMs} ms`);
    expect(kt.fault!.fileFault).toMatchObject({ stop: 'kill', unchanged: [] });
    expect(kt.fault!.fileFault!.changes).toHaveLength(6);
    expect(kt.ledger.ackedLost, out).toBe(0);
    expect(k.unavailableTrials).toBeUndefined();
  }, 180_000);
});
