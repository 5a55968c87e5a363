// The NBD disk under a real VM broker (QEMU, TCG on this machine): the guest sees a volatile
// write cache ("write back"), fdatasync per batch reaches the server as FLUSHes, an injected
// write error becomes a real EIO in the guest kernel that takes the broker's log offline
// (KAFKA_STORAGE_ERROR, the failed log dir in /v1/health), a power cut applies the onCut
// policy, the broker comes back on the same disk with every acknowledged record, and nothing
// (QEMU, socket) is left behind. One file: the VMs never share the 2 cores with another test.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeBatch } from '../../engine/records/index.ts';
import { request } from '../../engine/server/http-client.ts';
import { readAllValues } from '../../engine/server/test-support.ts';
import { resolveSettings } from '../model/settings.ts';
import { GUEST_CLI_ENTRY, vmTarget, type VmCluster } from '../targets/vm-target.ts';
import { buildVmImage, ensureNoOrphans, findQemusMatching, type VmImage } from '../vm/index.ts';
import { isAlive } from '../vm/process-registry.ts';
import { DEFAULT_DISK_SPEC } from '../model/disk-spec.ts';

const TOPIC = 't';
let work: string;
let image: VmImage;
const clusters: VmCluster[] = [];

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-nbd-vm-'));
  image = await buildVmImage({ cliEntry: GUEST_CLI_ENTRY });
}, 180_000);

afterAll(async () => {
  for (const c of clusters) await c.stop().catch(() => {});
  await ensureNoOrphans();
  if (work && !process.env.DUROLAB_KEEP_TEST_DIR) await fs.rm(work, { recursive: true, force: true });
});

async function produce(url: string, value: string): Promise<{ status: number; text: string }> {
  const batch = encodeBatch({ records: [{ key: null, value: Buffer.from(value) }] });
  const a = await request(`${url}/v1/topics/${TOPIC}/partitions/0/records?acks=1&timeoutMs=15000`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.kafka.recordbatch.v2' },
    body: batch,
    timeoutMs: 20_000,
  });
  return { status: a.status, text: a.body.toString('utf8') };
}

describe('NBD disk under a VM broker', () => {
  it('write-back cache in the guest, FLUSHes per fdatasync, a real EIO takes the log offline, a cut applies onCut, nothing left running', async () => {
    const target = vmTarget({ image, vm: { accelerator: 'auto', memoryMiB: 640, diskMiB: 256, disk: { ...DEFAULT_DISK_SPEC, model: 'volatile-cache' } }, kvmProbeMs: 3000 });
    expect(target.diskModel).toBe('nbd-volatile-cache+drop-unflushed');
    const c = await target.start({
      cluster: { brokers: 1, topic: TOPIC, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 },
      settings: resolveSettings({ flush: 'per-batch' }, 1),
      workDir: path.join(work, 'one'),
      seed: 5,
    });
    clusters.push(c);
    const disk = c.nbdDisks().get(1)!;
    expect(disk).toBeDefined();
    const socket = disk.socketPath;
    expect(existsSync(socket)).toBe(true);
    const vm = c.vmOf(1)!;
    expect((await vm.readGuestFile('/sys/block/vda/queue/write_cache')).toString('utf8').trim()).toBe('write back');

    const url = c.urlOf(1);
    const acked: string[] = [];
    const flushesBefore = disk.server.counters.flushes;
    for (let i = 0; i < 20; i++) {
      const a = await produce(url, `v-${i}`);
      expect(a.status, a.text).toBe(200);
      acked.push(`v-${i}`);
    }
    // ext4 sends two FLUSHes per fdatasync (data + journal, then the commit block).
    expect(disk.server.counters.flushes - flushesBefore).toBeGreaterThanOrEqual(20);
    expect(disk.server.counters.fuaWrites).toBe(0);

    // A real EIO: every write from now fails in the guest kernel; the broker's fdatasync gets it.
    disk.faults.addRule({ on: 'write', nth: disk.faults.counts.writes + 1, sticky: true });
    const bad = await produce(url, 'after-eio');
    expect(bad.text).toContain('KAFKA_STORAGE_ERROR');
    const health = JSON.parse((await request(`${url}/v1/health`, { timeoutMs: 10_000 })).body.toString('utf8')) as {
      status: string;
      failedLogDirs: Array<{ topic: string; partition: number; error: string }>;
    };
    expect(health.status).toBe('degraded');
    expect(health.failedLogDirs).toHaveLength(1);
    expect(health.failedLogDirs[0]!.error).toMatch(/EIO|i\/o error/i);
    expect(disk.faults.injected.length).toBeGreaterThan(0);
    // Offline until restart: nothing more is acknowledged, even once the disk works again.
    disk.faults.clearRules();
    expect((await produce(url, 'still-offline')).text).toContain('KAFKA_STORAGE_ERROR');

    // Power cut: the cache loses what was never flushed; the broker comes back with every acked record.
    const cut = await c.powerCut([1]);
    expect(cut.diskAtCut?.[1]).toMatchObject({ policy: 'drop-unflushed' });
    await c.restart([1]);
    const served = await readAllValues(c.urlOf(1), TOPIC);
    for (const v of acked) expect(served).toContain(v);
    expect((await produce(c.urlOf(1), 'after-restart')).status).toBe(200);

    const pids = c.brokers.flatMap((b) => b.boots.map((x) => x.qemuPid));
    await c.stop();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(findQemusMatching(path.join(work, 'one'))).toEqual([]);
    expect(existsSync(socket)).toBe(false);
    expect(disk.report().writeLog!.records).toBeGreaterThan(40);
  }, 300_000);
});
