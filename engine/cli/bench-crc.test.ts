// `durolab engine bench --crc`: the side-by-side CRC-32C table and its JSON, through the
// library and through the bundled CLI. Not a timed assertion: the 20 GB/s goal is judged by
// the full bench on a quiet machine.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { crc32cImplementations, describeCrc32c } from '../records/index.ts';
import { parseBenchFlags } from './bench-command.ts';
import { CRC_SIZES, formatCrcBench, runCrcBench, type CrcBenchResult } from './bench-crc.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-crc-bench-test-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('engine bench --crc', () => {
  it('measures every implementation at every size and prints them side by side', () => {
    const r = runCrcBench({ reps: 2, seconds: 0.01, sizes: [4096, 65536] });
    const names = crc32cImplementations().map((i) => i.name);
    expect(r.implementations.map((i) => i.name)).toEqual(names);
    expect(r.cells.map((c) => [c.implementation, c.bytes])).toEqual([4096, 65536].flatMap((b) => names.map((n) => [n, b])));
    for (const c of r.cells) {
      expect(c.repsGbps).toHaveLength(2);
      expect(c.gbps).toBeGreaterThan(0);
      expect(c.gbps).toBeGreaterThanOrEqual(Math.min(...c.repsGbps));
      expect(c.gbps).toBeLessThanOrEqual(Math.max(...c.repsGbps));
    }
    expect(r.engineUses).toBe(describeCrc32c());
    const text = formatCrcBench(r);
    expect(text).toMatch(/^buffer\s+native GB\/s\s+isa-l GB\/s\s+@node-rs\/crc32 GB\/s\s+native \/ isa-l\s+native \/ @node-rs\/crc32$/m);
    expect(text).toMatch(/^4 KiB(\s+\d+\.\d\d){3}(\s+\d+\.\d\dx){2}$/m);
    expect(text).toMatch(/^64 KiB(\s+\d+\.\d\d){3}(\s+\d+\.\d\dx){2}$/m);
    // The goal covers 64 KiB and larger, of the engine's implementation only.
    expect(r.goal.checks.map((c) => c.bytes)).toEqual([65536]);
    expect(r.goal.checks[0]!.gbps).toBe(r.cells.find((c) => c.implementation === 'native' && c.bytes === 65536)!.gbps);
    expect(text).toMatch(/^(PASS|FAIL) {2}CRC-32C of the engine's addon \(native\) >= 20 GB\/s on buffers of 64 KiB and larger$/m);
  });

  it('takes --reps and --seconds, and refuses the write-path flags', () => {
    expect(parseBenchFlags(['--crc'])).toMatchObject({ crc: { reps: 5, seconds: 0.25 }, out: path.resolve('results/engine/crc-latest.json') });
    expect(parseBenchFlags(['--crc', '--quick', '--reps', '3'])).toMatchObject({ crc: { reps: 3, seconds: 0.05 } });
    expect(() => parseBenchFlags(['--out', os.tmpdir()])).toThrow(`--out ${os.tmpdir()}: is a directory`);
    expect(parseBenchFlags([])).toMatchObject({ crc: null, budget: { reps: 6, minRowSeconds: 4, maxReps: 16 } });
    // --reps N is exactly N repetitions per row.
    expect(parseBenchFlags(['--reps', '2'])).toMatchObject({ budget: { reps: 2, minRowSeconds: 0 } });
    expect(() => parseBenchFlags(['--crc', '--modes', 'buffered', '--mb', '4'])).toThrow('engine bench --crc measures CRC-32C in memory: --mb, --modes does not apply to it');
    expect(() => parseBenchFlags(['--crc', '--seconds', '0'])).toThrow('--seconds "0": expected a number in [0.01, 600]');
  });

  it('runs through the bundled CLI and writes its JSON file', () => {
    const out = path.join(tmp, 'crc.json');
    const stdout = execFileSync(process.execPath, ['bin/durolab.mjs', 'engine', 'bench', '--crc', '--quick', '--seconds', '0.01', '--out', out], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    const file = JSON.parse(fs.readFileSync(out, 'utf8')) as CrcBenchResult;
    expect(file.kind).toBe('durolab-crc-bench');
    expect(file.cells.map((c) => c.bytes)).toEqual(CRC_SIZES.flatMap((b) => file.implementations.map(() => b)));
    // The bundle finds the addon beside it (dist/crc32c.node), as the sources do.
    expect(file.engineUses).toBe(describeCrc32c());
    expect(stdout).toMatch(/^16 MiB\s/m);
    expect(stdout).toContain(`wrote ${out}`);
  });
});
