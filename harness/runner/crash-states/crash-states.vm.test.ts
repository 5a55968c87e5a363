// The CI-sized crash-state test, end to end: one broker VM (QEMU, TCG here) on the harness's NBD
// disk with a volatile write cache (vm.disk model volatile-cache), whose own write log (exact
// host-clock stamps) records every request, a load with the ack ledger, a power cut, then 60 crash
// states built from the write log and checked on the host (journal replay, extraction, the
// engine's recovery, the checker), and 3 of them booted in a VM and checked through the real
// broker: both answers must agree. Buffered writes with no flush, written back after 1 s and
// committed every second: some of the log reaches the disk, the acknowledged tail does not, so
// states serve records and lose others, and the agreement is about both. (The blklogwrites
// recorder, used for vm.disk model file, is tested against qemu-io in blklogwrites.test.ts.)
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingRequirement } from '../../../test/requirements.ts';
import { resolveSettings } from '../../model/settings.ts';
import { DEFAULT_DISK_SPEC } from '../../model/disk-spec.ts';
import { GUEST_CLI_ENTRY } from '../../targets/vm-target.ts';
import { buildVmImage, ensureNoOrphans, findQemusMatching, type VmImage } from '../../vm/index.ts';
import { findExecutable } from '../../vm/prerequisites.ts';
import { httpDriver } from '../../drivers/http/driver.ts';
import { vmTarget } from '../../targets/vm-target.ts';
import { runCrashStatesTrial } from './trial.ts';

let work: string;
let image: VmImage | null = null;

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-crash-states-'));
  if (['e2fsck', 'debugfs', 'qemu-system-x86_64'].every((t) => findExecutable(t))) image = await buildVmImage({ cliEntry: GUEST_CLI_ENTRY });
}, 180_000);

afterAll(async () => {
  await ensureNoOrphans();
  if (work && !process.env.DUROLAB_KEEP_TEST_DIR) await fs.rm(work, { recursive: true, force: true });
});

describe('crash states from a recorded VM trial', () => {
  it('60 states checked on the host, 3 booted in a VM agree with them', async (ctx) => {
    for (const tool of ['e2fsck', 'debugfs', 'qemu-system-x86_64']) if (!findExecutable(tool)) missingRequirement(ctx, `${tool} (apt-get install -y e2fsprogs qemu-system-x86)`);
    const cluster = { brokers: 1, topic: 't', partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 };
    const t0 = Date.now();
    const log = (l: string) => console.log(`[crash-states] ${l}`);
    // Through the seams, as a scenario cell runs it: the VM target records the disk, the http driver loads and reads back.
    const target = vmTarget({
      vm: { accelerator: 'auto', memoryMiB: 640, diskMiB: 256, mountOptions: 'commit=1', disk: { ...DEFAULT_DISK_SPEC, model: 'volatile-cache', onCut: 'drop-unflushed' } },
      image: image!,
      log,
    });
    const trial = await runCrashStatesTrial({
      target,
      driver: httpDriver(),
      workDir: path.join(work, 'never'),
      cluster,
      settings: resolveSettings({ io: 'buffered', flush: 'never', acks: '1', 'vm.dirty_expire_centisecs': 100, 'vm.dirty_writeback_centisecs': 50 }, 1),
      workload: { recordBytes: 1024, recordsPerBatch: 8, connections: 4, pipelining: 1 },
      cutAfterMs: 4000,
      states: 60,
      policy: 'drop-unflushed',
      seed: 11,
      boot: 3,
      log,
    });
    const r = trial.result;
    const b = trial.breakdown;
    console.log(
      `[crash-states] ${r.states} states in ${b.wallMs} ms (${b.statesPerMin}/min: materialise ${b.materialiseMs}, journal ${b.journalMs}, extract ${b.extractMs}, ` +
        `recover ${b.recoverMs}, check ${b.checkMs} ms summed); write log ${JSON.stringify(r.writeLog)}; acked at cut ${trial.ackedAtCut}; ` +
        `lost min/median/p99/max ${r.lostMin}/${r.lostMedian}/${r.lostP99}/${r.lostMax}, fraction losing ${r.fractionLosing.toFixed(2)}; ` +
        `booted ${trial.booted.map((x) => `#${x.state} ${x.kind} host ${x.lostAcked}/${x.served} vm ${x.booted!.lostAcked}/${x.booted!.served}`).join(', ')}; total ${Date.now() - t0} ms`,
    );
    expect(trial.recorder).toBe('nbd');
    expect(trial.unseenEntries).toBe(0);
    expect(trial.ackedAtCut).toBeGreaterThan(0);
    expect(r.states).toBeGreaterThanOrEqual(50);
    expect(r.writeLog.flushes).toBeGreaterThan(0);
    expect(r.perState.every((s) => s.corrupt === 0 && s.inconsistentOffsets === 0 && s.duplicates === 0)).toBe(true);
    // Acknowledged records exist at most points; with no flush some states lose them.
    expect(r.perState.filter((s) => s.ackedBefore > 0).length).toBeGreaterThan(10);
    expect(r.lostMax).toBeGreaterThan(0);
    // Writeback put part of the log on the disk before the cut: the end state serves records.
    expect(r.perState.find((s) => s.kind === 'end')!.served).toBeGreaterThan(0);
    expect(r.fractionLosing).toBeGreaterThan(0);
    expect(r.earliestLosingPointUs).not.toBeNull();
    // Later points never have fewer acknowledged records than earlier ones.
    const acked = [...r.perState].sort((a, b2) => a.timeUs - b2.timeUs).map((s) => s.ackedBefore);
    expect(acked).toEqual([...acked].sort((a, b2) => a - b2));
    expect(trial.booted).toHaveLength(3);
    expect(trial.disagreements).toEqual([]);
    expect(r.verification).toEqual({ booted: 3, agreed: 3 });
    expect(findQemusMatching(work)).toEqual([]);
  }, 300_000);
});
