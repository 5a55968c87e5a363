// End to end through the real CLI bundle: one idempotent cell of producer-idempotence, three
// real broker processes, a real Kafka client (librdkafka, the kafka driver's default library),
// the leader SIGKILLed under load.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { RunResult } from '../results/types.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'bin/durolab.mjs');
const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-idempotence-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('durolab bench: an idempotent producer across a leader kill', () => {
  it('acknowledges without sequence errors before the kill and serves no record twice after it', async () => {
    const file = path.join(work, 'idempotent-kill.yaml');
    // The shipped scenario's settings, one cell, a shorter load.
    const shipped = readFileSync(path.join(root, 'scenarios/producer-idempotence.yaml'), 'utf8');
    writeFileSync(
      file,
      shipped
        .replace('enable.idempotence: [true, false]', 'enable.idempotence: [true]')
        .replace('warmup: 2s', 'warmup: 1s')
        .replace('duration: 6s', 'duration: 3s')
        .replace('between: [3s, 5s]', 'between: [2s, 3s]'),
    );
    const results = path.join(work, 'results');
    const r = await execa(process.execPath, [cli, 'bench', file, '--results-dir', results, '--reports-dir', path.join(work, 'reports'), '--no-report'], {
      reject: false,
      timeout: 100_000,
    });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('PASS  duplicates == 0 where enable.idempotence == true in every trial');
    const run = JSON.parse(readFileSync(path.join(results, 'idempotent-kill', 'latest', 'run.json'), 'utf8')) as RunResult;
    const [cell] = run.cells;
    expect(cell!.params).toEqual({ 'enable.idempotence': true });
    expect(cell!.trials?.[0]?.fault).toBeDefined();
    expect(cell!.ledger.acked).toBeGreaterThan(0);
    expect(cell!.ledger).toMatchObject({ duplicates: 0, ackedLost: 0, corrupt: 0 });
    // The HW before the kill, read through the kafka driver (ListOffsets), against the new
    // leader's after recovery: measured, not a default 0 (acks=all: it must not go back).
    const fault = cell!.trials![0]!.fault!;
    expect(fault.hwNotMeasuredWhy).toBeUndefined();
    expect(fault.hwBeforeCut).toBeGreaterThan(0);
    expect(fault.hwAfterRecovery).toBeGreaterThanOrEqual(fault.hwBeforeCut!);
    expect(cell!.trials![0]!.ledger.hwWentBack).toBe(0);
    // Acknowledgements without an offset (a retry the new leader found a duplicate of) are counted, within acked.
    expect(typeof cell!.trials![0]!.ledger.ackedWithoutOffset).toBe('number');
    expect(cell!.trials![0]!.ledger.ackedWithoutOffset).toBeLessThanOrEqual(cell!.trials![0]!.ledger.acked);
    // Every producer connection has its own producer id: no sequence answers without a fault.
    expect(cell!.errors ?? {}).toEqual({});
  }, 120_000);
});
