// `durolab cluster` as a user runs it: it prints addresses and working curl commands, stops
// every broker cleanly on SIGTERM, and leaves no orphan even when it is SIGKILLed itself.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { startCluster } from './cluster.ts';
import { brokerCommand, clusterCommand, tempDir, waitFor } from './test-support.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function runClusterCommand(dir: string) {
  const cmd = clusterCommand();
  const proc = execa(cmd[0], [...cmd.slice(1), '--brokers', '2', '--dir', dir, '--port', '0', '--topic', 'demo:1:2', '--set', 'replica.lag.time.max.ms=2000'], {
    env: { DUROLAB_BROKER_COMMAND: JSON.stringify(brokerCommand()) },
    stdin: 'ignore',
    buffer: false,
    reject: false,
    cleanup: true,
  });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cluster not ready: ${out}\n${err}`)), 30_000);
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('Ctrl-C stops the cluster.')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void proc.then(() => reject(new Error(`cluster exited early: ${out}\n${err}`)));
  });
  const pids = [...out.matchAll(/^broker \d+ .* pid (\d+)/gm)].map((m) => Number(m[1]));
  return { proc, out, pids };
}

describe('durolab cluster', () => {
  it('prints addresses and curl commands that work, and stops every broker cleanly on SIGTERM', async () => {
    const dir = tempDir('cluster-cmd');
    dirs.push(dir);
    const { proc, out, pids } = await runClusterCommand(dir);
    expect(out).toMatch(/^controller {2}http:\/\/127\.0\.0\.1:\d+/m);
    expect(pids).toHaveLength(2);
    expect(out).toMatch(/topic demo-0: leader broker [12] \(epoch 0\), isr \[1,2\]/);
    const curls = out.split('\n').filter((l) => l.trim().startsWith('curl '));
    expect(curls).toHaveLength(2);
    const produced = JSON.parse(execFileSync('sh', ['-c', curls[0]], { encoding: 'utf8' })) as Record<string, unknown>;
    expect(produced).toMatchObject({ baseOffset: 0, lastOffset: 0 });
    const fetched = JSON.parse(execFileSync('sh', ['-c', curls[1]], { encoding: 'utf8' })) as { records: Array<{ key: string; value: string }> };
    expect(fetched.records).toMatchObject([{ key: 'k1', value: 'hello' }]);

    proc.kill('SIGTERM');
    const r = await proc;
    expect(r.exitCode).toBe(0);
    for (const pid of pids) expect(alive(pid)).toBe(false);
    for (const id of [1, 2]) expect(existsSync(path.join(dir, `broker-${id}`, 'demo-0', '.kafka_cleanshutdown'))).toBe(true);
  });

  it('leaves no orphan broker when the cluster process is SIGKILLed (brokers watch their parent and shut down cleanly)', async () => {
    const dir = tempDir('cluster-orphan');
    dirs.push(dir);
    const { proc, pids } = await runClusterCommand(dir);
    proc.kill('SIGKILL');
    await proc;
    await waitFor('brokers gone', async () => pids.every((p) => !alive(p)), 10_000);
    for (const id of [1, 2]) {
      const log = readFileSync(path.join(dir, `broker-${id}.log`), 'utf8');
      expect(existsSync(path.join(dir, `broker-${id}`, 'demo-0', '.kafka_cleanshutdown')), log).toBe(true);
    }
  });

  it('stop() also ends a SIGSTOPped broker, and restartBroker brings one back on the same port', async () => {
    const dir = tempDir('cluster-api');
    dirs.push(dir);
    const c = await startCluster({ brokers: 2, dir, port: 0, brokerCommand: brokerCommand(), topics: [{ name: 't', partitions: 2, replicationFactor: 2 }] });
    try {
      const b1 = c.broker(1);
      const { url, pid } = b1;
      await c.killBroker(1, 'SIGKILL');
      expect(alive(pid)).toBe(false);
      expect(b1.running).toBe(false);
      await c.restartBroker(1);
      expect(b1.url).toBe(url);
      expect(b1.pid).not.toBe(pid);
      await c.waitForLeaders(10_000);
      await c.killBroker(2, 'SIGSTOP');
      expect(c.broker(2).paused).toBe(true);
    } finally {
      const pids = c.brokers.map((b) => b.pid);
      await c.stop();
      for (const p of pids) expect(alive(p)).toBe(false);
    }
  });
});
