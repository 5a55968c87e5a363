// Real QEMU guests (TCG on this machine): boot, agent, sysctls, probes, the power-cut
// experiment with the append workload, a reboot on the cut disk, boot failures, and no QEMU
// left behind. One file so the VMs run one after another (two cores).
import { execa } from 'execa';
import { crc32cImplementation } from '../../engine/records/crc.ts';
import { pwriteImplementation } from '../../engine/storage/file-write.ts';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDiskstats } from '../probes/diskstats.ts';
import { parseVmstat } from '../probes/vmstat.ts';
import {
  buildVmImage,
  checkAppendLog,
  createFileDisk,
  ensureNoOrphans,
  findQemusMatching,
  prepareVmTemplate,
  templateKey,
  templatePath,
  templateSpecOf,
  GUEST_APPEND_WORKLOAD,
  GUEST_CLI,
  GUEST_DEPS_CHECK,
  readFileFromDisk,
  startAckCollector,
  Vm,
  type AckCollector,
  type VmImage,
} from './index.ts';

const AGENT_PORT = 7070;
const ACK = { guestIp: '10.0.2.100', guestPort: 9000 };
const RECORD_BYTES = 4096;

let work: string;
let image: VmImage;
let acks: AckCollector;
const started: Vm[] = [];

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitExited(vm: Vm, pid: number, timeoutMs: number): Promise<Awaited<ReturnType<Vm['processStatus']>>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const s = await vm.processStatus(pid);
    if (!s.running) return s;
    if (Date.now() > end) throw new Error(`guest pid ${pid} still running after ${timeoutMs} ms: ${await vm.processLog(pid)}`);
    await sleep(100);
  }
}

async function startVm(name: string, disk: Awaited<ReturnType<typeof createFileDisk>>, extra: Partial<Parameters<typeof Vm.start>[0]> = {}): Promise<Vm> {
  const vm = await Vm.start({
    name,
    image,
    disk,
    hostfwd: [],
    guestfwd: [{ ...ACK, hostPort: acks.port }],
    workDir: work,
    agentPort: AGENT_PORT,
    accel: 'tcg',
    ...extra,
  });
  started.push(vm);
  return vm;
}

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-vm-test-'));
  image = await buildVmImage({});
  acks = await startAckCollector();
}, 120_000);

afterAll(async () => {
  for (const vm of started) await vm.dispose().catch(() => {});
  await acks?.close();
  await ensureNoOrphans();
  if (work) await fs.rm(work, { recursive: true, force: true });
});

describe('VM target under QEMU', () => {
  it('boots (KVM tried first, TCG fallback), agent answers, sysctls read back, probes parse, image node_modules and CLI load', async () => {
    const disk = await createFileDisk(path.join(work, 'boot.img'), 128);
    const t0 = performance.now();
    // 'auto': tries KVM and falls back to TCG when QEMU fails or the guest stays silent.
    const vm = await startVm('boot', disk, { accel: 'auto', kvmProbeMs: 4000 });
    const bootMs = performance.now() - t0;
    console.log(`[vm] boot: accel=${vm.accel}${vm.boot.fallback ? ` (fallback: ${vm.boot.fallback.split('\n')[0]})` : ''}; spawn->init ${vm.boot.spawnToInitMs} ms, spawn->agent ${vm.boot.spawnToAgentMs} ms, total ${Math.round(bootMs)} ms`);
    expect(['kvm', 'tcg']).toContain(vm.accel);
    expect(vm.pid).toBeGreaterThan(0);
    expect(existsSync(vm.serialLogPath)).toBe(true);

    const health = (await (await fetch(`${vm.agentUrl}/v1/health`)).json()) as { ok: boolean; kernel: string; hostname: string };
    expect(health).toMatchObject({ ok: true, kernel: image.kernelVersion, hostname: 'boot' });

    const sysctls = {
      'vm.dirty_expire_centisecs': 4321,
      'vm.dirty_writeback_centisecs': 1234,
      'vm.dirty_background_bytes': 64 * 2 ** 20,
      'vm.dirty_bytes': 128 * 2 ** 20,
    };
    const setup = await vm.setup({ sysctls, mountOptions: 'commit=17' });
    expect(setup.sysctls).toEqual(sysctls);
    expect(setup.mount).toMatch(/^\/dev\/vda \/data ext4 .*commit=17/);
    expect(await vm.sysctl('vm.dirty_expire_centisecs')).toBe('4321');
    // dirty_bytes and dirty_ratio exclude each other: the kernel zeroes the ratio.
    expect(await vm.sysctl('vm.dirty_ratio')).toBe('0');
    await expect(vm.setup({ sysctls: { 'vm.no_such_knob': 1 }, mount: false })).rejects.toThrow(/vm\.no_such_knob' does not exist in the guest/);

    const probe = await vm.probe();
    const vmstat = parseVmstat(probe.vmstat, probe.tMs);
    expect(vmstat.dirtyBackgroundThreshold).toBe((64 * 2 ** 20) / 4096);
    const vda = parseDiskstats(probe.diskstats, 'vda', probe.tMs);
    expect(vda.readsCompleted).toBeGreaterThan(0); // the mount read the superblock
    expect(Math.abs(probe.tMs - Date.now())).toBeLessThan(5000);
    const samples: number[] = [];
    const poller = vm.pollProbes((p) => samples.push(p.tMs), { intervalMs: 250, onError: (e) => { throw e; } });
    await sleep(1100);
    await poller.stop();
    expect(samples.length).toBeGreaterThanOrEqual(3);
    expect(samples[samples.length - 1]! - samples[0]!).toBeGreaterThanOrEqual(400);

    // The native CRC-32C binding and a bundled npm package work in the guest.
    const deps = await vm.exec({ argv: ['node', GUEST_DEPS_CHECK] });
    const depsDone = await waitExited(vm, deps.pid, 30_000);
    const depsLog = await vm.processLog(deps.pid);
    expect(depsDone.exitCode, depsLog).toBe(0);
    const depsResult = JSON.parse(depsLog.trim().split('\n').pop()!);
    expect(depsResult).toMatchObject({ crc32c: 0xe3069283, p50: 200, engineCrc32c: 0xe3069283 });
    // The guest's engine runs the CRC-32C implementation the host runs (and records in run.json).
    expect(depsResult.engineCrc32cImplementation, JSON.stringify(depsResult)).toBe(crc32cImplementation.name);
    expect(depsResult.enginePwriteImplementation, JSON.stringify(depsResult)).toBe(pwriteImplementation.name);
    if (image.hasCli) {
      const cli = await vm.exec({ argv: ['node', GUEST_CLI, '--help'] });
      const cliDone = await waitExited(vm, cli.pid, 30_000);
      const cliLog = await vm.processLog(cli.pid);
      expect(cliDone.exitCode, cliLog).toBe(0);
      expect(cliLog).toMatch(/usage: durolab <command>/);
    }
    await expect(vm.exec({ argv: ['/no/such/binary'] })).rejects.toThrow(/could not start \/no\/such\/binary/);

    const t1 = performance.now();
    await vm.shutdown();
    console.log(`[vm] clean shutdown ${Math.round(performance.now() - t1)} ms`);
    expect(vm.running).toBe(false);
    expect(await fs.readFile(vm.serialLogPath, 'utf8')).toMatch(/durolab-agent: clean shutdown/);
  }, 90_000);

  it('power cut: fdatasync-per-record acks all survive (offline read and after a reboot); buffered acks with commit=60 are lost', async () => {
    const trial = async (label: string, sync: 'fdatasync' | 'none', ackTarget: number) => {
      acks.reset();
      const t0 = performance.now();
      const disk = await createFileDisk(path.join(work, `${label}.img`), 256);
      const vm = await startVm(label, disk);
      const tBoot = performance.now();
      await vm.setup({
        // A long commit interval and no time- or size-triggered writeback: only explicit syncs persist.
        sysctls: {
          'vm.dirty_expire_centisecs': 360_000,
          'vm.dirty_writeback_centisecs': 0,
          'vm.dirty_background_bytes': 512 * 2 ** 20,
          'vm.dirty_bytes': 768 * 2 ** 20,
        },
        mountOptions: 'commit=60',
      });
      const w = await vm.exec({
        argv: ['node', GUEST_APPEND_WORKLOAD, '--file', '/data/log', '--record-bytes', String(RECORD_BYTES), '--sync', sync, '--ack-url', `http://${ACK.guestIp}:${ACK.guestPort}/ack`],
      });
      await acks.waitFor(ackTarget, 30_000);
      // Vary the cut point a little so it does not always land at the same place in the workload.
      await sleep(Math.floor(Math.random() * 150));
      const status = await vm.processStatus(w.pid);
      expect(status.running, `workload ended before the cut: ${await vm.processLog(w.pid)}`).toBe(true);
      const cut = await vm.powerCut();
      const tCut = performance.now();
      const acked = acks.state();
      const data = await readFileFromDisk(disk, '/data/log');
      const check = checkAppendLog(data, RECORD_BYTES);
      const tInspect = performance.now();
      // The workload was acknowledging right up to the cut: nothing stopped early.
      expect(cut.cutAtMs - acked.lastAckAtMs!).toBeLessThan(1000);
      expect(cut.processes.find((p) => p.pid === w.pid)).toMatchObject({ exitedSeen: false });
      const cycle = {
        label,
        acked: acked.count,
        survived: check.validRecords,
        fileBytes: check.fileBytes,
        bootMs: Math.round(tBoot - t0),
        loadMs: Math.round(tCut - tBoot),
        inspectMs: Math.round(tInspect - tCut),
        cycleMs: Math.round(tInspect - t0),
      };
      console.log(`[vm] cut trial ${JSON.stringify(cycle)}`);
      return { disk, acked: acked.count, check, cycle };
    };

    const synced = await trial('cut-fdatasync', 'fdatasync', 200);
    expect(synced.check.firstInvalid).toBeUndefined();
    expect(synced.check.validRecords).toBeGreaterThanOrEqual(synced.acked);
    expect(synced.cycle.cycleMs).toBeLessThan(40_000);

    // Reboot on the cut disk: the guest's ext4 replays its journal at mount and sees the same records.
    const vm2 = await startVm('cut-fdatasync-reboot', synced.disk);
    await vm2.setup({ sysctls: {}, mountOptions: 'commit=60' });
    const afterReboot = checkAppendLog(await vm2.readGuestFile('/data/log'), RECORD_BYTES);
    expect(afterReboot.validRecords).toBe(synced.check.validRecords);
    // A guest that went down on its own before the cut must not pass for a cut.
    await vm2.exec({ argv: ['sh', '-c', 'sleep 0.3; poweroff -f -n'] });
    await vm2.exited;
    await expect(vm2.powerCut()).rejects.toThrow(/QEMU had already exited .*before the power cut; serial log: /);

    const buffered = await trial('cut-buffered', 'none', 2000);
    expect(buffered.acked).toBeGreaterThanOrEqual(2000);
    // The file was created and fsynced before the first record: it exists, its records do not.
    expect(buffered.check.validRecords).toBeLessThan(buffered.acked);
    console.log(`[vm] lost acknowledged records: fdatasync ${synced.acked - Math.min(synced.acked, synced.check.validRecords)}/${synced.acked}, buffered ${buffered.acked - buffered.check.validRecords}/${buffered.acked}`);
  }, 120_000);

  it('a guest resumed from the saved template mounts its own disk (not what the template cached) and takes the host clock and its name', async () => {
    // Disk B holds a file the template never saw; the template booted on a blank disk of the same size.
    const content = path.join(work, 'resume-content');
    await fs.mkdir(content, { recursive: true });
    await fs.writeFile(path.join(content, 'marker'), 'disk B\n');
    const diskB = await createFileDisk(path.join(work, 'resume-b.img'), 64, { mkfsArgs: ['-d', content] });
    const shape = { image, disk: diskB, agentPort: AGENT_PORT, accel: 'tcg' as const, memoryMiB: 512 };
    const template = await prepareVmTemplate(shape);
    expect(template).toBeDefined();
    const t0 = performance.now();
    const vm = await startVm('resumed-b', diskB, { memoryMiB: 512 });
    console.log(`[vm] resume: spawn->agent ${vm.boot.spawnToAgentMs} ms (template ${template!.key}${template!.madeMs !== undefined ? `, made in ${template!.madeMs} ms` : ''}), total ${Math.round(performance.now() - t0)} ms`);
    expect(vm.boot.resumed).toEqual({ template: template!.key });
    expect(vm.boot.spawnToInitMs).toBeUndefined();
    // The saved guest's broker zygote ran its warm-up broker (guest/broker-warmup.ts) before the save.
    const templateLog = await fs.readFile(templatePath(template!.key).replace(/\.state$/, '.serial.log'), 'utf8');
    expect(templateLog).toMatch(/durolab-agent: broker zygote \d+ ready; warm-up \{"ms":\d+,"produced":40\}/);
    await vm.setup({ sysctls: {} });
    expect((await vm.readGuestFile('/data/marker')).toString()).toBe('disk B\n');
    const health = (await (await fetch(`${vm.agentUrl}/v1/health`)).json()) as { hostname: string };
    expect(health.hostname).toBe('resumed-b');
    const date = await vm.exec({ argv: ['date', '+%s'] });
    expect((await waitExited(vm, date.pid, 10_000)).exitCode).toBe(0);
    expect(Math.abs(Number((await vm.processLog(date.pid)).trim()) - Date.now() / 1000)).toBeLessThan(5);
    await vm.powerCut();
    // Another shape (disk size) whose saved state is damaged: QEMU refuses it, the state is
    // dropped (the next start makes a new one) and this start boots, saying why.
    const other = await createFileDisk(path.join(work, 'resume-other.img'), 48);
    const otherSpec = templateSpecOf({ image, disk: other, agentPort: AGENT_PORT, memoryMiB: 512 });
    const damaged = templatePath(await templateKey(otherSpec));
    await fs.writeFile(damaged, Buffer.concat([Buffer.from('QEVM\0\0\0\x03'), Buffer.alloc(1000, 0x5a)]));
    const cold = await startVm('not-resumed', other, { memoryMiB: 512 });
    expect(cold.boot.resumed).toBeUndefined();
    expect(cold.boot.resumeFallback).toMatch(new RegExp(`^resuming template ${damaged.replaceAll('.', '\\.')}: QEMU exited during boot [\\s\\S]*load of migration failed`));
    expect(cold.boot.spawnToInitMs).toBeGreaterThan(0);
    expect(existsSync(damaged)).toBe(false);
    await cold.powerCut();
    // With no saved state at all, the start boots and says so.
    const none = await startVm('no-template', other, { memoryMiB: 512 });
    expect(none.boot.resumeFallback).toBe('no saved guest of this VM shape was found');
    await none.powerCut();
  }, 120_000);

  it('a VM that cannot boot fails with an error naming its serial log', async () => {
    const disk = await createFileDisk(path.join(work, 'bogus.img'), 32);
    const bogusKernel = path.join(work, 'bogus-vmlinuz');
    await fs.writeFile(bogusKernel, 'not a kernel\n');
    const bogus = { ...image, kernel: bogusKernel };
    await expect(Vm.start({ name: 'bogus-kernel', image: bogus, disk, hostfwd: [], workDir: work, agentPort: AGENT_PORT, accel: 'tcg', bootTimeoutMs: 10_000 })).rejects.toThrow(
      new RegExp(`serial log: ${path.join(work, 'bogus-kernel.serial.log').replaceAll('.', '\\.')}`),
    );
    const bogusInitrd = path.join(work, 'bogus-initrd');
    await fs.writeFile(bogusInitrd, Buffer.alloc(4096, 0x5a));
    await expect(
      Vm.start({ name: 'bogus-initrd', image: { ...image, initrd: bogusInitrd }, disk, hostfwd: [], workDir: work, agentPort: AGENT_PORT, accel: 'tcg', bootTimeoutMs: 8000 }),
    ).rejects.toThrow(/bogus-initrd\.serial\.log/);
    // A real image with too short a timeout: killed at the timeout, error names the log.
    const t0 = performance.now();
    const err = (await Vm.start({ name: 'too-slow', image, disk, hostfwd: [], workDir: work, agentPort: AGENT_PORT, accel: 'tcg', bootTimeoutMs: 1500 }).catch((e: Error) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/did not boot within 1500 ms.*serial log: .*too-slow\.serial\.log/s);
    expect(performance.now() - t0).toBeLessThan(5000);
  }, 60_000);

  it('leaves no QEMU process behind', async () => {
    for (const vm of started) await vm.dispose();
    expect(await ensureNoOrphans()).toEqual([]);
    expect(findQemusMatching(work)).toEqual([]);
    const pgrep = await execa('pgrep', ['-f', `qemu-system.*${work}`], { reject: false });
    expect(pgrep.stdout.trim()).toBe('');
    expect(pgrep.exitCode).toBe(1); // pgrep: no process matched
  });
});
