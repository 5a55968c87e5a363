// End to end, CI-sized: `durolab bench-recovery` fills a real durolab broker and a real Apache
// Kafka node to 96 MiB in 16 MiB segments, SIGKILLs each, restarts it and prints both recovery
// times with their ratio; a size that cannot fit and a segment size Kafka refuses are refused
// before anything starts.
import { execa } from 'execa';
import { expect, test } from 'vitest';

const durolab = (args: string[]) => execa('node', ['bin/durolab.mjs', 'bench-recovery', ...args], { reject: false, all: true });

test('bench-recovery prints segments, restart and log recovery for both systems, and the ratio', async () => {
  const res = await durolab(['--sizes', '96MiB', '--segment-bytes', '16MiB']);
  const out = res.all ?? '';
  expect(res.exitCode, out).toBe(0);
  const row = (system: string) => out.split('\n').find((l) => new RegExp(`^${system}\\s+96 MiB\\s`).test(l));
  for (const system of ['durolab', 'kafka']) {
    const cols = row(system)?.trim().split(/\s{2,}/);
    expect(cols, out).toBeDefined();
    // 96 MiB in 16 MiB segments: at least 6 segment files, a restart, and the broker's own recovery figure.
    expect(Number(cols![2])).toBeGreaterThanOrEqual(6);
    expect(Number(cols![4])).toBeGreaterThan(0);
    expect(Number(cols![5])).toBeGreaterThanOrEqual(0);
  }
  expect(row('kafka')).toMatch(/\d+\.\d\dx \/ (\d+\.\dx|-)\s*$/);
}, 240_000);

test('bench-recovery refuses a size the disk cannot hold and a segment size below 1 MiB, naming the figure', async () => {
  const big = await durolab(['--sizes', '900TiB']);
  expect(big.exitCode).not.toBe(0);
  expect(big.all).toMatch(/--sizes: \d+(\.\d)? GiB needs \d+(\.\d)? GiB free under .*, which has \d+(\.\d)? GiB/);
  const seg = await durolab(['--segment-bytes', '512KiB']);
  expect(seg.exitCode).not.toBe(0);
  expect(seg.all).toContain('--segment-bytes "512KiB": expected a whole number of bytes in [1048576');
}, 60_000);
