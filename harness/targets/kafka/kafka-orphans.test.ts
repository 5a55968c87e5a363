// No Kafka JVM outlives the harness: Ctrl-C of `durolab bench` stops them (exit 130), and a
// SIGKILLed harness takes them down too (setpriv --pdeathsig KILL).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../engine/common/repo-root.ts';
import { findProcessesMatching } from '../../vm/process-registry.ts';
import { goneWithin } from '../orphan-test-helpers.ts';
import { KAFKA_JVM_MARKER } from './kafka-node.ts';
import { requireKafka } from './kafka-requirements.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-kafka-orphans-'));
afterAll(() => {
  for (const pid of findProcessesMatching(KAFKA_JVM_MARKER, work)) process.kill(pid, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

const SCENARIO = `question: Does a signal to the harness leave a Kafka JVM behind?
target: kafka
cluster: { brokers: 1, topic: orphans }
workload: { recordBytes: 256, connections: 1, warmup: 0s, duration: 60s }
`;

async function benchUntilKafkaRuns(name: string): Promise<{ child: ReturnType<typeof execa>; jvms: number[]; out: () => string }> {
  const dir = path.join(work, name);
  const file = path.join(work, `${name}.yaml`);
  writeFileSync(file, SCENARIO);
  const child = execa(process.execPath, ['--import', 'tsx', path.join(repoRoot(), 'harness/cli/main.ts'), 'bench', file, '--results-dir', dir, '--no-report'], {
    cwd: repoRoot(),
    reject: false,
    all: true,
  });
  let out = '';
  child.all!.on('data', (d: Buffer) => (out += d.toString()));
  const end = Date.now() + 90_000;
  for (;;) {
    // The load's first progress line (the summary table's header also says records/s).
    if (/\] rep 1: 1\/60s [\d,]+ records\/s/.test(out)) break;
    if (child.exitCode !== null) throw new Error(`bench exited early (${child.exitCode}): ${out}`);
    if (Date.now() > end) throw new Error(`no load within 90 s: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const jvms = findProcessesMatching(KAFKA_JVM_MARKER, dir).filter((pid) => !/setpriv/.test(cmdOf(pid)));
  return { child, jvms, out: () => out };
}

function cmdOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8');
  } catch {
    return '';
  }
}

describe('target: kafka leaves no JVM behind', () => {
  it('Ctrl-C (SIGINT) of durolab bench stops the broker JVM and exits 130', async (ctx) => {
    await requireKafka(ctx);
    const { child, jvms, out } = await benchUntilKafkaRuns('sigint');
    expect(jvms.length, out()).toBeGreaterThan(0);
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, out()).toBe(130);
    expect(await goneWithin(jvms, 10_000)).toBe(true);
  }, 180_000);

  it('SIGKILL of durolab bench takes the broker JVM down (pdeathsig)', async (ctx) => {
    await requireKafka(ctx);
    const { child, jvms, out } = await benchUntilKafkaRuns('sigkill');
    expect(jvms.length, out()).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await child;
    expect(await goneWithin(jvms, 10_000)).toBe(true);
  }, 180_000);
});
