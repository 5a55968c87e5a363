// The VM target with real QEMU guests (TCG on this machine, after KVM is tried): one broker per
// VM, the controller on the host, produce/consume through the loopback forwards, power cuts
// and a process kill, and no QEMU left behind. One file so the VMs of different tests never
// share the 2 cores. Timings are printed with a [vm-target] prefix.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { encodeBatch } from '../../engine/records/index.ts';
import { request } from '../../engine/server/http-client.ts';
import { readAllValues, waitFor } from '../../engine/server/test-support.ts';
import { resolveSettings } from '../model/settings.ts';
import { type SettingValue } from '../scenario/settings.ts';
import type { ClusterSpec } from '../model/scenario.ts';
import { buildVmImage, ensureNoOrphans, findQemusMatching, type VmImage } from '../vm/index.ts';
import { isAlive } from '../vm/process-registry.ts';
import { GUEST_CLI_ENTRY, vmTarget, type VmCluster, type VmTargetOptions } from './vm-target.ts';

let work: string;
let image: VmImage;
const clusters: VmCluster[] = [];

const TOPIC = 't';

function spec(brokers: number, rf: number, minIsr = 1): ClusterSpec {
  return { brokers, topic: TOPIC, partitions: 1, replicationFactor: rf, minInsyncReplicas: minIsr };
}

async function startCluster(name: string, cluster: ClusterSpec, params: Record<string, SettingValue>, vm: VmTargetOptions['vm'] = {}): Promise<VmCluster> {
  const target = vmTarget({ image, vm: { accelerator: 'auto', memoryMiB: 640, diskMiB: 256, ...vm }, kvmProbeMs: 3000 });
  expect(target.kind).toBe('vm');
  const c = await target.start({ cluster, settings: resolveSettings(params, cluster.minInsyncReplicas), workDir: path.join(work, name) });
  clusters.push(c);
  return c;
}

/** POST one RecordBatch v2 (REPLICATION-DESIGN.md); returns the status and the answer. */
async function produce(url: string, values: string[], acks: '0' | '1' | 'all'): Promise<{ status: number; body: { baseOffset?: number; error?: string } }> {
  const batch = encodeBatch({ records: values.map((v) => ({ key: null, value: Buffer.from(v) })) });
  const a = await request(`${url}/v1/topics/${TOPIC}/partitions/0/records?acks=${acks}&timeoutMs=15000`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.kafka.recordbatch.v2' },
    body: batch,
    timeoutMs: 20_000,
  });
  return { status: a.status, body: a.body.length > 0 ? (JSON.parse(a.body.toString('utf8')) as { baseOffset?: number }) : {} };
}

/** Produces `n` single-record batches one after another; returns the acknowledged values and the median latency. */
async function produceSequential(url: string, prefix: string, n: number, acks: '1' | 'all'): Promise<{ acked: string[]; medianMs: number }> {
  const acked: string[] = [];
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const v = `${prefix}-${i}`;
    const t = performance.now();
    const a = await produce(url, [v], acks);
    lat.push(performance.now() - t);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    acked.push(v);
  }
  lat.sort((a, b) => a - b);
  return { acked, medianMs: Math.round(lat[Math.floor(lat.length / 2)]! * 10) / 10 };
}

/** Runs a node script in the guest that times keep-alive GETs to `url` and tries `blockedUrl`. */
async function guestHttpTiming(c: VmCluster, id: number, url: string, blockedUrl: string): Promise<{ status: number; firstMs: number; medianMs: number; n: number; gatewayBlocked: boolean }> {
  const vm = c.vmOf(id)!;
  const script = `
const http = require('http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const get = (u) => new Promise((resolve, reject) => {
  const r = http.get(u, { agent, timeout: 3000 }, (s) => { s.resume(); s.on('end', () => resolve(s.statusCode)); });
  r.on('error', reject);
  r.on('timeout', () => r.destroy(new Error('timeout')));
});
(async () => {
  const t = []; let status = 0;
  for (let i = 0; i < 31; i++) { const t0 = performance.now(); status = await get(${JSON.stringify(url)}); t.push(performance.now() - t0); }
  const firstMs = Math.round(t[0] * 10) / 10;
  const rest = t.slice(1).sort((a, b) => a - b);
  let gatewayBlocked = false;
  try { await get(${JSON.stringify(blockedUrl)}); } catch { gatewayBlocked = true; }
  console.log(JSON.stringify({ status, firstMs, medianMs: Math.round(rest[15] * 10) / 10, n: rest.length, gatewayBlocked }));
  agent.destroy();
})();`;
  const p = await vm.exec({ argv: ['node', '-e', script] });
  await waitFor('the guest timing script', async () => !(await vm.processStatus(p.pid)).running, 30_000, 100);
  const log = await vm.processLog(p.pid);
  return JSON.parse(log.trim().split('\n').pop()!) as { status: number; firstMs: number; medianMs: number; n: number; gatewayBlocked: boolean };
}

function expectNoQemu(c: VmCluster, dir: string): void {
  for (const b of c.brokers) for (const boot of b.boots) expect(isAlive(boot.qemuPid), `QEMU ${boot.qemuPid} of ${boot.name}`).toBe(false);
  expect(findQemusMatching(dir)).toEqual([]);
}

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-vm-target-'));
  image = await buildVmImage({ cliEntry: GUEST_CLI_ENTRY });
}, 120_000);

afterAll(async () => {
  for (const c of clusters) await c.stop().catch(() => {});
  await ensureNoOrphans();
  // DUROLAB_KEEP_TEST_DIR=1 keeps the serial logs and disks for a post-mortem.
  if (work && !process.env.DUROLAB_KEEP_TEST_DIR) await fs.rm(work, { recursive: true, force: true });
  else if (work) console.log(`[vm-target] kept ${work}`);
});

describe('VM target (one broker per QEMU VM, controller on the host)', () => {
  it('one VM broker: produce and consume through the forward, guest probes, process kill and restart, stop leaves no QEMU', async () => {
    const t0 = performance.now();
    const c = await startCluster('one', spec(1, 1), { flush: 'per-batch' });
    const tUp = performance.now();
    expect(['kvm', 'tcg']).toContain(c.accelerator);
    const [b] = c.brokers;
    expect(b).toMatchObject({ id: 1, url: c.urlOf(1), guestDataDir: '/data/broker-1', advertisedUrl: 'http://10.0.2.100:9101' });
    expect(b!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(b!.pid).toBeGreaterThan(0);
    // Data (the disk) under dataDir, logs beside it: removing dataDir keeps the broker's log.
    expect(b!.diskImage).toBe(path.join(b!.dataDir, 'disk.img'));
    expect(path.dirname(b!.logPath)).toBe(path.dirname(b!.dataDir));
    // Under accelerator auto, TCG only ever runs as the fallback, and the boot says why KVM was dropped.
    if (c.accelerator === 'tcg') expect(b!.boots[0]!.fallback).toMatch(/^kvm/);
    expect((await c.leaders(TOPIC)).get(0)?.id).toBe(1);
    expect(c.leaderId(TOPIC, 0)).toBe(1);

    const { acked, medianMs } = await produceSequential(c.urlOf(1), 'one', 40, '1');
    // A multi-record batch too: offsets advance by its record count.
    const multi = await produce(c.urlOf(1), ['m-0', 'm-1', 'm-2'], '1');
    expect(multi).toMatchObject({ status: 200, body: { baseOffset: 40 } });
    expect(await readAllValues(c.urlOf(1), TOPIC)).toEqual([...acked, 'm-0', 'm-1', 'm-2']);

    const metrics = await c.metrics();
    expect(metrics.map((m) => m.brokerId)).toEqual([1]);
    const pm = (metrics[0]!.metrics as { partitions: Array<{ leo: number; flushes: number }> }).partitions[0]!;
    expect(pm.leo).toBe(43);
    expect(pm.flushes).toBeGreaterThanOrEqual(41);

    // The guest's own figures: flush=per-batch wrote (and flushed) the data disk.
    await waitFor('4 guest probe samples', async () => c.guestProbes(1).samples.length >= 4, 10_000, 100);
    const series = c.guestProbes(1);
    expect(series.device).toBe('vda');
    const first = series.samples[0]!;
    const last = series.samples[series.samples.length - 1]!;
    expect(last.disk!.writesCompleted).toBeGreaterThan(first.disk!.writesCompleted);
    expect(last.disk!.flushesCompleted ?? 0).toBeGreaterThan(first.disk!.flushesCompleted ?? 0);
    expect(last.vmstat.dirtyThreshold).toBeGreaterThan(0);
    expect(series.marks[0]!.label).toMatch(/^boot broker-1/);

    // SIGKILL of the broker alone: the guest (and its page cache) lives on; restart in the same VM.
    const qemuPid = b!.pid;
    const kill = await c.processKill([1]);
    expect(kill.liveAtCut).toEqual({ 1: true });
    expect(kill.guestDirtyBeforeCut[1]!.nrDirty).toBeGreaterThanOrEqual(0);
    const [rec] = await c.restart([1]);
    expect(c.brokers[0]!.pid).toBe(qemuPid);
    expect(rec!.partitions).toEqual([expect.objectContaining({ topic: TOPIC, partition: 0, cleanShutdown: false })]);
    await c.waitForLeaders(TOPIC, 30_000);
    expect(await readAllValues(c.urlOf(1), TOPIC)).toHaveLength(43);
    await expect(c.restart([1])).rejects.toThrow(/broker 1 is running/);

    // Guest -> host through the guestfwd (busybox nc on the host), keep-alive, as the brokers'
    // heartbeats and fetches use it; and restrict=on: the slirp gateway (the host) is unreachable.
    const net = await guestHttpTiming(c, 1, `http://10.0.2.100:9090/v1/health`, `http://10.0.2.2:${new URL(c.controllerUrl).port}/v1/health`);
    expect(net.status).toBe(200);
    expect(net.gatewayBlocked).toBe(true);

    const dir = path.join(work, 'one');
    await c.stop();
    expectNoQemu(c, dir);
    // The broker's own log lines reached the serial log on the host.
    expect(await fs.readFile(b!.logPath, 'utf8')).toMatch(/\[broker 1\] t-0: became-leader/);
    console.log(
      `[vm-target] 1 VM: accel ${c.accelerator}${b!.boots[0]!.fallback ? ` (${b!.boots[0]!.fallback.split('\n')[0]})` : ''}; start ${Math.round(tUp - t0)} ms ` +
        `(${JSON.stringify(c.timings)}, boot ${JSON.stringify(b!.boots[0])}); produce acks=1 median ${medianMs} ms through the hostfwd; ` +
        `process kill -> serving again ${rec!.restartMs} ms; ${series.samples.length} guest probe samples; ` +
        `guest -> controller through guestfwd: first request ${net.firstMs} ms, then median ${net.medianMs} ms over ${net.n} keep-alive requests; host gateway blocked: ${net.gatewayBlocked}`,
    );
  }, 90_000);

  it('a VM that does not boot fails naming its serial log; an abort (Ctrl-C) while booting kills every QEMU', async () => {
    // Boots, not resumes of the saved guest (which answer within 1.5 s and leave no boot to abort).
    process.env.DUROLAB_VM_RESUME = '0';
    onTestFinished(() => void delete process.env.DUROLAB_VM_RESUME);
    const slowDir = path.join(work, 'too-slow');
    const slow = vmTarget({ image, vm: { accelerator: 'tcg', memoryMiB: 640, diskMiB: 64 }, bootTimeoutMs: 1500 });
    const t0 = performance.now();
    const err = (await slow.start({ cluster: spec(1, 1), settings: resolveSettings({}, 1), workDir: slowDir }).catch((e: Error) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/did not boot within 1500 ms.*serial log: .*too-slow\/broker-1\.serial\.log/s);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(findQemusMatching(slowDir)).toEqual([]);

    const abortDir = path.join(work, 'aborted');
    const ac = new AbortController();
    const target = vmTarget({ image, vm: { accelerator: 'tcg', memoryMiB: 640, diskMiB: 64 } });
    const starting = target.start({ cluster: spec(2, 1), settings: resolveSettings({}, 1), workDir: abortDir, signal: ac.signal }).catch((e: Error) => e);
    await waitFor('both QEMUs spawned', async () => findQemusMatching(abortDir).length === 2, 10_000, 50);
    const tAbort = performance.now();
    ac.abort();
    const aborted = await starting;
    const abortMs = Math.round(performance.now() - tAbort);
    expect(aborted).toBeInstanceOf(Error);
    expect(findQemusMatching(abortDir)).toEqual([]);
    expect(abortMs).toBeLessThan(5000);
    console.log(`[vm-target] boot timeout error after ${Math.round(performance.now() - t0)} ms; abort while booting: start rejected ${abortMs} ms later (${(aborted as Error).message.split('\n')[0]})`);
  }, 40_000);

  it('power cut of one VM broker: flush per batch keeps every acked record; no flush with commit=60 loses acked records', async () => {
    const cycle = async (label: string, params: Record<string, SettingValue>, vm: VmTargetOptions['vm'], n: number) => {
      const t0 = performance.now();
      const c = await startCluster(label, spec(1, 1), params, vm);
      const tUp = performance.now();
      const { acked } = await produceSequential(c.urlOf(1), label, n, '1');
      const tLoad = performance.now();
      const cut = await c.powerCut([1]);
      expect(cut.liveAtCut).toEqual({ 1: true });
      expect(cut.notes).toEqual([]);
      expect(cut.guestState[1]?.fresh).toBe(true);
      expect(cut.atMs).toBeLessThanOrEqual(Date.now());
      expect(c.brokers[0]!.pid).toBeNull();
      await expect(c.powerCut([1])).rejects.toThrow(/VM is not running/);
      const [rec] = await c.restart([1]);
      await c.waitForLeaders(TOPIC, 30_000);
      const present = new Set(await readAllValues(c.urlOf(1), TOPIC));
      const tVerify = performance.now();
      const lost = acked.filter((v) => !present.has(v)).length;
      const boots = c.brokers[0]!.boots;
      expect(boots).toHaveLength(2);
      expect(boots[1]!.name).toMatch(/^broker-1-boot\d+$/);
      expect(c.guestProbeBoots(1)).toHaveLength(2);
      expect(c.guestProbes(1).marks.map((m) => m.label)).toContain('power-cut');
      await c.stop();
      expectNoQemu(c, path.join(work, label));
      const figures = {
        acked: acked.length,
        lost,
        dirtyPagesAtCut: cut.guestDirtyBeforeCut[1],
        recovery: rec!.partitions,
        startMs: Math.round(tUp - t0),
        loadMs: Math.round(tLoad - tUp),
        restartMs: rec!.restartMs,
        cycleMs: Math.round(tVerify - t0),
      };
      console.log(`[vm-target] cut ${label}: ${JSON.stringify(figures)}`);
      return { lost, acked: acked.length, rec: rec!, cut };
    };

    const synced = await cycle('cut-per-batch', { flush: 'per-batch' }, {}, 60);
    expect(synced.lost).toBe(0);
    // The broker recovered the partition after an unclean stop and reported it.
    expect(synced.rec.partitions).toEqual([expect.objectContaining({ topic: TOPIC, partition: 0, cleanShutdown: false })]);

    const buffered = await cycle(
      'cut-no-flush',
      // Only explicit syncs would persist: no time- or size-triggered writeback, a 60 s ext4 commit.
      { flush: 'never', 'vm.dirty_expire_centisecs': 360_000, 'vm.dirty_writeback_centisecs': 0, 'vm.dirty_background_bytes': 256 * 2 ** 20, 'vm.dirty_bytes': 384 * 2 ** 20 },
      { mountOptions: 'commit=60' },
      120,
    );
    expect(buffered.cut.guestDirtyBeforeCut[1]!.nrDirty).toBeGreaterThan(0);
    expect(buffered.lost).toBeGreaterThan(0);
    console.log(`[vm-target] acknowledged records lost by a power cut: flush=per-batch ${synced.lost}/${synced.acked}; flush=never, commit=60 ${buffered.lost}/${buffered.acked}`);
  }, 100_000);

  it('three VM brokers, RF 3, acks=all: replication through the guest forwards, leader cut, new leader keeps every acks=all record', async () => {
    const t0 = performance.now();
    const c = await startCluster('three', spec(3, 3, 2), { flush: 'never', 'min.insync.replicas': 2, 'replica.lag.time.max.ms': 10_000 });
    const tUp = performance.now();
    const old = c.leaderId(TOPIC, 0)!;
    expect([1, 2, 3]).toContain(old);
    const { acked, medianMs } = await produceSequential(c.urlOf(old), 'all', 40, 'all');
    // Every follower fetched through its guest forward to the leader's host port.
    await waitFor(
      'followers at the leader LEO',
      async () => {
        const ms = await c.metrics();
        return ms.every((m) => (m.metrics as { partitions: Array<{ leo: number }> }).partitions[0]!.leo === 40);
      },
      15_000,
      100,
    );
    const tLoad = performance.now();
    const cut = await c.powerCut([old]);
    expect(cut.liveAtCut).toEqual({ [old]: true });
    await waitFor('a new leader', async () => (c.leaderId(TOPIC, 0) ?? old) !== old, 30_000, 100);
    await c.waitForLeaders(TOPIC, 30_000);
    const tElected = performance.now();
    const next = c.leaderId(TOPIC, 0)!;
    const leaders = await c.leaders(TOPIC);
    expect(leaders.get(0)!.url).toBe(c.urlOf(next));
    // The new leader's HW advances once the surviving follower fetched from it.
    const settled = await c.waitForHighWatermarks(TOPIC, 15_000);
    expect(settled.get(0)).toEqual({ leader: next, hw: 40, leo: 40 });
    const tSettled = performance.now();
    const values = await readAllValues(c.urlOf(next), TOPIC);
    expect(acked.filter((v) => !values.includes(v))).toEqual([]);
    // acks=all still works with two of three replicas (min.insync.replicas=2).
    expect((await produce(c.urlOf(next), ['after-cut'], 'all')).status).toBe(200);

    const [rec] = await c.restart([old]);
    expect(rec!.partitions).toEqual([expect.objectContaining({ topic: TOPIC, partition: 0, cleanShutdown: false })]);
    await waitFor(
      'the restarted broker back in the ISR',
      async () => {
        const m = (await c.metrics()).find((x) => x.brokerId === next)!.metrics as { partitions: Array<{ isr: number[] }> };
        return m.partitions[0]!.isr.includes(old);
      },
      30_000,
      200,
    );
    const tEnd = performance.now();
    // Heartbeats held up under TCG: only the cut broker was ever fenced (no spurious failover).
    const fenced = c.controllerState().events.filter((e) => e.kind === 'fenced').map((e) => (e as { brokerId?: number }).brokerId);
    expect(fenced).toEqual([old]);
    await c.stop();
    expectNoQemu(c, path.join(work, 'three'));
    console.log(
      `[vm-target] 3 VMs: start ${Math.round(tUp - t0)} ms (${JSON.stringify(c.timings)}); acks=all median ${medianMs} ms; ` +
        `leader ${old} cut -> leader ${next} serving ${Math.round(tElected - tLoad)} ms later, its HW at the LEO ${Math.round(tSettled - tLoad)} ms after the cut; acks=all lost 0/${acked.length}; ` +
        `restart of ${old}: ${rec!.restartMs} ms, back in ISR at ${Math.round(tEnd - tLoad)} ms after the cut; whole cycle ${Math.round(tEnd - t0)} ms`,
    );
  }, 180_000);
});
