// One broker node of a host-process target (kafka, nats): a server process started under
// `setpriv --pdeathsig KILL` (or inside its lab node's namespace) and in the process registry,
// so none outlives the harness (Ctrl-C, a crash, SIGKILL of the harness), its output appended
// to the node's log, ready once that log says so. SIGSTOP/SIGCONT for pauses and a power cut's
// first step, SIGKILL for kills, SIGTERM (the server's own clean shutdown) to stop. What a
// system's node is (its command line, config files, readiness line) stays in its own folder.
import { appendFileSync, readFileSync } from 'node:fs';
import { execa, type ResultPromise } from 'execa';
import { findExecutable } from '../vm/prerequisites.ts';
import { isAlive, pdeathsigArgv, trackChildProcess, untrackChildProcess } from '../vm/process-registry.ts';

/** How one system's node process is told apart in its log and in errors. */
export interface HostNodeProcessShape {
  /** Names the node in errors (`<system> node <id>`) and in the process registry (`<system>-<id>`). */
  system: string;
  /** What the process is called in the error of one that survives SIGKILL (`JVM`, `nats-server`). */
  program: string;
  /** The log line (of this start's output) that says the server serves. */
  ready: RegExp;
  /** How a start that timed out is told (`did not start`, `was not ready`). */
  notReady: string;
  /** Lines of a failed start's log worth quoting (the last 8). */
  errorLines: RegExp;
  /** How often a start reads the log, ms. */
  pollMs: number;
  /** A stop sends SIGCONT before SIGTERM (a frozen process cannot act on SIGTERM). */
  thawBeforeStop: boolean;
}

export class HostNodeProcess<Spec extends { id: number; logPath: string } = { id: number; logPath: string }> {
  private child: ResultPromise | null = null;
  private exited: Promise<void> = Promise.resolve();
  pid: number | null = null;
  running = false;
  /** Where the node's log stood when its last start began (what start() wrote comes after). */
  protected logStart = 0;
  /** [file, args] that run the server where it belongs (inside its lab node's namespace, killed with the harness); null: here, under setpriv --pdeathsig. */
  spawnIn: ((file: string, args: string[]) => [string, string[]]) | null = null;

  constructor(
    readonly node: Spec,
    private readonly shape: HostNodeProcessShape,
  ) {}

  /** Runs `file args` as the node and resolves once its log says it is ready (timeoutMs), with the ms it took. */
  protected async launch(file: string, args: string[], timeoutMs: number): Promise<number> {
    const { shape, node } = this;
    const t0 = Date.now();
    appendFileSync(node.logPath, '');
    const logStart = readFileSync(node.logPath).length;
    this.logStart = logStart;
    const [command, argv] = this.spawnIn ? this.spawnIn(file, args) : pdeathsigArgv(findExecutable('setpriv'), file, args);
    const child = execa(command, argv, {
      stdin: 'ignore',
      stdout: { file: node.logPath, append: true },
      stderr: { file: node.logPath, append: true },
      reject: false,
      cleanup: true,
      forceKillAfterDelay: 2000,
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`${shape.system} node ${node.id}: could not spawn ${file}`);
    trackChildProcess(pid, `${shape.system}-${node.id}`);
    this.child = child;
    this.pid = pid;
    this.running = true;
    let done = false;
    this.exited = child.then(() => {
      done = true;
      this.running = false;
      untrackChildProcess(pid);
    });
    for (;;) {
      const text = readFileSync(node.logPath).subarray(logStart).toString('utf8');
      if (shape.ready.test(text)) return Date.now() - t0;
      if (done) {
        throw new Error(`${shape.system} node ${node.id} exited during start; log ${node.logPath}:\n${text.trim().split('\n').filter((l) => shape.errorLines.test(l)).slice(-8).join('\n') || text.slice(-1500)}`);
      }
      if (Date.now() - t0 > timeoutMs) {
        await this.kill();
        throw new Error(`${shape.system} node ${node.id} ${shape.notReady} within ${timeoutMs} ms; log ${node.logPath}:\n${text.slice(-1500)}`);
      }
      await new Promise((r) => setTimeout(r, shape.pollMs));
    }
  }

  private signal(sig: NodeJS.Signals): void {
    if (this.pid !== null && this.running) {
      try {
        process.kill(this.pid, sig);
      } catch {
        // exited meanwhile
      }
    }
  }

  /** SIGSTOP: the server stops at once (a pause, or a power cut's first step: nothing more is written or answered). */
  freeze(): void {
    this.signal('SIGSTOP');
  }

  /** SIGCONT: a frozen server runs on (a pause's heal); nothing when it is gone. */
  thaw(): void {
    this.signal('SIGCONT');
  }

  /** SIGKILL; resolves when the process is gone. */
  async kill(): Promise<void> {
    if (this.child && this.running) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM (the server's clean shutdown), SIGKILL after graceMs. */
  async stop(graceMs: number): Promise<'clean' | 'killed'> {
    if (!this.child || !this.running) return 'clean';
    const pid = this.pid;
    if (this.shape.thawBeforeStop) this.thaw();
    // Not child.kill: execa's forceKillAfterDelay would SIGKILL it 2 s later, mid-shutdown; graceMs decides here.
    this.signal('SIGTERM');
    const timedOut = await Promise.race([this.exited.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), graceMs))]);
    if (timedOut) await this.kill();
    if (pid !== null && isAlive(pid)) throw new Error(`${this.shape.system} node ${this.node.id}: ${this.shape.program} ${pid} still alive after SIGKILL`);
    return timedOut ? 'killed' : 'clean';
  }
}
