// A rack power cut of a 3-node NATS JetStream cluster on the lab's fault disks (the host route:
// NBD -> qemu-storage-daemon FUSE -> loop -> ext4, one disk per node's store_dir), through the
// runner as a scenario runs it: flush never (nats-server's default sync_interval, 2 min) vs
// per-batch (sync_interval: always). The lost count is measured in both; with always every
// acknowledged record must be served after the restart.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScenario } from '../../scenario/index.ts';
import { hostDiskPrerequisiteProblem } from '../../disk/host-disk.ts';
import { missingRequirement, requireNats } from '../../../test/requirements.ts';
import { runScenarioHere } from '../../runner/run-scenario-test-helpers.ts';
import { findProcessesMatching } from '../../vm/process-registry.ts';
import { cycleSummary } from '../../report/trial-summary.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-nats-power-cut-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('target: nats on the fault disk', () => {
  it('a power cut of all three nodes: lost measured with sync_interval default and always, nothing lost with always', async (ctx) => {
    await requireNats(ctx);
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const file = path.join(work, 'nats-cut.yaml');
    writeFileSync(
      file,
      `question: What does a rack power cut lose on NATS JetStream with the default sync_interval and with always?
target: nats
vm: { diskMiB: 512 }
cluster: { brokers: 3, topic: nats-cut, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 }
settings: { sync: fsync, acks: all }
matrix:
  flush: [never, per-batch]
workload: { driver: nats, recordBytes: 256, recordsPerBatch: 8, connections: 2, pipelining: 2, warmup: 0s, duration: 4s, repetitions: 1 }
faults:
  - kind: power-cut
    target: all
    when: { between: [2s, 2500ms] }
expectations:
  - ackedLost == 0 where flush == per-batch in every trial
  - corrupt == 0 in every trial
`,
    );
    const { run, out } = await runScenarioHere(loadScenario(file), path.join(work, 'results'));
    console.log(out);
    // The trial cycle step by step (disks, node start, leaders, load, cut, recovery, check, stop), as the CLI prints it.
    const cycle = cycleSummary(run);
    console.log(cycle);
    expect(cycle).toMatch(/^flush=never\s+[\d.]+/m);
    expect(run.cells.map((c) => c.status)).toEqual(['ok', 'ok']);
    const trialOf = (flush: string) => run.cells.find((c) => String(c.params.flush) === flush)!.trials![0]!;
    for (const flush of ['never', 'per-batch']) {
      const t = trialOf(flush);
      console.log(`flush ${flush}: ${t.ledger.acked} acknowledged, ${t.ledger.ackedLost} lost`);
      expect(t.ledger.acked).toBeGreaterThan(0);
      expect(typeof t.ledger.ackedLost).toBe('number');
    }
    expect(trialOf('per-batch').ledger.ackedLost).toBe(0);
    expect(run.expectations.every((e) => e.state === 'pass')).toBe(true);
    expect(findProcessesMatching('nats-server', work)).toEqual([]);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(work);
  }, 120_000);
});
