// End to end through the real CLI bundle: the acks=0 cell of acks-all through the kafka driver
// (issue 11: acks-all runnable with --driver kafka). Three real broker processes, a real Kafka
// client; with acks=0 nothing is acknowledged, so the loss expectations cannot pass on nothing:
// they are NOT EVALUATED for the cell (exit 3), while those that judge what was served pass.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { RunResult } from '../results/types.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'bin/durolab.mjs');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-acks-zero-kafka-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('durolab bench acks-all --driver kafka: the acks=0 cell', () => {
  it('measures the cell, acknowledges nothing and leaves the loss expectations not evaluated', async () => {
    const file = path.join(work, 'acks-zero.yaml');
    const shipped = readFileSync(path.join(root, 'scenarios/acks-all.yaml'), 'utf8');
    // One cell: the expectation about acks=all cells has none to match, so it goes too.
    const oneCell = shipped.replace('acks: [0, 1, all]', 'acks: [0]').replace(/^ {2}- errors\.NOT_ENOUGH_REPLICAS == 0 where acks == all\n/m, '');
    expect(oneCell).not.toContain('where acks == all');
    writeFileSync(file, oneCell);
    const results = path.join(work, 'results');
    const r = await execa(process.execPath, [cli, 'bench', file, '--driver', 'kafka', '--duration', '2', '--results-dir', results, '--no-report'], {
      reject: false,
      timeout: 100_000,
    });
    const out = r.stdout + r.stderr;
    expect(r.exitCode, out).toBe(3);
    expect(r.stdout).toContain('NOT EVALUATED  ackedLost == 0: not evaluated (acks=0: 0 acknowledged records, so nothing was promised that could be lost or moved)');
    expect(r.stdout).toContain('PASS  corrupt == 0: passed (cells acks=0: 0)');
    expect(r.stdout).toContain('PASS  duplicates == 0: passed (cells acks=0: 0)');
    const run = JSON.parse(readFileSync(path.join(results, 'acks-zero', 'latest', 'run.json'), 'utf8')) as RunResult;
    const [cell] = run.cells;
    expect(cell!.status).toBe('ok');
    expect(cell!.throughput!.recordsPerSec).toBeGreaterThan(0);
    expect(cell!.ledger).toMatchObject({ acked: 0, ackedLost: 0, corrupt: 0, duplicates: 0 });
    expect(cell!.errors ?? {}).toEqual({});
    // Every batch sent is unconfirmed in the trial's request counts; none acknowledged.
    const requests = cell!.trials?.[0]?.requests;
    expect(requests).toBeDefined();
    expect(requests!.unconfirmed).toBeGreaterThan(0);
    expect(requests).toMatchObject({ acked: 0, failed: 0, pending: 0, neverSent: 0, sent: requests!.unconfirmed });
  }, 120_000);
});
