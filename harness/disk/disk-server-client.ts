// The harness's side of `durolab disk-server` (disk-server-command.ts): starts the process
// under pdeathsig and in the process registry, waits for its ready line, and sends it the
// disk's requests (cut, clean shutdown, report, close) as JSON lines.
import type { ReadErrorRange } from './disk-faults.ts';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { hostClockOffsetUs } from '../../engine/common/clock.ts';
import { repoRoot } from '../../engine/common/repo-root.ts';
import { findExecutable } from '../vm/prerequisites.ts';
import { pdeathsigArgv, trackChildProcess, untrackChildProcess } from '../vm/process-registry.ts';
import type { DiskServerConfig, DiskServerReady } from './disk-server-command.ts';
import type { NbdDiskReport } from './nbd-disk.ts';
import type { CutOutcome } from './volatile-cache.ts';

/** Every disk-server command line carries this, so sweeps and tests find them. */
export const DISK_SERVER_MARKER = 'disk-server';

/** `node bin/durolab.mjs disk-server`, or the JSON argv in DUROLAB_DISK_SERVER_COMMAND (tests run it from source). */
function diskServerCommand(): string[] {
  const env = process.env.DUROLAB_DISK_SERVER_COMMAND;
  if (env) {
    const argv = JSON.parse(env) as unknown;
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string')) throw new Error(`DUROLAB_DISK_SERVER_COMMAND: expected a JSON array of strings, got ${env}`);
    return argv as string[];
  }
  return [process.execPath, path.join(repoRoot(), 'bin', 'durolab.mjs'), DISK_SERVER_MARKER];
}

export class DiskServerProcess {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private exited = false;
  private stderrTail = '';

  private constructor(
    private readonly child: ResultPromise,
    readonly ready: DiskServerReady,
    readonly name: string,
    private readonly done: Promise<void>,
  ) {}

  get socketPath(): string {
    return this.ready.socketPath;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Starts a disk server on this process's host clock (clockOffsetUs: this process's, unless the config names one). */
  static async start(disk: Omit<DiskServerConfig, 'clockOffsetUs'> & Partial<Pick<DiskServerConfig, 'clockOffsetUs'>>, name: string, log?: (line: string) => void): Promise<DiskServerProcess> {
    const config: DiskServerConfig = { clockOffsetUs: hostClockOffsetUs, ...disk };
    const [cmd, ...args] = diskServerCommand();
    const [file, argv] = pdeathsigArgv(findExecutable('setpriv'), cmd!, [...args, '--config', JSON.stringify(config)]);
    const child = execa(file, argv, { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', reject: false, buffer: false, cleanup: true });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`${name}: could not spawn the disk server (${cmd})`);
    trackChildProcess(pid, `disk-server ${config.file}`);
    let proc: DiskServerProcess | null = null;
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => {
      const text = b.toString('utf8');
      stderr = (stderr + text).slice(-4000);
      if (proc) proc.stderrTail = stderr;
      for (const line of text.split('\n')) if (line.trim()) log?.(`${name}: ${line.trim()}`);
    });
    const done = child.then(() => {
      untrackChildProcess(pid);
      if (proc) {
        proc.exited = true;
        for (const w of proc.waiting.values()) w.reject(new Error(`${name}: the disk server exited: ${proc.stderrTail.trim().split('\n').slice(-3).join(' | ')}`));
        proc.waiting.clear();
      }
    });
    const ready = await new Promise<DiskServerReady>((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(() => reject(new Error(`${name}: the disk server sent no ready line in 30 s: ${stderr.trim()}`)), 30_000);
      const onData = (b: Buffer): void => {
        buf += b.toString('utf8');
        const nl = buf.indexOf('\n');
        if (nl < 0) return;
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        try {
          const r = JSON.parse(buf.slice(0, nl)) as DiskServerReady;
          if (!r.ready) throw new Error(`not a ready line: ${buf.slice(0, nl)}`);
          resolve(r);
        } catch (err) {
          reject(new Error(`${name}: the disk server's first line: ${(err as Error).message}`));
        }
      };
      child.stdout!.on('data', onData);
      void done.then(() => {
        clearTimeout(timer);
        reject(new Error(`${name}: the disk server exited before it was ready: ${stderr.trim().split('\n').slice(-5).join(' | ')}`));
      });
    }).catch(async (err: Error) => {
      child.kill('SIGKILL');
      await done;
      throw err;
    });
    proc = new DiskServerProcess(child, ready, name, done);
    proc.stderrTail = stderr;
    let buf = '';
    child.stdout!.on('data', (b: Buffer) => {
      buf += b.toString('utf8');
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        proc!.answer(line);
      }
    });
    return proc;
  }

  private answer(line: string): void {
    let a: { id?: number; ok?: boolean; result?: unknown; error?: string };
    try {
      a = JSON.parse(line) as typeof a;
    } catch {
      return;
    }
    const w = a.id !== undefined ? this.waiting.get(a.id) : undefined;
    if (!w) return;
    this.waiting.delete(a.id!);
    if (a.ok) w.resolve(a.result);
    else w.reject(new Error(`${this.name}: disk server: ${a.error ?? 'failed'}`));
  }

  private request<T>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    if (this.exited) return Promise.reject(new Error(`${this.name}: the disk server has exited`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, op, ...args })}\n`);
    });
  }

  /** Arms read errors over these byte ranges of the disk (replacing earlier ones; [] disarms them): fault kind read-error. */
  setReadErrors(ranges: ReadonlyArray<Pick<ReadErrorRange, 'from' | 'to' | 'mode'>>): Promise<ReadErrorRange[]> {
    return this.request('readErrors', { ranges });
  }

  /** The armed ranges and the reads that hit each so far. */
  readErrorHits(): Promise<ReadErrorRange[]> {
    return this.request('readErrorHits');
  }

  /** The NBD client is gone: apply the onCut policy to the volatile cache. */
  cut(): Promise<CutOutcome> {
    return this.request<CutOutcome>('cut');
  }

  cleanShutdown(): Promise<void> {
    return this.request<void>('cleanShutdown');
  }

  report(): Promise<{ report: NbdDiskReport; summary: string; writeLogFull: string | null }> {
    return this.request('report');
  }

  /** Closes the server (the image stays) and waits for the process to end. */
  async close(): Promise<void> {
    if (!this.exited) {
      await Promise.race([this.request('close').catch(() => undefined), new Promise((r) => setTimeout(r, 10_000))]);
      this.child.stdin!.end();
      const gone = await Promise.race([this.done.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
      if (!gone) this.child.kill('SIGKILL');
    }
    await this.done;
  }

  /** SIGKILL (exit paths). */
  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}
