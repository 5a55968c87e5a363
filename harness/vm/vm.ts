// One QEMU VM running the guest agent. Start it, configure the guest (sysctls, data-disk mount
// options), start the workload, probe it, and end it by power cut (SIGKILL of QEMU: the guest
// page cache and the uncommitted ext4 transaction are lost) or by a clean shutdown.
import { execa } from 'execa';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { freePort } from '../../engine/common/free-port.ts';
import { tailOfFile } from '../../engine/common/file-tail.ts';
import { INIT_MARKER } from './init-script.ts';
import { acceleratorCandidates, markKvmUnusable } from './accelerator.ts';
import { dropTemplate, findTemplate, resumeWanted, templateSpecOf } from './vm-template.ts';
import { isAlive, trackQemu, untrackQemu } from './process-registry.ts';
import { buildQemuArgs, DEFAULT_MEMORY_MIB, type Accel, type HostForward } from './qemu-args.ts';
import { httpRequest, type HttpAnswer } from './agent-http.ts';
import type { BootReport, GuestProcess, PowerCutReport, ProbeResult, SetupResult, VmOptions } from './vm-types.ts';

export type { BootReport, GuestProcess, PowerCutReport, ProbeResult, SetupResult, VmOptions } from './vm-types.ts';
import { checkVmPrerequisites, findExecutable, findQboot, requireExecutable } from './prerequisites.ts';

class KvmUnusable extends Error {}
/** QEMU could not load a saved template. */
class ResumeFailed extends Error {}
/** What QEMU prints when the incoming state does not load (qemu/migration/savevm.c, migration.c). */
const LOAD_FAILED = /load of migration failed|Unknown savevm section|Failed to load|not a migration stream|Unknown migration|incoming migration/i;
/** A picked host port was taken between picking and QEMU's bind. */
class PortClash extends Error {}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const tailOf = (file: string, lines = 15): string => tailOfFile(file, lines, '(no serial output)');

export class Vm {
  readonly name: string;
  readonly serialLogPath: string;
  readonly agentUrl: string;
  /** Forwards as set up, with picked host ports filled in. */
  readonly hostfwd: HostForward[];
  readonly boot: BootReport;
  /** The guest woke from a template: its clock and hostname are the template's until setup. */
  private readonly resumed: boolean;
  private readonly http = new http.Agent({ keepAlive: true, maxSockets: 4 });
  private readonly seen = new Map<number, { lastSeenRunningAtMs?: number; exitedSeen: boolean; exitCode?: number | null }>();
  private ended = false;
  private qemuExited = false;

  private constructor(
    opts: VmOptions,
    readonly pid: number,
    readonly accel: Accel,
    boot: BootReport,
    agentHostPort: number,
    hostfwd: HostForward[],
    readonly exited: Promise<{ exitCode?: number; signal?: string; stderr: string }>,
  ) {
    this.name = opts.name;
    this.serialLogPath = serialLogPathOf(opts);
    this.agentUrl = `http://127.0.0.1:${agentHostPort}`;
    this.boot = boot;
    this.resumed = boot.resumed !== undefined;
    this.hostfwd = hostfwd;
    void exited.then(() => (this.qemuExited = true));
  }

  /** Boots a VM and waits for its agent. Under 'auto', a silent KVM guest is killed and rebooted under TCG. */
  static async start(opts: VmOptions): Promise<Vm> {
    await checkVmPrerequisites();
    if (!existsSync(opts.image.kernel) || !existsSync(opts.image.initrd)) {
      throw new Error(`VM ${opts.name}: image ${opts.image.hash} is incomplete (${opts.image.kernel}, ${opts.image.initrd}); rebuild with durolab vm-image --force`);
    }
    await fs.mkdir(opts.workDir, { recursive: true });
    const want = opts.accel ?? (process.env.DUROLAB_VM_ACCEL as VmOptions['accel']) ?? 'auto';
    if (!['auto', 'kvm', 'tcg'].includes(want)) throw new Error(`VM ${opts.name}: accel must be auto, kvm or tcg, got '${want}'`);
    const plan = acceleratorCandidates(want);
    const candidates = plan.candidates;
    let fallback = plan.fallback;
    const t0 = performance.now();
    let resumeFallback: string | undefined;
    if (candidates[0] === 'tcg' && resumeWanted(opts)) {
      const template = await findTemplate(templateSpecOf(opts));
      if (!template) resumeFallback = 'no saved guest of this VM shape was found';
      for (let attempt = 1; template; attempt++) {
        try {
          return await Vm.launch(opts, 'tcg', false, fallback, t0, template);
        } catch (err) {
          if (err instanceof PortClash && attempt < 4) continue;
          if (!(err instanceof ResumeFailed)) throw err;
          await dropTemplate(template.state);
          resumeFallback = err.message;
          break;
        }
      }
    }
    for (const accel of candidates) {
      for (let attempt = 1; ; attempt++) {
        try {
          const vm = await Vm.launch(opts, accel, want === 'auto' && accel === 'kvm', fallback, t0);
          if (resumeFallback) vm.boot.resumeFallback = resumeFallback;
          return vm;
        } catch (err) {
          if (err instanceof PortClash && attempt < 4) continue;
          if (!(err instanceof KvmUnusable)) throw err;
          markKvmUnusable(err.message);
          fallback = `kvm: ${err.message}`;
          break;
        }
      }
    }
    throw new Error(`VM ${opts.name}: no accelerator left to try (${fallback})`);
  }

  private static async launch(
    opts: VmOptions,
    accel: Accel,
    probeKvm: boolean,
    fallback: string | undefined,
    t0: number,
    template?: { key: string; state: string },
  ): Promise<Vm> {
    const hostfwd = await Promise.all(opts.hostfwd.map(async (f) => ({ ...f, hostPort: f.hostPort === 0 ? await freePort() : f.hostPort })));
    let agentFwd = hostfwd.find((f) => f.guestPort === opts.agentPort);
    const portsPicked = !agentFwd || opts.hostfwd.some((f) => f.hostPort === 0);
    if (!agentFwd) {
      agentFwd = { guestPort: opts.agentPort, hostPort: await freePort() };
      hostfwd.push(agentFwd);
    }
    const serialLogPath = serialLogPathOf(opts);
    await fs.writeFile(serialLogPath, '');
    const args = buildQemuArgs({
      name: opts.name,
      accel,
      kernel: opts.image.kernel,
      initrd: opts.image.initrd,
      disk: opts.disk,
      memoryMiB: opts.memoryMiB ?? DEFAULT_MEMORY_MIB,
      serialLogPath,
      agentPort: opts.agentPort,
      hostfwd,
      guestfwd: opts.guestfwd ?? [],
      busybox: requireExecutable('busybox'),
      bios: findQboot(),
      ...(opts.kernelArgs ? { extraKernelArgs: opts.kernelArgs } : {}),
      ...(template ? { incomingState: template.state } : {}),
    });
    const qemu = requireExecutable('qemu-system-x86_64');
    const setpriv = findExecutable('setpriv');
    // setpriv execs QEMU with PR_SET_PDEATHSIG: the kernel SIGKILLs it if we die, however we die.
    const [file, argv] = setpriv ? [setpriv, ['--pdeathsig', 'KILL', '--', qemu, ...args]] : [qemu, args];
    await fs.writeFile(path.join(opts.workDir, `${opts.name}.qemu-args.txt`), [qemu, ...args].join('\n') + '\n');
    const tSpawn = performance.now();
    const child = execa(file, argv, { stdin: 'ignore', stdout: 'ignore', stderr: 'pipe', reject: false, cleanup: true, forceKillAfterDelay: 1000 });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`VM ${opts.name}: could not spawn ${qemu}`);
    trackQemu(pid, { name: opts.name, serialLogPath });
    let done = false;
    const exited = child.then((r) => {
      done = true;
      untrackQemu(pid);
      return { exitCode: r.exitCode, signal: r.signal, stderr: String(r.stderr ?? '') };
    });
    const kill = async (): Promise<void> => {
      if (!done) child.kill('SIGKILL');
      await exited;
    };

    const timeoutMs = opts.bootTimeoutMs ?? 60_000;
    const kvmProbeMs = opts.kvmProbeMs ?? 5000;
    const agent = new http.Agent({ keepAlive: false });
    const healthUrl = `http://127.0.0.1:${agentFwd.hostPort}/v1/health`;
    // A resumed guest prints nothing: its /init ran in the template.
    let initAt: number | undefined = template ? 0 : undefined;
    try {
      for (;;) {
        const elapsed = performance.now() - tSpawn;
        if (done) {
          const r = await exited;
          const why = `QEMU exited during boot (code ${r.exitCode ?? '-'}${r.signal ? `, signal ${r.signal}` : ''}): ${r.stderr.trim().slice(0, 400) || 'no stderr'}`;
          if (/host forwarding rule/.test(r.stderr) && portsPicked) throw new PortClash(why);
          // Only a state QEMU could not load is the template's fault (a QEMU whose format changed,
          // a damaged file); anything else (a taken forwarding port, ...) leaves it for the next start.
          if (template && LOAD_FAILED.test(r.stderr)) throw new ResumeFailed(`resuming template ${template.state}: ${why}`);
          if (probeKvm) throw new KvmUnusable(why);
          throw new Error(`VM ${opts.name} (accel ${accel}): ${why}; serial log: ${serialLogPath}\n${tailOf(serialLogPath)}`);
        }
        const serial = initAt === undefined || probeKvm ? readFileSync(serialLogPath, 'utf8') : '';
        if (initAt === undefined && serial.includes(INIT_MARKER)) initAt = performance.now() - tSpawn;
        if (probeKvm && initAt === undefined && elapsed > kvmProbeMs) {
          await kill();
          throw new KvmUnusable(`no guest output within ${kvmProbeMs} ms`);
        }
        if (elapsed > timeoutMs) {
          await kill();
          throw new Error(
            `VM ${opts.name} (accel ${accel}) did not boot within ${timeoutMs} ms (${initAt === undefined ? 'no /init output' : `/init ran at ${Math.round(initAt)} ms, agent never answered`}); ` +
              `serial log: ${serialLogPath}\n${tailOf(serialLogPath)}`,
          );
        }
        if (initAt !== undefined) {
          try {
            const res = await httpRequest(agent, healthUrl, 'GET', undefined, 1000);
            if (res.status === 200) break;
          } catch {
            // slirp accepts and then resets while nothing listens in the guest: not up yet
          }
        }
        await sleep(initAt === undefined ? 50 : 100);
      }
    } catch (err) {
      await kill();
      throw err;
    } finally {
      agent.destroy();
    }
    const now = performance.now();
    const boot: BootReport = {
      accel,
      ...(fallback ? { fallback } : {}),
      ...(initAt !== undefined && !template ? { spawnToInitMs: Math.round(initAt) } : {}),
      spawnToAgentMs: Math.round(now - tSpawn),
      totalMs: Math.round(now - t0),
      ...(template ? { resumed: { template: template.key } } : {}),
    };
    return new Vm(opts, pid, accel, boot, agentFwd.hostPort, hostfwd, exited);
  }

  private async call<T>(method: string, route: string, body?: unknown, timeoutMs = 10_000): Promise<T> {
    if (this.ended) throw new Error(`VM ${this.name}: ${method} ${route}: the VM is no longer running`);
    let res: HttpAnswer;
    try {
      res = await httpRequest(this.http, `${this.agentUrl}${route}`, method, body, timeoutMs);
    } catch (err) {
      throw new Error(`VM ${this.name}: ${method} ${this.agentUrl}${route} failed: ${(err as Error).message}; serial log: ${this.serialLogPath}`);
    }
    const text = res.body.toString('utf8');
    if (res.status !== 200) {
      let message = text;
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? text;
      } catch {
        // not JSON
      }
      throw new Error(`VM ${this.name}: ${method} ${route} answered ${res.status}: ${message}`);
    }
    return JSON.parse(text) as T;
  }

  private note(processes: GuestProcess[], atMs: number): void {
    for (const p of processes) {
      const s = this.seen.get(p.pid) ?? { exitedSeen: false };
      if (p.running) s.lastSeenRunningAtMs = atMs;
      else {
        s.exitedSeen = true;
        s.exitCode = p.exitCode;
      }
      this.seen.set(p.pid, s);
    }
  }

  /** Writes the sysctls (in the given order), reads them back, and mounts the data disk at /data. */
  async setup(cfg: { sysctls: Record<string, number>; mountOptions?: string; mount?: boolean }): Promise<SetupResult> {
    const body = this.resumed ? { ...cfg, clockEpochMs: Date.now(), hostname: this.name } : cfg;
    const r = await this.call<SetupResult>('POST', '/v1/setup', body, 20_000);
    for (const [name, value] of Object.entries(cfg.sysctls)) {
      if (r.sysctls[name] !== value) throw new Error(`VM ${this.name}: sysctl ${name} reads back ${r.sysctls[name]} after writing ${value}`);
    }
    return r;
  }

  async sysctl(name: string): Promise<string> {
    return (await this.call<{ value: string }>('GET', `/v1/sysctl?name=${encodeURIComponent(name)}`)).value;
  }

  /**
   * Starts a process in the guest, in its own session (it outlives the agent), stdout and
   * stderr to a guest file (read it with processLog) or to the serial console.
   */
  async exec(cmd: { argv: string[]; env?: Record<string, string>; cwd?: string; output?: 'file' | 'console' }): Promise<GuestProcess> {
    const p = await this.call<GuestProcess>('POST', '/v1/exec', cmd);
    this.note([p], Date.now());
    return p;
  }

  async processStatus(pid: number): Promise<GuestProcess> {
    const p = await this.call<GuestProcess>('GET', `/v1/processes/${pid}`);
    this.note([p], Date.now());
    return p;
  }

  async processLog(pid: number): Promise<string> {
    return (await this.call<{ log: string }>('GET', `/v1/processes/${pid}/log`)).log;
  }

  async signal(pid: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<GuestProcess> {
    return this.call<GuestProcess>('POST', `/v1/processes/${pid}/signal`, { signal });
  }

  /** The guest's /proc/vmstat and /proc/diskstats, plus the liveness of exec'd processes. */
  async probe(): Promise<ProbeResult> {
    const r = await this.call<{ vmstat: string; diskstats: string; uptimeMs: number; processes: GuestProcess[] }>('GET', '/v1/probe', undefined, 5000);
    const tMs = Date.now();
    this.note(r.processes, tMs);
    return { vmstat: r.vmstat, diskstats: r.diskstats, tMs, guestUptimeMs: r.uptimeMs, processes: r.processes };
  }

  /** Polls probe() every intervalMs (default 250) until stopped or the VM ends; errors go to onError. */
  pollProbes(onSample: (p: ProbeResult) => void, opts: { intervalMs?: number; onError?: (e: Error) => void } = {}): { stop: () => Promise<void> } {
    let stopped = false;
    // stop() cuts the pause between readings short: a power cut waits for the poller to end.
    let wake: (() => void) | null = null;
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    const loop = (async () => {
      while (!stopped && !this.ended) {
        const t = performance.now();
        try {
          onSample(await this.probe());
        } catch (err) {
          if (!stopped && !this.ended) opts.onError?.(err as Error);
        }
        if (!stopped && !this.ended) await pause(Math.max(0, (opts.intervalMs ?? 250) - (performance.now() - t)));
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        wake?.();
        await loop;
      },
    };
  }

  /** A file from the running guest (e.g. after a reboot on the same disk, journal replayed by the guest's mount). */
  async readGuestFile(guestPath: string): Promise<Buffer> {
    if (this.ended) throw new Error(`VM ${this.name}: readGuestFile: the VM is no longer running`);
    const res = await httpRequest(this.http, `${this.agentUrl}/v1/file?path=${encodeURIComponent(guestPath)}`, 'GET', undefined, 30_000);
    if (res.status !== 200) throw new Error(`VM ${this.name}: reading ${guestPath} answered ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
    return res.body;
  }

  /** Power cut: SIGKILL QEMU and wait for it to exit. What QEMU had written to the disk image stays. */
  async powerCut(): Promise<PowerCutReport> {
    if (this.ended) throw new Error(`VM ${this.name}: powerCut: the VM is no longer running`);
    this.ended = true;
    if (this.qemuExited) {
      // The guest powered off (agent died, panic) before the cut: whatever survived proves nothing.
      const r = await this.exited;
      throw new Error(`VM ${this.name}: QEMU had already exited (code ${r.exitCode ?? '-'}${r.signal ? `, signal ${r.signal}` : ''}) before the power cut; serial log: ${this.serialLogPath}\n${tailOf(this.serialLogPath)}`);
    }
    const cutAtMs = Date.now();
    const t = performance.now();
    try {
      process.kill(this.pid, 'SIGKILL');
    } catch {
      // exited on its own; the report below still tells when
    }
    await this.exited;
    const killToExitMs = Math.round(performance.now() - t);
    this.http.destroy();
    return { cutAtMs, killToExitMs, processes: [...this.seen.entries()].map(([pid, s]) => ({ pid, ...s })) };
  }

  /** Clean shutdown: the agent stops the processes it started and unmounts the data disk, then the guest powers off. */
  async shutdown(timeoutMs = 20_000): Promise<void> {
    if (this.ended) return;
    let failure: string | undefined;
    try {
      await this.call('POST', '/v1/shutdown', {}, timeoutMs);
    } catch (err) {
      failure = (err as Error).message;
    }
    this.ended = true;
    this.http.destroy();
    const exited = await Promise.race([this.exited.then(() => true), sleep(timeoutMs).then(() => false)]);
    if (!exited || failure) {
      if (!this.qemuExited) process.kill(this.pid, 'SIGKILL');
      await this.exited;
      throw new Error(`VM ${this.name}: clean shutdown failed (${failure ?? `QEMU still running ${timeoutMs} ms after the agent's shutdown`}); killed it. Serial log: ${this.serialLogPath}`);
    }
  }

  /** Ends the VM whatever its state (cleanup path; no clean shutdown). */
  async dispose(): Promise<void> {
    this.ended = true;
    this.http.destroy();
    if (!this.qemuExited && isAlive(this.pid)) {
      try {
        process.kill(this.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await this.exited;
  }

  get running(): boolean {
    return !this.ended && !this.qemuExited;
  }
}

function serialLogPathOf(opts: VmOptions): string {
  return path.join(opts.workDir, `${opts.name}.serial.log`);
}
