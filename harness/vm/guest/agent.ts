// The guest agent: PID 1's only child in a durolab VM. It applies the scenario's sysctls,
// mounts the data disk, starts the workload the host asks for (later the broker), and serves
// the guest's /proc/vmstat and /proc/diskstats. It must never sync on its own: a sync at the
// wrong moment makes a lossy configuration look durable. Only an explicit clean shutdown
// unmounts the data disk (which syncs it).
//
// Runs in the guest as `node /durolab/dist/vm-agent.mjs --port N`; no npm packages.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { promisify } from 'node:util';
import { parseFlags } from '../../../engine/common/flags.ts';

const execFileP = promisify(execFile);

const { values } = parseFlags('vm-agent', process.argv.slice(2), {
  port: { type: 'string' },
  device: { type: 'string', default: '/dev/vda' },
  'mount-point': { type: 'string', default: '/data' },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`durolab-agent: --port must be a TCP port, got '${values.port}'`);
  process.exit(2);
}
const device = values.device!;
const mountPoint = values['mount-point']!;
const LOG_DIR = '/run/durolab';
fs.mkdirSync(LOG_DIR, { recursive: true });

interface Proc {
  pid: number;
  argv: string[];
  logPath: string;
  startedUptimeMs: number;
  exitedUptimeMs?: number;
  exitCode?: number | null;
  signal?: string | null;
  child: ChildProcess;
}
const procs = new Map<number, Proc>();

const uptimeMs = (): number => Math.round(Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000);

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function sysctlPath(name: string): string {
  if (!/^[a-z0-9_]+(\.[a-z0-9_-]+)+$/.test(name)) throw new HttpError(400, `sysctl '${name}': expected a dotted name like vm.dirty_ratio`);
  const p = `/proc/sys/${name.replaceAll('.', '/')}`;
  if (!fs.existsSync(p)) throw new HttpError(400, `sysctl '${name}' does not exist in the guest (${p})`);
  return p;
}

function processInfo(p: Proc): object {
  return {
    pid: p.pid,
    argv: p.argv,
    logPath: p.logPath,
    running: p.exitedUptimeMs === undefined,
    startedUptimeMs: p.startedUptimeMs,
    exitedUptimeMs: p.exitedUptimeMs,
    exitCode: p.exitCode,
    signal: p.signal,
  };
}

async function waitForDevice(dev: string, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!fs.existsSync(dev)) {
    if (Date.now() > end) throw new HttpError(500, `data disk ${dev} did not appear within ${timeoutMs} ms (is the virtio_blk module loaded and a -drive given?)`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface SetupBody {
  sysctls?: Record<string, number>;
  mountOptions?: string;
  mount?: boolean;
  /** A guest resumed from a saved template wakes with the template's clock and hostname. */
  clockEpochMs?: number;
  hostname?: string;
}

async function setup(body: SetupBody): Promise<object> {
  // One shell for the commands before the mount: each process spawn costs ~0.1 s in a TCG guest.
  const commands: string[] = [];
  if (body.clockEpochMs !== undefined) {
    if (!Number.isInteger(body.clockEpochMs) || body.clockEpochMs <= 0) throw new HttpError(400, `clockEpochMs: expected a positive integer, got ${JSON.stringify(body.clockEpochMs)}`);
    commands.push(`date -u -s @${Math.round(body.clockEpochMs / 1000)} >/dev/null`);
  }
  if (body.hostname !== undefined) {
    if (!/^[A-Za-z0-9_.-]+$/.test(body.hostname)) throw new HttpError(400, `hostname must match [A-Za-z0-9_.-]+, got '${body.hostname}'`);
    commands.push(`hostname ${body.hostname}`);
  }
  const sysctls: Record<string, number> = {};
  // Applied in the given order: dirty_bytes and dirty_ratio overwrite each other.
  for (const [name, value] of Object.entries(body.sysctls ?? {})) {
    if (!Number.isInteger(value)) throw new HttpError(400, `sysctl '${name}': expected an integer, got ${JSON.stringify(value)}`);
    fs.writeFileSync(sysctlPath(name), `${value}\n`);
  }
  for (const name of Object.keys(body.sysctls ?? {})) sysctls[name] = Number(fs.readFileSync(sysctlPath(name), 'utf8').trim());
  let mount: string | undefined;
  if (/\s/.test(body.mountOptions ?? '')) throw new HttpError(400, `mountOptions must not contain spaces: '${body.mountOptions}'`);
  const opts = body.mountOptions ? ['-o', body.mountOptions] : [];
  if (body.mount !== false) {
    await waitForDevice(device, 5000);
    fs.mkdirSync(mountPoint, { recursive: true });
    // Drops the device's cached blocks (the kernel's partition scan at boot read some): a guest
    // resumed from a template scanned the template's blank disk, not this one.
    commands.push(`blockdev --flushbufs ${device}`);
  }
  if (commands.length) {
    try {
      await execFileP('sh', ['-c', commands.join(' && ')]);
    } catch (err) {
      throw new HttpError(500, `${commands.join(' && ')} failed: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`);
    }
  }
  if (body.mount !== false) {
    try {
      await execFileP('mount', ['-t', 'ext4', ...opts, device, mountPoint]);
    } catch (err) {
      throw new HttpError(500, `mount -t ext4 ${opts.join(' ')} ${device} ${mountPoint} failed: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`);
    }
    mount = fs.readFileSync('/proc/mounts', 'utf8').split('\n').find((l) => l.split(' ')[1] === mountPoint);
  }
  return { sysctls, mount };
}

/** A broker process waiting for its arguments (guest/broker-zygote.ts); null when none or used. */
let zygote: ChildProcess | null = null;
const ZYGOTE_PATH = '/durolab/dist/vm-broker-zygote.mjs';

/** Starts the broker zygote, its output to the console, and waits for its "ready". */
async function startBrokerZygote(): Promise<object> {
  if (zygote && zygote.exitCode === null && zygote.signalCode === null) return { pid: zygote.pid };
  const out = fs.openSync('/dev/console', 'a');
  let child: ChildProcess;
  try {
    // --no-lazy compiles every function of the broker's code now, before the guest is saved as
    // a template, instead of on its first call in every trial (a TCG guest compiles slowly);
    // --no-flush-bytecode keeps that bytecode through later GCs. Measured on power-cut-smoke:
    // broker start, leaders and recovery ~0.9 s shorter per trial (README, "trial cycle").
    child = spawn('/usr/bin/node', ['--no-lazy', '--no-flush-bytecode', ZYGOTE_PATH], { detached: true, stdio: ['pipe', out, out, 'pipe'], cwd: '/' });
  } finally {
    fs.closeSync(out);
  }
  child.on('error', (err) => console.error(`durolab-agent: broker zygote: ${err.message}`));
  const control = child.stdio[3] as NodeJS.ReadableStream | null;
  let said = '';
  const ready = await new Promise<boolean>((resolve) => {
    const t = setTimeout(() => resolve(false), 60_000);
    control?.on('data', (d: Buffer) => {
      said += d.toString();
      if (said.includes('\n')) {
        clearTimeout(t);
        resolve(said.startsWith('ready'));
      }
    });
    child.once('exit', () => {
      clearTimeout(t);
      resolve(false);
    });
  });
  if (!ready) {
    child.kill('SIGKILL');
    throw new HttpError(500, `broker zygote (${ZYGOTE_PATH}) did not get ready within 60 s or exited (see the serial log)`);
  }
  zygote = child;
  // "ready {warm-up report}" (broker-warmup.ts): kept in the serial log and the answer.
  let warmUp: unknown = null;
  try {
    warmUp = JSON.parse(said.slice('ready'.length).trim() || 'null');
  } catch {
    warmUp = said.trim();
  }
  console.log(`durolab-agent: broker zygote ${child.pid} ready; warm-up ${JSON.stringify(warmUp)}`);
  return { pid: child.pid, warmUp };
}

/** `node <…/durolab.mjs> broker ARGS` with the console as output and no env or cwd: the zygote can run it. */
function takeZygote(body: { argv: string[]; env?: Record<string, string>; cwd?: string; output?: 'file' | 'console' }): ChildProcess | null {
  const [node, cli, command, ...args] = body.argv;
  const matches = /(^|\/)node$/.test(node ?? '') && (cli ?? '').endsWith('/durolab/dist/durolab.mjs') && command === 'broker';
  if (!zygote || !matches || body.output !== 'console' || body.env || (body.cwd && body.cwd !== '/')) return null;
  const child = zygote;
  zygote = null;
  if (child.exitCode !== null || child.signalCode !== null || !child.stdin) return null;
  child.stdin.end(JSON.stringify(args) + '\n');
  return child;
}

function exec(body: { argv?: string[]; env?: Record<string, string>; cwd?: string; output?: 'file' | 'console' }): object {
  const argv = body.argv;
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string')) {
    throw new HttpError(400, 'exec: argv must be a non-empty array of strings');
  }
  const warm = takeZygote({ ...body, argv });
  if (warm) return track(warm, argv, '/dev/console');
  const logPath = body.output === 'console' ? '/dev/console' : `${LOG_DIR}/exec-${Date.now()}-${procs.size}.log`;
  const out = fs.openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    // detached: its own session, so it outlives an agent crash and takes no signal meant for the agent.
    child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ['ignore', out, out], env: { ...process.env, ...body.env }, cwd: body.cwd ?? '/' });
  } finally {
    fs.closeSync(out);
  }
  // Attached before anything can throw: an unhandled 'error' (ENOENT) would kill the agent.
  child.on('error', (err) => console.error(`durolab-agent: exec ${argv[0]}: ${err.message}`));
  if (child.pid === undefined) throw new HttpError(400, `exec: could not start ${argv[0]} (not found or not executable)`);
  return track(child, argv, logPath);
}

function track(child: ChildProcess, argv: string[], logPath: string): object {
  const p: Proc = { pid: child.pid!, argv, logPath, startedUptimeMs: uptimeMs(), child };
  procs.set(p.pid, p);
  child.on('exit', (code, signal) => {
    p.exitedUptimeMs = uptimeMs();
    p.exitCode = code;
    p.signal = signal;
    // Liveness is what the host checks: a workload that ended before the cut proves nothing.
    console.log(`durolab-agent: pid ${p.pid} (${argv.join(' ').slice(0, 80)}) exited code=${code} signal=${signal} at ${p.exitedUptimeMs} ms`);
  });
  return processInfo(p);
}

async function stopAll(graceMs: number): Promise<void> {
  zygote?.kill('SIGKILL');
  zygote = null;
  const running = [...procs.values()].filter((p) => p.exitedUptimeMs === undefined);
  for (const p of running) p.child.kill('SIGTERM');
  const end = Date.now() + graceMs;
  while (running.some((p) => p.exitedUptimeMs === undefined) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  for (const p of running) if (p.exitedUptimeMs === undefined) p.child.kill('SIGKILL');
}

function readJson(req: http.IncomingMessage): Promise<any> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (!text) return resolve({});
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new HttpError(400, `${req.method} ${req.url}: body is not JSON`));
      }
    });
    req.on('error', reject);
  });
}

let shuttingDown = false;

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://guest');
  const send = (status: number, body: unknown): void => {
    const data = Buffer.from(JSON.stringify(body));
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': data.length });
    res.end(data);
  };
  try {
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /v1/health') {
      return send(200, { ok: true, pid: process.pid, uptimeMs: uptimeMs(), node: process.version, kernel: os.release(), hostname: os.hostname() });
    }
    if (route === 'GET /v1/probe') {
      const vmstat = fs.readFileSync('/proc/vmstat', 'utf8');
      const diskstats = fs.readFileSync('/proc/diskstats', 'utf8');
      return send(200, { vmstat, diskstats, uptimeMs: uptimeMs(), processes: [...procs.values()].map(processInfo) });
    }
    if (route === 'GET /v1/sysctl') {
      const name = url.searchParams.get('name') ?? '';
      return send(200, { name, value: fs.readFileSync(sysctlPath(name), 'utf8').trim() });
    }
    if (route === 'POST /v1/setup') return send(200, await setup(await readJson(req)));
    if (route === 'POST /v1/broker-zygote') return send(200, await startBrokerZygote());
    if (route === 'POST /v1/exec') return send(200, exec(await readJson(req)));
    const m = /^\/v1\/processes\/(\d+)(\/log|\/signal)?$/.exec(url.pathname);
    if (m) {
      const p = procs.get(Number(m[1]));
      if (!p) throw new HttpError(404, `no process ${m[1]} was started by this agent`);
      if (req.method === 'GET' && !m[2]) return send(200, processInfo(p));
      if (req.method === 'GET' && m[2] === '/log') {
        const text = p.logPath === '/dev/console' ? '' : fs.readFileSync(p.logPath, 'utf8');
        return send(200, { log: text });
      }
      if (req.method === 'POST' && m[2] === '/signal') {
        const { signal } = await readJson(req);
        p.child.kill(signal ?? 'SIGTERM');
        return send(200, processInfo(p));
      }
    }
    if (route === 'GET /v1/file') {
      // For checks after a reboot on the same disk (the guest's ext4 replayed its journal).
      const p = url.searchParams.get('path') ?? '';
      if (!p.startsWith('/')) throw new HttpError(400, `file: path must be absolute, got '${p}'`);
      if (!fs.existsSync(p)) throw new HttpError(404, `file ${p} does not exist in the guest`);
      const data = fs.readFileSync(p);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length });
      return res.end(data);
    }
    if (route === 'POST /v1/shutdown') {
      if (shuttingDown) return send(409, { error: 'shutting down' });
      shuttingDown = true;
      await stopAll(3000);
      let unmounted = false;
      if (fs.readFileSync('/proc/mounts', 'utf8').split('\n').some((l) => l.split(' ')[1] === mountPoint)) {
        // The one deliberate sync: a clean shutdown, asked for by the host.
        await execFileP('umount', [mountPoint]);
        unmounted = true;
      }
      send(200, { ok: true, unmounted });
      res.on('finish', () => {
        console.log('durolab-agent: clean shutdown');
        server.close();
        setTimeout(() => process.exit(0), 50);
      });
      return;
    }
    throw new HttpError(404, `no route ${route}`);
  } catch (err) {
    const status = err instanceof HttpError ? err.status : 500;
    send(status, { error: status === 500 ? 'AGENT_ERROR' : 'BAD_REQUEST', message: (err as Error).message });
  }
});
server.keepAliveTimeout = 30_000;
// A bug in a request handler must not take the VM down with it (init powers off when the agent exits).
process.on('uncaughtException', (err) => console.error(`durolab-agent: uncaught: ${err.stack ?? err.message}`));
server.listen(port, '0.0.0.0', () => {
  console.log(`durolab-agent: listening on :${port} (node ${process.version}, uptime ${uptimeMs()} ms)`);
});
