// `durolab broker` refuses bad arguments before it serves: an exit code, a message naming the
// flag, and no "ready" line (a process that printed an error and kept serving was the bug).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../common/repo-root.ts';
import { parseId, parseParentPid, parseReplicationPort, prepareDataDir } from './broker-command.ts';
import { checkPortRange } from './cluster-command.ts';
import { main as benchBrokerMain } from './bench-broker.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-broker-command-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function broker(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(repoRoot(), 'bin', 'durolab.mjs'), 'broker', ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}

describe('durolab broker arguments', () => {
  it('parses ids up to Kafka int32, parent pids and the data directory', () => {
    expect(parseId('0')).toBe(0);
    expect(parseId('2147483647')).toBe(2147483647);
    expect(() => parseId('2147483648')).toThrow('--id 2147483648: expected an integer from 0 to 2147483647');
    expect(() => parseId('-1')).toThrow(/--id -1: expected an integer/);
    expect(parseReplicationPort(undefined)).toBeUndefined();
    expect(parseReplicationPort('9091')).toBe(9091);
    expect(() => parseReplicationPort('65536')).toThrow('--replication-port 65536: expected a port number from 0 to 65535 (0 = any free port)');
    expect(() => parseReplicationPort('x')).toThrow(/--replication-port x: expected a port number/);
    expect(parseParentPid(undefined)).toBeNull();
    expect(parseParentPid('4242')).toBe(4242);
    for (const bad of ['abc', '0', '-5', '1.5', '']) expect(() => parseParentPid(bad)).toThrow(`--parent-pid ${bad}: expected a process id`);
    const made = path.join(tmp, 'new', 'data');
    expect(prepareDataDir(made)).toBe(made);
    expect(fs.statSync(made).isDirectory()).toBe(true);
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, 'x');
    expect(() => prepareDataDir(file)).toThrow(`--data ${file}: not a directory`);
    expect(() => prepareDataDir(path.join(file, 'below'))).toThrow(/cannot make the directory \(ENOTDIR/);
    expect(() => prepareDataDir(undefined)).toThrow('--data is required');
  });

  it('exits 1 with the reason, before serving, on a bad --parent-pid, --data, --advertise or --id', async () => {
    const file = path.join(tmp, 'data-file');
    fs.writeFileSync(file, 'x');
    const data = path.join(tmp, 'cli-data');
    const cases: Array<[string[], RegExp]> = [
      [['--id', '1', '--data', data, '--parent-pid', 'abc'], /--parent-pid abc: expected a process id/],
      [['--id', '1', '--data', file, '--topic', 't:1'], /--data .*data-file: not a directory/],
      [['--id', '1', '--data', data, '--advertise', 'notaurl'], /--advertise notaurl: expected a URL like http:\/\/127\.0\.0\.1:9092/],
      [['--id', '2147483648', '--data', data], /--id 2147483648: expected an integer from 0 to 2147483647/],
    ];
    const results = await Promise.all(cases.map(([args]) => broker([...args, '--listen', '127.0.0.1:0', '--set', 'kafka.port=-1'])));
    results.forEach((r, i) => {
      expect(r.code, `${cases[i][0].join(' ')}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toMatch(cases[i][1]);
      expect(r.stdout).not.toContain('"event":"ready"');
    });
  });
});

describe('durolab cluster ports', () => {
  it('brokers take P..P+N-1, the controller P+N unless --controller-port names its own', () => {
    expect(() => checkPortRange(65535, 1, 0)).not.toThrow();
    expect(() => checkPortRange(65534, 1, undefined)).not.toThrow();
    expect(() => checkPortRange(65535, 1, undefined)).toThrow('--port 65535: brokers and controller take ports 65535..65536, past 65535');
    expect(() => checkPortRange(65535, 2, 9000)).toThrow('--port 65535: brokers take ports 65535..65536, past 65535');
    expect(() => checkPortRange(0, 64, undefined)).not.toThrow();
  });
});

describe('durolab bench-broker arguments', () => {
  it('refuses a bad --set, --dir or --out before any run', async () => {
    const file = path.join(tmp, 'bb-file');
    fs.writeFileSync(file, 'x');
    const t0 = Date.now();
    await expect(benchBrokerMain(['--set', 'bogus=1', '--out', path.join(tmp, 'bb.json')])).rejects.toThrow(/--set bogus=1: unknown setting 'bogus'/);
    await expect(benchBrokerMain(['--set', 'io=bogus', '--out', path.join(tmp, 'bb.json')])).rejects.toThrow(/--set io=bogus: expected/);
    await expect(benchBrokerMain(['--dir', file, '--out', path.join(tmp, 'bb.json')])).rejects.toThrow(`--dir ${file}: not a directory`);
    await expect(benchBrokerMain(['--out', tmp])).rejects.toThrow(`--out ${tmp}: is a directory`);
    // No warm-up or load run started: those take seconds each.
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(fs.existsSync(path.join(tmp, 'bb.json'))).toBe(false);
  });
});
