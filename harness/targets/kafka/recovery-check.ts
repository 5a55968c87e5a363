// Apache Kafka's own log recovery over a crash state, from TypeScript: the small Java program in
// recovery-check/ (built with Maven against Kafka's jars; its README says what it runs) as one
// long-lived JVM, a JSON request per line. For each state the checker hands it the state's
// log.dirs copy; it answers what UnifiedLog.create (LogLoader, with the recovery point and
// clean-shutdown marker as found) kept, and writes the kept batches' raw bytes to a file, which
// the ledger checker reads exactly as it reads a Kafka Fetch answer.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import { findExecutable } from '../../vm/prerequisites.ts';
import { pdeathsigArgv, trackChildProcess, untrackChildProcess } from '../../vm/process-registry.ts';
import { kafkaPomPath, type KafkaInstall } from './install.ts';

export function recoveryCheckDir(): string {
  return path.join(path.dirname(kafkaPomPath()), 'recovery-check');
}

const JAR = 'durolab-kafka-recovery-check-1.jar';

function newestSource(dir: string): number {
  let t = statSync(path.join(dir, 'pom.xml')).mtimeMs;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else t = Math.max(t, statSync(p).mtimeMs);
    }
  };
  walk(path.join(dir, 'src'));
  return t;
}

/** The checker's jar, built with Maven (`mvn -q -B package`) when missing or older than its sources. */
export async function ensureRecoveryCheck(log?: (line: string) => void): Promise<string> {
  const dir = recoveryCheckDir();
  const jar = path.join(dir, 'target', JAR);
  if (existsSync(jar) && statSync(jar).mtimeMs >= newestSource(dir)) return jar;
  const mvn = findExecutable('mvn');
  if (!mvn) throw new Error(`Kafka's recovery checker (${dir}) needs Maven (mvn) to build it against Kafka's jars from Maven Central (Debian: maven)`);
  log?.(`building Kafka's recovery checker with Maven (${dir})`);
  const r = await execa(mvn, ['-q', '-B', 'package'], { cwd: dir, reject: false, all: true, timeout: 600_000 });
  if (r.exitCode !== 0 || !existsSync(jar)) throw new Error(`mvn -q -B package in ${dir} failed (exit ${r.exitCode}): ${String(r.all ?? '').trim().split('\n').slice(-15).join('\n')}`);
  return jar;
}

export interface RecoveryCheckRequest {
  /** The state's log.dirs copy (changed in place: recovery truncates and rebuilds). */
  logDir: string;
  topic: string;
  partition: number;
  /** Topic configs as CreateTopics set them (Kafka's defaults otherwise). */
  config?: Record<string, string>;
  /** The kept batches' raw bytes go here. */
  dumpTo?: string;
}

export interface RecoveryCheckAnswer {
  ok: boolean;
  stage?: string;
  error?: string;
  partitionDirFound?: boolean;
  logStartOffset?: number;
  logEndOffset?: number;
  recoveryPoint?: number;
  hadCleanShutdown?: boolean;
  /** 'ok', 'missing', or why Kafka's MetaProperties parser refuses meta.properties (the broker would not start). */
  metaProperties?: string;
  logDirOffline?: boolean;
  brokerWould?: string;
  truncatedBytes?: number;
  recoveryMs?: number;
  /** Segments after loading. */
  segments?: number;
  readMs?: number;
  batchCount?: number;
  batches?: Array<{ baseOffset: number; lastOffset: number; isValid: boolean }>;
}

export class KafkaRecoveryChecker {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (a: RecoveryCheckAnswer & { id: number }) => void; reject: (e: Error) => void }>();
  private stderr = '';
  private exited = false;

  private constructor(
    private readonly child: ResultPromise,
    private readonly done: Promise<void>,
    readonly kafkaVersion: string,
    /** The broker defaults a durability result depends on, from this Kafka's own ConfigDef (the ping's answer). */
    readonly brokerDefaults: Record<string, string> = {},
  ) {}

  /** Starts the JVM and waits for its answer to a ping. */
  static async start(install: KafkaInstall, jar: string): Promise<KafkaRecoveryChecker> {
    const args = ['-XX:TieredStopAtLevel=1', '-Xmx512m', '-Xlog:disable', '-Xlog:all=warning:stderr', '-XX:+DisplayVMOutputToStderr', '-cp', `${jar}:${install.libsDir}/*`, 'durolab.RecoveryCheck'];
    const [file, argv] = pdeathsigArgv(findExecutable('setpriv'), install.java, args);
    const child = execa(file, argv, { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe', reject: false, buffer: false, cleanup: true });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`Kafka's recovery checker: could not spawn ${install.java}`);
    trackChildProcess(pid, 'kafka-recovery-check');
    let me: KafkaRecoveryChecker | null = null;
    const pending: string[] = [];
    const done = child.then(() => {
      untrackChildProcess(pid);
      if (me) {
        me.exited = true;
        for (const w of me.waiting.values()) w.reject(new Error(`Kafka's recovery checker exited: ${me.stderr.trim().split('\n').slice(-5).join(' | ')}`));
        me.waiting.clear();
      }
    });
    createInterface({ input: child.stdout!, crlfDelay: Infinity }).on('line', (line) => {
      // The JVM itself may print warnings to stdout: answers are the lines that are JSON objects.
      if (!line.startsWith('{')) return;
      if (me) me.answer(line);
      else pending.push(line);
    });
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString('utf8')).slice(-8000);
      if (me) me.stderr = stderr;
    });
    const c = new KafkaRecoveryChecker(child, done, '');
    me = c;
    c.stderr = stderr;
    for (const line of pending) c.answer(line);
    const pong = (await Promise.race([
      c.send({ ping: true }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`Kafka's recovery checker did not answer a ping within 60 s: ${c.stderr.trim().slice(-500)}`)), 60_000).unref()),
    ]).catch(async (err: Error) => {
      child.kill('SIGKILL');
      await done;
      throw err;
    })) as RecoveryCheckAnswer & { kafkaVersion?: string; brokerDefaults?: Record<string, string> };
    return Object.assign(c, { kafkaVersion: pong.kafkaVersion ?? '', brokerDefaults: pong.brokerDefaults ?? {} });
  }

  private answer(line: string): void {
    let a: RecoveryCheckAnswer & { id: number };
    try {
      a = JSON.parse(line) as RecoveryCheckAnswer & { id: number };
    } catch {
      return;
    }
    const w = this.waiting.get(a.id);
    if (!w) return;
    this.waiting.delete(a.id);
    w.resolve(a);
  }

  private send(body: object): Promise<RecoveryCheckAnswer & { id: number }> {
    if (this.exited) return Promise.reject(new Error("Kafka's recovery checker has exited"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, ...body })}\n`);
    });
  }

  /** Runs Kafka's recovery over one state's log dir; the answer says what it kept (ok: false: why it could not load). */
  check(req: RecoveryCheckRequest): Promise<RecoveryCheckAnswer> {
    return this.send(req);
  }

  async close(): Promise<void> {
    if (!this.exited) {
      this.child.stdin!.end();
      const gone = await Promise.race([this.done.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
      if (!gone) this.child.kill('SIGKILL');
    }
    await this.done;
  }
}
