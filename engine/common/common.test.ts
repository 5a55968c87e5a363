import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileAtomic, writeJsonAtomic } from './atomic-file.ts';
import { LatencyRecorder, newLatencyHistogram, summarizeLatency } from './latency.ts';
import { findRepoRoot, repoRoot, repoRootAbove } from './repo-root.ts';
import { distribution, median } from './stats.ts';
import { renderTable } from './text-table.ts';

const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-common-'));
afterAll(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));

describe('median', () => {
  it('is null for no samples, the middle value for an odd count, the mean of the middle two for an even one', () => {
    expect(median([])).toBeNull();
    expect(median([7])).toBe(7);
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('does not reorder its input', () => {
    const xs = [3, 1, 2];
    median(xs);
    expect(xs).toEqual([3, 1, 2]);
  });

  it('distribution gives min, median and max, or null without samples', () => {
    expect(distribution([5, 1, 9, 3])).toEqual({ min: 1, median: 4, max: 9 });
    expect(distribution([])).toBeNull();
  });
});

describe('writeFileAtomic', () => {
  it('replaces the file and leaves no temporary file beside it', () => {
    const dir = fs.mkdtempSync(path.join(tmpRoot, 'w-'));
    const file = path.join(dir, 'a.txt');
    writeFileAtomic(file, 'old\n');
    writeFileAtomic(file, Buffer.from('new\n'));
    expect(fs.readFileSync(file, 'utf8')).toBe('new\n');
    expect(fs.readdirSync(dir)).toEqual(['a.txt']);
  });

  it('uses the fixed temporary name it is given', () => {
    const dir = fs.mkdtempSync(path.join(tmpRoot, 'f-'));
    const file = path.join(dir, 'checkpoint');
    fs.writeFileSync(`${file}.tmp`, 'left over from a crash');
    writeFileAtomic(file, '0\n1\n', { tmp: `${file}.tmp` });
    expect(fs.readFileSync(file, 'utf8')).toBe('0\n1\n');
    expect(fs.readdirSync(dir)).toEqual(['checkpoint']);
  });

  it('creates the parent folder for JSON, and names the file and keeps the errno code on failure', () => {
    const file = path.join(tmpRoot, 'deep', 'er', 'x.json');
    writeJsonAtomic(file, { a: 1 });
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ a: 1 });
    const missing = path.join(tmpRoot, 'no-such-dir', 'y.txt');
    let caught: unknown;
    try {
      writeFileAtomic(missing, 'x');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(Error);
    expect((caught as Error).message).toContain(`cannot write ${missing}`);
    expect((caught as NodeJS.ErrnoException).code).toBe('ENOENT');
  });
});

describe('repo root', () => {
  it('walks up to the durolab package from this module and from a folder inside it', () => {
    const root = repoRoot();
    expect(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).name).toBe('durolab');
    expect(repoRootAbove(path.join(root, 'engine', 'common'))).toBe(root);
    expect(findRepoRoot(path.join(root, 'harness'))).toBe(root);
  });

  it('outside any durolab package: null, or the start folder for findRepoRoot', () => {
    expect(repoRootAbove(tmpRoot)).toBeNull();
    expect(findRepoRoot(tmpRoot)).toBe(tmpRoot);
  });
});

describe('renderTable', () => {
  it('pads columns, right-aligns numeric ones by default, and draws a dash line under the header', () => {
    const out = renderTable(['name', 'n'], [['alpha', '1,234'], ['b', '5']]);
    expect(out.split('\n')).toEqual(['name       n', '-----  -----', 'alpha  1,234', 'b          5']);
  });

  it('takes the right-aligned columns from the caller', () => {
    const out = renderTable(['a', 'b'], [['x', 'yy']], (i) => i === 0);
    expect(out.split('\n')).toEqual(['a  b', '-  --', 'x  yy']);
  });
});

describe('latency summary', () => {
  it('is all zeros with no samples', () => {
    expect(new LatencyRecorder().summary()).toEqual({ p50: 0, p90: 0, p99: 0, p999: 0, p9999: 0, max: 0, mean: 0, count: 0 });
  });

  it('summarises integer microseconds from µs and ns readings', () => {
    const r = new LatencyRecorder();
    for (let us = 1; us <= 1000; us++) r.record(us);
    r.recordNs(2_000_400n); // 2000.4 µs rounds to 2000
    const s = r.summary();
    expect(s.count).toBe(1001);
    expect(s.p50).toBe(501);
    expect(s.p90).toBe(901);
    expect(s.max).toBe(2000);
    expect(s.p99).toBeLessThanOrEqual(s.p999);
    expect(s.mean).toBeCloseTo(502.4, 0);
  });

  it('summarises any hdr histogram the same way', () => {
    const h = newLatencyHistogram();
    h.recordValue(100);
    h.recordValue(300);
    expect(summarizeLatency(h)).toMatchObject({ p50: 100, max: 300, count: 2, mean: 200 });
  });
});
