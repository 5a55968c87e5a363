// One broker in its own QEMU VM: boot (or boot again on the same disk after a power cut), set
// the guest's sysctls and ext4 mount options, start `durolab broker` in the guest, stream the
// guest's vmstat/diskstats into a probe series, and end it by power cut (SIGKILL of QEMU) or
// by SIGKILL of the broker process alone (the guest's page cache survives).
// The broker writes its log to the guest console, i.e. the VM's serial log on the host: it
// survives the cut, where a guest file would not.
import path from 'node:path';
import { tailOfFile } from '../../engine/common/file-tail.ts';
import { request } from '../../engine/server/http-client.ts';
import { ProbeSeriesBuilder, type ProbeSeries } from '../probes/index.ts';
import { GUEST_CLI, GUEST_DATA_MOUNT, Vm, type Accel, type DataDisk, type GuestProcess, type ProbeResult } from '../vm/index.ts';
import { AGENT_GUEST_PORT, forwardsFor, type BrokerAddress } from './vm-network.ts';
import type { BootRecord, BrokerHealth, GuestStateAtFault, VmBrokerConfig } from './vm-broker-types.ts';

export type { BootRecord, BrokerHealth, GuestStateAtFault, VmBrokerConfig } from './vm-broker-types.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const tailOf = (file: string, lines = 20): string => tailOfFile(file, lines, '(no serial output)');

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p.finally(() => clearTimeout(timer)), new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
}

export class VmBroker {
  readonly id: number;
  readonly addr: BrokerAddress;
  readonly guestDataDir: string;
  vm: Vm | null = null;
  /** Guest pid of the broker process (the agent's child), while one was started in this VM. */
  guestPid: number | null = null;
  readonly boots: BootRecord[] = [];
  /** One probe series per boot: a reboot resets the guest's counters. */
  private readonly series: ProbeSeriesBuilder[] = [];
  private poller: { stop: () => Promise<void> } | null = null;
  /** Liveness of the broker as the last probe saw it. */
  private lastSeen: { tMs: number; brokerRunning: boolean } | null = null;
  private probeFailures = 0;
  private firstProbeFailure: string | null = null;
  private disposed = false;
  /** Every Vm.start so far (failed ones too): names each attempt, so no serial log is overwritten. */
  private bootAttempts = 0;

  constructor(private readonly cfg: VmBrokerConfig) {
    this.id = cfg.id;
    const addr = cfg.plan.brokers.get(cfg.id);
    if (!addr) throw new Error(`VM target: broker ${cfg.id} missing from the network plan`);
    this.addr = addr;
    this.guestDataDir = `${GUEST_DATA_MOUNT}/broker-${cfg.id}`;
  }

  get vmRunning(): boolean {
    return this.vm?.running ?? false;
  }

  /** The serial log of the current (or last) boot; it holds the broker's log lines too. */
  get logPath(): string {
    return this.boots[this.boots.length - 1]?.serialLogPath ?? path.join(this.cfg.logDir, `broker-${this.id}.serial.log`);
  }

  /** Host directory of this broker's data (the disk image). */
  get hostDir(): string {
    return this.cfg.dir;
  }

  /** The broker's data disk (file or NBD). */
  get disk(): DataDisk {
    return this.cfg.disk;
  }

  /** Host path of the raw data disk image. */
  get diskImage(): string {
    return this.cfg.disk.imagePath;
  }

  get qemuPid(): number | null {
    return this.vmRunning ? this.vm!.pid : null;
  }

  get accel(): Accel | undefined {
    return this.boots[this.boots.length - 1]?.accel;
  }

  /** Boots a VM on the disk, applies sysctls and mount options, starts the probe stream and the broker. */
  async bootAndStart(): Promise<BootRecord> {
    if (this.disposed) throw new Error(`broker ${this.id}: VM target already stopped`);
    if (this.vmRunning) throw new Error(`broker ${this.id}: its VM is still running (power-cut it first)`);
    const t0 = performance.now();
    const failedAttempts: string[] = [];
    let { vm, boot } = await this.bootVm(true, failedAttempts);
    // The guest mounts the data disk here: after a cut, ext4 replays its journal now.
    let tSetup = performance.now();
    let setup: Awaited<ReturnType<Vm['setup']>>;
    try {
      setup = await this.setupVm(vm);
    } catch (err) {
      // Seen once in ~40 setups of guests resumed from a template: the setup call got no answer
      // within 20 s. The guest is killed and one booted instead; a mount that had begun
      // replaying the journal replays it again, as after a second crash during recovery.
      if (this.disposed || !vm.boot.resumed) throw err;
      const agent = await vm.probe().then(
        () => 'its agent still answered a probe',
        (e: Error) => `its agent did not answer a probe either: ${e.message}`,
      );
      const why = `${boot.name} (resumed): ${(err as Error).message} (${agent})`;
      this.cfg.log(`broker ${this.id}: setup failed in ${why}; booting a guest instead`);
      failedAttempts.push(why);
      this.boots.splice(this.boots.indexOf(boot), 1);
      await vm.dispose();
      ({ vm, boot } = await this.bootVm(false, failedAttempts));
      tSetup = performance.now();
      setup = await this.setupVm(vm);
    }
    boot.setupMs = Math.round(performance.now() - tSetup);
    this.cfg.log(`broker ${this.id}: ${boot.name} up under ${vm.accel} in ${vm.boot.spawnToAgentMs} ms; ${setup.mount ?? 'data disk not mounted'}`);
    const builder = new ProbeSeriesBuilder({ device: 'vda', intervalMs: this.cfg.probeIntervalMs });
    builder.mark(`boot ${boot.name}`, Date.now());
    this.series.push(builder);
    this.poller = vm.pollProbes((p) => this.addSample(builder, p), {
      intervalMs: this.cfg.probeIntervalMs,
      onError: (e) => {
        this.probeFailures++;
        this.firstProbeFailure ??= e.message;
      },
    });
    const tBroker = performance.now();
    await this.startBroker();
    boot.brokerStartMs = Math.round(performance.now() - tBroker);
    boot.toServingMs = Math.round(performance.now() - t0);
    return boot;
  }

  private setupVm(vm: Vm): ReturnType<Vm['setup']> {
    return vm.setup({ sysctls: this.cfg.sysctls, ...(this.cfg.mountOptions ? { mountOptions: this.cfg.mountOptions } : {}) });
  }

  /** Starts a VM on the disk (resumed from a template when `resume` and one exists) and records the boot. */
  private async bootVm(resume: boolean, failedAttempts: string[]): Promise<{ vm: Vm; boot: BootRecord }> {
    const { hostfwd, guestfwd } = forwardsFor(this.cfg.plan, this.id);
    let vm: Vm;
    let name: string;
    for (;;) {
      const n = ++this.bootAttempts;
      name = n === 1 ? `broker-${this.id}` : `broker-${this.id}-boot${n}`;
      try {
        vm = await Vm.start({
          name,
          image: this.cfg.image,
          disk: this.cfg.disk,
          memoryMiB: this.cfg.memoryMiB,
          accel: this.cfg.accel,
          hostfwd,
          guestfwd,
          workDir: this.cfg.logDir,
          bootTimeoutMs: this.cfg.bootTimeoutMs,
          agentPort: AGENT_GUEST_PORT,
          ...(this.cfg.kvmProbeMs !== undefined ? { kvmProbeMs: this.cfg.kvmProbeMs } : {}),
          ...(resume ? {} : { resume: false }),
        });
        break;
      } catch (err) {
        // A guest that went down before its agent answered never touched the data disk (the
        // agent mounts it later), so booting again cannot change what the trial measures. Seen
        // once in ~20 boots under heavy host load; its serial log (named per attempt) is kept.
        const msg = (err as Error).message;
        if (this.disposed || failedAttempts.length > 0 || !/QEMU exited during boot/.test(msg)) throw err;
        failedAttempts.push(msg);
        this.cfg.log(`broker ${this.id}: ${name} went down during boot; booting once more. ${msg}`);
      }
    }
    this.vm = vm;
    this.guestPid = null;
    this.lastSeen = null;
    const boot: BootRecord = {
      name,
      ...(failedAttempts.length > 0 ? { failedAttempts: [...failedAttempts] } : {}),
      accel: vm.accel,
      ...(vm.boot.fallback ? { fallback: vm.boot.fallback } : {}),
      spawnToAgentMs: vm.boot.spawnToAgentMs,
      ...(vm.boot.spawnToInitMs !== undefined ? { spawnToInitMs: vm.boot.spawnToInitMs } : {}),
      ...(vm.boot.resumed ? { resumed: vm.boot.resumed } : {}),
      ...(vm.boot.resumeFallback ? { resumeFallback: vm.boot.resumeFallback } : {}),
      ...(!resume && failedAttempts.length ? { resumeFallback: `booted after a resumed guest failed: ${failedAttempts.at(-1)}` } : {}),
      serialLogPath: vm.serialLogPath,
      qemuPid: vm.pid,
    };
    this.boots.push(boot);
    if (this.disposed) {
      // stop() ran while this VM booted: it never saw this VM.
      await vm.dispose();
      throw new Error(`broker ${this.id}: VM target stopped while booting`);
    }
    return { vm, boot };
  }

  private addSample(builder: ProbeSeriesBuilder, p: ProbeResult): void {
    this.lastSeen = { tMs: p.tMs, brokerRunning: this.running(p.processes) };
    const last = builder.latest();
    // Two readings in the same host millisecond (a final probe racing the poller): keep one.
    if (last && p.tMs <= last.tMs) return;
    builder.add(p.tMs, p.vmstat, p.diskstats);
  }

  private brokerArgv(): string[] {
    const { plan } = this.cfg;
    return [
      'node',
      GUEST_CLI,
      'broker',
      '--id',
      String(this.id),
      '--data',
      this.guestDataDir,
      '--listen',
      `0.0.0.0:${this.addr.guestPort}`,
      '--advertise',
      this.addr.guestUrl,
      '--controller',
      plan.controllerGuestUrl,
      ...this.cfg.brokerSets.flatMap((s) => ['--set', s]),
    ];
  }

  /** Starts the broker process in the running VM and waits until it serves. */
  async startBroker(): Promise<BrokerHealth> {
    const vm = this.requireVm('start the broker');
    if (this.guestPid !== null) {
      const s = await vm.processStatus(this.guestPid);
      if (s.running) throw new Error(`broker ${this.id}: already running in ${vm.name} (guest pid ${this.guestPid})`);
    }
    // Console output lands in the serial log on the host, which outlives a power cut.
    const p = await vm.exec({ argv: this.brokerArgv(), output: 'console' });
    this.guestPid = p.pid;
    return this.waitServing(this.cfg.readyTimeoutMs);
  }

  /** Polls GET /v1/health through the host forward until the broker answers after its first heartbeat. */
  async waitServing(timeoutMs: number): Promise<BrokerHealth> {
    const vm = this.requireVm('wait for the broker');
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer yet';
    // The agent's answer costs the one guest CPU the starting broker runs on: ask it less often.
    let statusDueMs = Date.now() + 500;
    for (;;) {
      if (this.disposed) throw new Error(`broker ${this.id}: VM target stopped`);
      try {
        const a = await request(`${this.addr.hostUrl}/v1/health`, { timeoutMs: 3000 });
        if (a.status === 200) {
          const h = JSON.parse(a.body.toString('utf8')) as BrokerHealth;
          if (h.lastHeartbeatMs > 0 && h.pid === this.guestPid) return h;
          last = h.pid !== this.guestPid ? `an older broker (pid ${h.pid}) answered` : 'no heartbeat through to the controller yet';
        } else last = `HTTP ${a.status}`;
      } catch (err) {
        last = (err as Error).message;
      }
      if (this.guestPid !== null && Date.now() >= statusDueMs) {
        statusDueMs = Date.now() + 500;
        const s = await vm.processStatus(this.guestPid).catch(() => undefined);
        if (s && !s.running) {
          throw new Error(
            `broker ${this.id} exited in ${vm.name} before serving (code ${s.exitCode ?? '-'}${s.signal ? `, signal ${s.signal}` : ''}); ` +
              `serial log: ${vm.serialLogPath}\n${tailOf(vm.serialLogPath)}`,
          );
        }
      }
      if (!vm.running) throw new Error(`broker ${this.id}: ${vm.name} went down while the broker started; serial log: ${vm.serialLogPath}\n${tailOf(vm.serialLogPath)}`);
      if (Date.now() > deadline) {
        throw new Error(`broker ${this.id} in ${vm.name} not serving at ${this.addr.hostUrl} within ${timeoutMs} ms (${last}); serial log: ${vm.serialLogPath}\n${tailOf(vm.serialLogPath)}`);
      }
      await sleep(50);
    }
  }

  /**
   * Dirty/writeback pages and broker liveness right before a fault: a fresh probe when the
   * agent answers within `freshWithinMs`, else the last polled sample.
   */
  async stateBeforeFault(freshWithinMs = 1500): Promise<GuestStateAtFault | undefined> {
    const vm = this.vm;
    const builder = this.series[this.series.length - 1];
    if (!vm?.running || !builder) return undefined;
    const p = freshWithinMs <= 0 ? undefined : await withTimeout(vm.probe().catch(() => undefined), freshWithinMs);
    if (p) {
      try {
        this.addSample(builder, p);
      } catch {
        // an unparsable reading: fall through to the polled one
      }
      const s = builder.latest();
      if (s && s.tMs === p.tMs) return { tMs: p.tMs, nrDirty: s.vmstat.nrDirty, nrWriteback: s.vmstat.nrWriteback, brokerRunning: this.running(p.processes), fresh: true };
    }
    const s = builder.latest();
    if (!s) return undefined;
    return { tMs: s.tMs, nrDirty: s.vmstat.nrDirty, nrWriteback: s.vmstat.nrWriteback, brokerRunning: this.lastSeen?.brokerRunning ?? false, fresh: false };
  }

  private running(processes: GuestProcess[]): boolean {
    return this.guestPid !== null && processes.some((q) => q.pid === this.guestPid && q.running);
  }

  /** SIGKILL of QEMU. Returns when QEMU is gone. */
  async powerCut(): Promise<{ cutAtMs: number; killToExitMs: number; brokerExitedSeen: boolean; error?: string; diskAtCut?: unknown }> {
    const vm = this.requireVm('power-cut');
    let report;
    try {
      report = await vm.powerCut();
    } catch (err) {
      // QEMU was already gone (the guest powered off on its own): nothing was cut.
      await this.stopPoller();
      return { cutAtMs: Date.now(), killToExitMs: 0, brokerExitedSeen: true, error: (err as Error).message };
    }
    this.series[this.series.length - 1]?.mark('power-cut', report.cutAtMs);
    // QEMU is gone: the disk loses what its model says (an NBD volatile cache applies onCut).
    const diskAtCut = await this.cfg.disk.afterPowerCut?.();
    await this.stopPoller();
    const seen = report.processes.find((p) => p.pid === this.guestPid);
    return { cutAtMs: report.cutAtMs, killToExitMs: report.killToExitMs, brokerExitedSeen: seen?.exitedSeen ?? false, ...(diskAtCut !== undefined ? { diskAtCut } : {}) };
  }

  /** SIGKILL of the broker process inside the guest (the guest kernel and its page cache live on). */
  async killBroker(timeoutMs = 10_000): Promise<{ killAtMs: number; wasRunning: boolean }> {
    const vm = this.requireVm('kill the broker');
    if (this.guestPid === null) throw new Error(`broker ${this.id}: no broker process was started in ${vm.name}`);
    const killAtMs = Date.now();
    const before = await vm.signal(this.guestPid, 'SIGKILL');
    this.series[this.series.length - 1]?.mark('process-kill', killAtMs);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await vm.processStatus(this.guestPid);
      if (!s.running) break;
      if (Date.now() > deadline) throw new Error(`broker ${this.id}: guest pid ${this.guestPid} still running ${timeoutMs} ms after SIGKILL; serial log: ${vm.serialLogPath}`);
      await sleep(20);
    }
    return { killAtMs, wasRunning: before.running };
  }

  /** Whether the broker process is running in a running VM (from the agent). */
  async brokerRunning(): Promise<boolean> {
    if (!this.vmRunning || this.guestPid === null) return false;
    try {
      return (await this.vm!.processStatus(this.guestPid)).running;
    } catch {
      return false;
    }
  }

  /** Probe series of every boot, oldest first. */
  probeSeries(): ProbeSeries[] {
    return this.series.map((b, i) => {
      const s = b.toSeries();
      if (i === this.series.length - 1 && this.probeFailures > 0) {
        const msg = `${this.probeFailures} guest probe(s) failed, first: ${this.firstProbeFailure}`;
        s.note = s.note ? `${s.note}; ${msg}` : msg;
      }
      return s;
    });
  }

  mark(label: string, tMs = Date.now()): void {
    this.series[this.series.length - 1]?.mark(label, tMs);
  }

  private async stopPoller(): Promise<void> {
    const p = this.poller;
    this.poller = null;
    await p?.stop();
  }

  private requireVm(what: string): Vm {
    if (!this.vm?.running) throw new Error(`broker ${this.id}: cannot ${what}: its VM is not running${this.vm ? ` (last: ${this.vm.name}, serial log ${this.vm.serialLogPath})` : ''}`);
    return this.vm;
  }

  /** Kills the VM whatever its state (the end of a trial; no clean shutdown needed). */
  async dispose(): Promise<void> {
    this.disposed = true;
    const vm = this.vm;
    try {
      if (vm) await vm.dispose();
      await this.stopPoller();
    } finally {
      // QEMU is gone: stop the disk's server (NBD), keep its image.
      await this.cfg.disk.close?.();
    }
  }
}
