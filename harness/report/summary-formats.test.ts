// The pasteable summaries: a markdown table with one row per cell and the verdict, and JSON.
import { describe, expect, it } from 'vitest';
import { makeRun, powerCutRun, processRun } from './test-fixtures.ts';
import { parseSummaryFormat, summaryJson, summaryMarkdown } from './summary-formats.ts';

describe('summary formats', () => {
  it('markdown: a header, an alignment row and one row per cell, then the expectations and the verdict', () => {
    const run = processRun();
    const text = summaryMarkdown(run);
    const rows = text.split('\n').filter((l) => l.startsWith('|'));
    expect(rows[0]).toBe('| cell | records/s | MB/s | p50 µs | p99 µs | p99.9 µs | errors | acked | lost |');
    expect(rows[1]).toBe('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    expect(rows).toHaveLength(2 + run.cells.length);
    expect(rows[2]).toMatch(/^\| buffered, flush never \| 120,000 \| 122\.9 \| [\d,]+ \| [\d,]+ \| [\d,]+ \| 0 \| 3,600,000 \| 0 \|$/);
    expect(rows[5]).toBe('| O_DSYNC | skipped | skipped | skipped | skipped | skipped | 0 | 0 | 0 |');
    expect(text).toContain('- **PASS** 1,720 µs > 2 × 505 µs');
    expect(text.trimEnd().split('\n').at(-1)).toBe('verdict: PASS (2 expectation(s)); exit 0');
  });

  it('markdown: fault runs get the loss of every trial; pipes in names cannot break the table', () => {
    const text = summaryMarkdown(powerCutRun());
    expect(text).toContain('| lost per trial |');
    expect(text).toMatch(/\| vm buffered acks=1 \|.*\| 3,100, 2,800, 0 \|$/m);
    const piped = makeRun([{ id: 'a|b', params: {}, recordsPerSec: 10, latency: { medianUs: 10, sigma: 0.1, count: 10 } }]);
    expect(summaryMarkdown(piped)).toMatch(/^\| a\\\|b \| 10 \|/m);
  });

  it('json: the same figures as data, and an unknown format is refused naming the flag', () => {
    const parsed = JSON.parse(summaryJson(processRun())) as { cells: Array<{ cell: string; recordsPerSec: number | null }>; verdict: { code: number } };
    expect(parsed.cells.map((c) => c.cell)).toEqual(['buffered, flush never', 'fdatasync per batch', 'O_DIRECT', 'O_DSYNC']);
    expect(parsed.cells[3].recordsPerSec).toBeNull();
    expect(parsed.verdict.code).toBe(0);
    expect(() => parseSummaryFormat('--summary', 'html')).toThrow("--summary: expected one of text, markdown, json, found 'html'");
  });
});
