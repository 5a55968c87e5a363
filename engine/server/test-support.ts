// Test support for the broker tests (not product code): how to run `durolab broker`, and small
// HTTP helpers that read a broker's answers.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { encodeBatch, recordsOf } from '../records/index.ts';
import { repoRoot } from '../common/repo-root.ts';
import { request, type HttpAnswer } from './http-client.ts';
import { RECORD_BATCH_TYPE } from './http-util.ts';

function bundleHas(marker: string): boolean {
  const bundle = path.join(repoRoot(), 'dist', 'durolab.mjs');
  return existsSync(bundle) && readFileSync(bundle, 'utf8').includes(marker);
}

/**
 * The bundled CLI once harness/cli/main.ts registers the command (test/global-setup.ts
 * rebuilds it); until then the TypeScript entry through tsx.
 */
export function brokerCommand(): string[] {
  if (bundleHas('Runs one broker. Prints')) return [process.execPath, path.join(repoRoot(), 'bin', 'durolab.mjs'), 'broker'];
  return [process.execPath, '--import', 'tsx', path.join(repoRoot(), 'engine', 'server', 'broker-command.ts')];
}

export function clusterCommand(): string[] {
  if (bundleHas('Runs a controller (in this process)')) return [process.execPath, path.join(repoRoot(), 'bin', 'durolab.mjs'), 'cluster'];
  return [process.execPath, '--import', 'tsx', path.join(repoRoot(), 'engine', 'server', 'cluster-command.ts')];
}

export function tempDir(name: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `durolab-${name}-`));
}

export function recordsPath(url: string, topic: string, partition = 0): string {
  return `${url}/v1/topics/${topic}/partitions/${partition}/records`;
}

export interface ProduceAnswer {
  status: number;
  body: Record<string, unknown>;
  latencyUs: number;
}

export function batchOf(values: string[]): Buffer {
  return encodeBatch({ records: values.map((v) => ({ value: Buffer.from(v) })) });
}

export async function produce(url: string, topic: string, values: string[], acks: '0' | '1' | 'all', partition = 0, timeoutMs = 10_000): Promise<ProduceAnswer> {
  const t0 = process.hrtime.bigint();
  const a = await request(`${recordsPath(url, topic, partition)}?acks=${acks}&timeoutMs=${timeoutMs}`, {
    method: 'POST',
    headers: { 'content-type': RECORD_BATCH_TYPE },
    body: batchOf(values),
    timeoutMs: timeoutMs + 5000,
  });
  const latencyUs = Number(process.hrtime.bigint() - t0) / 1000;
  return { status: a.status, body: a.body.length ? (JSON.parse(a.body.toString('utf8')) as Record<string, unknown>) : {}, latencyUs };
}

export interface PartitionMetricsView {
  topic: string;
  partition: number;
  role: string;
  leader: number;
  leaderEpoch: number;
  isr: number[];
  hw: number;
  leo: number;
  appends: number;
  errors: Record<string, number>;
}

export async function partitionMetrics(url: string, topic: string, partition = 0): Promise<PartitionMetricsView> {
  const a = await request(`${url}/v1/metrics`, { timeoutMs: 5000 });
  const m = JSON.parse(a.body.toString('utf8')) as { partitions: PartitionMetricsView[] };
  const p = m.partitions.find((x) => x.topic === topic && x.partition === partition);
  if (!p) throw new Error(`${url} has no metrics for ${topic}-${partition}`);
  return p;
}

/** Every record value of the partition up to the HW, read from its leader. */
export async function readAllValues(url: string, topic: string, partition = 0): Promise<string[]> {
  const values: string[] = [];
  let offset = 0;
  for (;;) {
    const a: HttpAnswer = await request(`${recordsPath(url, topic, partition)}?offset=${offset}&maxBytes=1048576`, { timeoutMs: 5000 });
    if (a.status !== 200) throw new Error(`fetch ${topic}-${partition} at ${offset} from ${url}: HTTP ${a.status} ${a.body.toString('utf8')}`);
    if (a.body.length === 0) return values;
    for (const r of recordsOf(a.body)) values.push(r.value?.toString('utf8') ?? '');
    offset = Number(a.headers['x-next-offset']);
  }
}

export async function logHash(url: string, topic: string, partition = 0, upTo?: number): Promise<{ hash: string; hw: number; leo: number; upTo: number }> {
  const a = await request(`${url}/v1/admin/log-hash?topic=${topic}&partition=${partition}${upTo === undefined ? '' : `&upTo=${upTo}`}`, { timeoutMs: 5000 });
  if (a.status !== 200) throw new Error(`log-hash from ${url}: HTTP ${a.status} ${a.body.toString('utf8')}`);
  return JSON.parse(a.body.toString('utf8')) as { hash: string; hw: number; leo: number; upTo: number };
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
}

export interface BrokerProcess {
  url: string;
  /** Kafka listener host:port from the ready line ('' without one). */
  kafka: string;
  pid: number;
  /** Resolves with the exit code (or signal name) once the process ended. */
  exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): void;
  stderr(): string;
}

/** Spawns `durolab broker` with args and waits for its ready line. */
export async function startBrokerProcess(args: string[], timeoutMs = 20_000): Promise<BrokerProcess> {
  const cmd = brokerCommand();
  const proc = execa(cmd[0], [...cmd.slice(1), ...args], { cwd: repoRoot(), stdin: 'ignore', buffer: false, reject: false, cleanup: true, forceKillAfterDelay: 5000 });
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = proc.then((r) => r.exitCode ?? r.signal ?? -1);
  let kafka = '';
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`broker not ready within ${timeoutMs} ms: ${err}`)), timeoutMs);
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const m = /"event":"ready".*"url":"([^"]+)"/.exec(out);
      if (m) {
        kafka = /"event":"ready".*"kafka":"([^"]+)"/.exec(out)?.[1] ?? '';
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`broker exited (${code}) before it was ready: ${err}`));
    });
  });
  return { url, kafka, pid: proc.pid!, exited, kill: (s = 'SIGTERM') => void proc.kill(s), stderr: () => err };
}
