// A guest booted once and saved (QEMU migration to a file), then resumed for every VM start
// that would boot the same kernel, initramfs, memory and device set: under TCG a resume has
// the agent answering in ~1.3-2.4 s where a boot takes ~5 s. The template's data disk is a blank
// one of the same size and cache mode; the guest never mounted it, and the agent drops the
// device's cached blocks before it mounts the real one (see setup in guest/agent.ts). A resumed
// guest wakes with the template's clock and hostname; Vm.setup sets both. The saved guest also
// holds a broker process waiting for its arguments (guest/broker-zygote.ts): the agent hands
// it the first `durolab broker` a resumed guest is asked to start.
import { execa } from 'execa';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../engine/common/free-port.ts';
import { FileDisk } from './disk.ts';
import { defaultVmCacheDir } from './paths.ts';
import type { VmImage } from './image.ts';
import { findExecutable, findQboot, requireExecutable } from './prerequisites.ts';
import { trackQemu, untrackQemu } from './process-registry.ts';
import { acceleratorCandidates } from './accelerator.ts';
import { buildQemuArgs, DEFAULT_MEMORY_MIB } from './qemu-args.ts';
import type { VmOptions } from './vm-types.ts';

export interface TemplateSpec {
  image: VmImage;
  memoryMiB: number;
  agentPort: number;
  kernelArgs: string[];
  disk: { sizeMiB: number; cacheMode: string };
}

/** Everything the saved state depends on, hashed; the kernel, initramfs and QEMU's binary by size and mtime. */
export async function templateKey(spec: TemplateSpec): Promise<string> {
  const qemu = requireExecutable('qemu-system-x86_64');
  const id = async (f: string): Promise<[string, number, number]> => {
    const st = await fs.stat(f);
    return [path.basename(f), st.size, st.mtimeMs];
  };
  const parts = {
    layout: 'broker-zygote-1',
    image: spec.image.hash,
    kernel: await id(spec.image.kernel),
    initrd: await id(spec.image.initrd),
    memoryMiB: spec.memoryMiB,
    agentPort: spec.agentPort,
    kernelArgs: spec.kernelArgs,
    sizeMiB: spec.disk.sizeMiB,
    cacheMode: spec.disk.cacheMode,
    bios: findQboot() ?? null,
    qemu: await id(qemu),
  };
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}

/** Templates live in the VM cache beside the images; a rebuilt image has another key (the newest few are kept). */
export function templatePath(key: string): string {
  return path.join(defaultVmCacheDir(), 'templates', `${key}.state`);
}

/** The saved state for this spec, if one was made. */
export async function findTemplate(spec: TemplateSpec): Promise<{ key: string; state: string } | undefined> {
  const key = await templateKey(spec);
  const state = templatePath(key);
  return existsSync(state) ? { key, state } : undefined;
}

/** A start resumes unless told not to (`resume: false`, or $DUROLAB_VM_RESUME=0). */
export const resumeWanted = (opts: Pick<VmOptions, 'resume'>): boolean => opts.resume ?? process.env.DUROLAB_VM_RESUME !== '0';

export function templateSpecOf(opts: Pick<VmOptions, 'image' | 'memoryMiB' | 'agentPort' | 'kernelArgs' | 'disk'>): TemplateSpec {
  return { image: opts.image, memoryMiB: opts.memoryMiB ?? DEFAULT_MEMORY_MIB, agentPort: opts.agentPort, kernelArgs: opts.kernelArgs ?? [], disk: opts.disk };
}

/**
 * Makes the saved guest that later starts of this VM shape resume, when they would run under
 * TCG (Vm.start); undefined when they would not. Its time is the caller's to account.
 */
export async function prepareVmTemplate(
  opts: Pick<VmOptions, 'image' | 'memoryMiB' | 'agentPort' | 'kernelArgs' | 'disk' | 'accel' | 'resume' | 'bootTimeoutMs'>,
  signal?: AbortSignal,
): Promise<{ key: string; madeMs?: number } | undefined> {
  if (!resumeWanted(opts) || acceleratorCandidates(opts.accel).candidates[0] !== 'tcg') return undefined;
  const t = await ensureTemplate(templateSpecOf(opts), { ...(opts.bootTimeoutMs !== undefined ? { bootTimeoutMs: opts.bootTimeoutMs } : {}), ...(signal ? { signal } : {}) });
  return { key: t.key, ...(t.madeMs !== undefined ? { madeMs: t.madeMs } : {}) };
}

const making = new Map<string, Promise<string>>();

/** The saved state for this spec, made now (one TCG boot and a save, ~7 s) when missing. */
export async function ensureTemplate(spec: TemplateSpec, opts: { bootTimeoutMs?: number; signal?: AbortSignal } = {}): Promise<{ key: string; state: string; madeMs?: number }> {
  const key = await templateKey(spec);
  const state = templatePath(key);
  if (existsSync(state)) return { key, state };
  let pending = making.get(key);
  const t0 = performance.now();
  if (!pending) {
    pending = makeTemplate(spec, key, state, opts.bootTimeoutMs ?? 60_000, opts.signal).finally(() => making.delete(key));
    making.set(key, pending);
  }
  await pending;
  return { key, state, madeMs: Math.round(performance.now() - t0) };
}

/** Forgets a template that failed to resume (e.g. a QEMU whose state format changed). */
export async function dropTemplate(state: string): Promise<void> {
  await fs.rm(state, { force: true });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function makeTemplate(spec: TemplateSpec, key: string, state: string, bootTimeoutMs: number, signal?: AbortSignal): Promise<string> {
  const dir = path.dirname(state);
  await fs.mkdir(dir, { recursive: true });
  const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const diskFile = path.join(dir, `${key}.${tag}.disk`);
  const partial = `${state}.${tag}.partial`;
  // A unix socket path must stay under 108 bytes: the image directory may be deep.
  const qmpSocket = path.join(os.tmpdir(), `durolab-qmp-${tag}.sock`);
  const serialLogPath = path.join(dir, `${key}.serial.log`);
  await fs.writeFile(diskFile, '');
  await fs.truncate(diskFile, spec.disk.sizeMiB * 1024 * 1024);
  const agentHostPort = await freePort();
  const args = buildQemuArgs({
    name: 'template',
    accel: 'tcg',
    kernel: spec.image.kernel,
    initrd: spec.image.initrd,
    disk: new FileDisk(diskFile, spec.disk.sizeMiB, spec.disk.cacheMode as FileDisk['cache']),
    memoryMiB: spec.memoryMiB,
    serialLogPath,
    agentPort: spec.agentPort,
    hostfwd: [{ hostPort: agentHostPort, guestPort: spec.agentPort }],
    guestfwd: [],
    busybox: requireExecutable('busybox'),
    bios: findQboot(),
    extraKernelArgs: spec.kernelArgs,
    qmpSocket,
  });
  const qemu = requireExecutable('qemu-system-x86_64');
  const setpriv = findExecutable('setpriv');
  const [file, argv] = setpriv ? [setpriv, ['--pdeathsig', 'KILL', '--', qemu, ...args]] : [qemu, args];
  const child = execa(file, argv, { stdin: 'ignore', stdout: 'ignore', stderr: 'pipe', reject: false, cleanup: true, forceKillAfterDelay: 1000 });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`VM template ${key}: could not spawn ${qemu}`);
  trackQemu(pid, { name: `template-${key}`, serialLogPath });
  let exited = false;
  void child.then(() => (exited = true));
  const onAbort = (): void => void child.kill('SIGKILL');
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const deadline = performance.now() + bootTimeoutMs;
    const agent = new http.Agent({ keepAlive: false });
    try {
      while (!(await healthy(agent, `http://127.0.0.1:${agentHostPort}/v1/health`))) {
        if (signal?.aborted) throw new Error('interrupted');
        if (exited) throw new Error(`QEMU exited while the template booted: ${String((await child).stderr ?? '').trim().slice(0, 400)}; serial log: ${serialLogPath}`);
        if (performance.now() > deadline) throw new Error(`the template's agent did not answer within ${bootTimeoutMs} ms; serial log: ${serialLogPath}`);
        await sleep(100);
      }
    } finally {
      agent.destroy();
    }
    // A broker process waiting for its arguments goes into the saved guest (guest/broker-zygote.ts).
    const zygote = await post(`http://127.0.0.1:${agentHostPort}/v1/broker-zygote`, 90_000);
    if (zygote.status !== 200) throw new Error(`the template's agent could not start a broker zygote: HTTP ${zygote.status} ${zygote.body.slice(0, 300)}`);
    const qmp = await Qmp.connect(qmpSocket);
    try {
      await qmp.execute('qmp_capabilities');
      // QEMU's default migration bandwidth is 32 MiB/s: a 300 MB state would take 10 s.
      await qmp.execute('migrate-set-parameters', { 'max-bandwidth': 2 ** 40 });
      await qmp.execute('migrate', { uri: `exec:cat > '${partial.replaceAll("'", `'\\''`)}'` });
      for (;;) {
        const r = (await qmp.execute('query-migrate')) as { status?: string; 'error-desc'?: string };
        if (r.status === 'completed') break;
        if (r.status === 'failed' || r.status === 'cancelled') throw new Error(`migration to ${partial} ${r.status}: ${r['error-desc'] ?? 'no reason given'}`);
        if (performance.now() > deadline + 60_000) throw new Error(`migration to ${partial} not completed in time (status ${r.status})`);
        await sleep(20);
      }
    } finally {
      qmp.close();
    }
    await fs.rename(partial, state);
    await pruneTemplates(dir, KEEP_TEMPLATES);
    return state;
  } catch (err) {
    throw new Error(`VM template ${key}: ${(err as Error).message}`);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    child.kill('SIGKILL');
    await child;
    untrackQemu(pid);
    await Promise.all([diskFile, partial, qmpSocket].map((f) => fs.rm(f, { force: true })));
  }
}

/** Each is ~300 MB: keep the newest few (a VM already resumed from a removed one is not affected). */
const KEEP_TEMPLATES = 4;

/**
 * Keeps the newest `keep` saved guests, and removes what a save killed midway (SIGKILL of the
 * harness) left: its blank disk and partial state, once older than an hour (a save takes ~10 s).
 */
export async function pruneTemplates(dir: string, keep: number, nowMs = Date.now()): Promise<void> {
  const names = await fs.readdir(dir);
  const dated = await Promise.all(names.map(async (n) => ({ n, t: (await fs.stat(path.join(dir, n)).catch(() => ({ mtimeMs: 0 }))).mtimeMs })));
  const states = dated.filter((f) => f.n.endsWith('.state')).sort((a, b) => b.t - a.t);
  const stale = dated.filter((f) => /\.(partial|disk)$/.test(f.n) && nowMs - f.t > 3_600_000);
  for (const { n } of [...states.slice(keep), ...stale]) {
    await fs.rm(path.join(dir, n), { force: true });
    if (n.endsWith('.state')) await fs.rm(path.join(dir, n.replace(/\.state$/, '.serial.log')), { force: true });
  }
}

function post(url: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', timeout: timeoutMs, headers: { 'content-length': 0 } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`POST ${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

function healthy(agent: http.Agent, url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/** QEMU's machine protocol: one JSON object per line; events are skipped. */
class Qmp {
  private buffer = '';
  private waiting: ((line: Record<string, unknown>) => void) | null = null;
  private readonly lines: Record<string, unknown>[] = [];

  private constructor(private readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      this.buffer += d;
      let i: number;
      while ((i = this.buffer.indexOf('\n')) >= 0) {
        const text = this.buffer.slice(0, i).trim();
        this.buffer = this.buffer.slice(i + 1);
        if (!text) continue;
        const msg = JSON.parse(text) as Record<string, unknown>;
        if ('event' in msg || 'QMP' in msg) continue;
        if (this.waiting) {
          const w = this.waiting;
          this.waiting = null;
          w(msg);
        } else this.lines.push(msg);
      }
    });
    socket.on('error', () => {});
  }

  static async connect(socketPath: string): Promise<Qmp> {
    for (let i = 0; ; i++) {
      try {
        const socket = await new Promise<net.Socket>((resolve, reject) => {
          const s = net.connect(socketPath, () => resolve(s));
          s.once('error', reject);
        });
        return new Qmp(socket);
      } catch (err) {
        if (i >= 50) throw new Error(`QMP socket ${socketPath}: ${(err as Error).message}`);
        await sleep(20);
      }
    }
  }

  async execute(command: string, args?: Record<string, unknown>): Promise<unknown> {
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`QMP ${command}: no answer within 10 s`)), 10_000);
      const done = (m: Record<string, unknown>): void => {
        clearTimeout(t);
        resolve(m);
      };
      const queued = this.lines.shift();
      if (queued) done(queued);
      else this.waiting = done;
    });
    this.socket.write(JSON.stringify(args ? { execute: command, arguments: args } : { execute: command }) + '\n');
    const m = await answer;
    if ('error' in m) throw new Error(`QMP ${command}: ${JSON.stringify(m.error)}`);
    return m.return;
  }

  close(): void {
    this.socket.destroy();
  }
}
