// End to end: `durolab bench-peers --quick` runs one short row per system (a real durolab broker
// and a real Apache Kafka JVM through the scenario runner), prints the ratio table and writes
// results/peers/<run id>.json and latest.json.
import { readFileSync } from 'node:fs';
import { execa } from 'execa';
import { expect, test } from 'vitest';

test('bench-peers --quick prints one row with ratios and a verdict, and writes the JSON', async () => {
  const res = await execa('node', ['bin/durolab.mjs', 'bench-peers', '--quick'], { reject: false, all: true });
  const out = res.all ?? '';
  expect([0, 1], out).toContain(res.exitCode);
  const row = out.split('\n').find((l) => /^1\s+1\s+closed\s/.test(l));
  expect(row, out).toBeDefined();
  expect(row).toMatch(/\b(PASS|FAIL)\b/);
  const path = /results: (results\/peers\/\S+\.json)/.exec(out)?.[1];
  expect(path, out).toBeDefined();
  const run = JSON.parse(readFileSync(path!, 'utf8'));
  expect(JSON.parse(readFileSync('results/peers/latest.json', 'utf8'))).toEqual(run);
  expect(run.rows).toHaveLength(1);
  const r = run.rows[0];
  expect(r.durolab.recordsPerSec).toBeGreaterThan(0);
  expect(r.kafka.recordsPerSec).toBeGreaterThan(0);
  expect(r.ratio.recordsPerSec).toBeCloseTo(r.durolab.recordsPerSec / r.kafka.recordsPerSec, 6);
  expect(r.verdict).toBe(r.ratio.recordsPerSec >= 1 && r.ratio.p99Us <= 1 ? 'PASS' : 'FAIL');
  expect(exitMatches(res.exitCode, r.verdict)).toBe(true);
}, 180_000);

function exitMatches(code: number | undefined, verdict: string): boolean {
  return (verdict === 'PASS') === (code === 0);
}
