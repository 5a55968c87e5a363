// A run's first screen: the answer table, and connection errors after a fault in one line.
import { describe, expect, it } from 'vitest';
import { answerBlock, connectionNoiseLine } from './answer.ts';
import { findings } from './findings.ts';
import { renderRunReport } from './run-page.ts';
import { powerCutRun, processRun } from './test-fixtures.ts';

function noisyPowerCut() {
  const run = powerCutRun();
  run.cells[0].errors = { CLIENT_ECONNREFUSED: 2_400, CLIENT_ECONNRESET: 8, NOT_LEADER_OR_FOLLOWER: 3 };
  run.cells[1].errors = { CLIENT_ECONNREFUSED: 1_100 };
  return run;
}

describe('the answer first', () => {
  it('a fault run answers with loss per cell over its trials, before the charts', () => {
    const run = noisyPowerCut();
    const html = answerBlock(run);
    expect(html).toContain('acknowledged records lost, per cell');
    expect(html).toMatch(/<tr data-cell="vm buffered acks=1"><th scope="row">vm buffered acks=1<\/th><td class="num">2 of 3<\/td><td class="num bad">0 \/ 2,800 \/ 3,100<\/td><td class="num bad">5,900 of 120,500 \(4\.9%\)<\/td><td class="num">4\.2 s<\/td><\/tr>/);
    const page = renderRunReport(run);
    expect(page.indexOf('id="answer-table"')).toBeLessThan(page.indexOf('id="findings"'));
    expect(page.indexOf('id="answer-table"')).toBeLessThan(page.indexOf('id="summary-table"'));
  });

  it('connection errors after a fault are one line, not one finding per cell; other errors stay findings', () => {
    const run = noisyPowerCut();
    expect(connectionNoiseLine(run)).toBe(
      '3,508 client connection errors in 2 of 3 cells (CLIENT_ECONNREFUSED 3,500, CLIENT_ECONNRESET 8): clients reaching a broker that the fault had taken down, not a finding about durability.',
    );
    const f = findings(run);
    expect(f.filter((line) => line.includes('CLIENT_ECONNREFUSED'))).toHaveLength(1);
    expect(f).toContain('vm buffered acks=1: 3 errors (NOT_LEADER_OR_FOLLOWER 3).');
    // Loss leads; throughput (not comparable under TCG) comes after it.
    const most = f.findIndex((l) => l.startsWith('Most loss:'));
    const fastest = f.findIndex((l) => l.startsWith('Fastest:'));
    expect(most).toBeGreaterThanOrEqual(0);
    expect(fastest).toBeGreaterThan(most);
  });

  it('a performance run answers with ratios to the first cell; the summary table keeps the rest behind a toggle', () => {
    const run = processRun();
    expect(connectionNoiseLine(run)).toBeNull();
    const html = answerBlock(run);
    expect(html).toContain('each cell against the first');
    expect(html).toMatch(/fdatasync per batch<\/th><td class="num">9,000 <b>0\.075x<\/b>/);
    const page = renderRunReport(run);
    expect(page).toContain('<table class="sortable compact" id="summary-table">');
    expect(page).toMatch(/<th scope="col" class="num extra"[^>]*>flushes<\/th>/);
    expect(page).toMatch(/<th scope="col" class="num"[^>]*>records\/s<\/th>/);
  });
});
