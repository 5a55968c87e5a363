import { describe, expect, it } from 'vitest';
import { ResponseTimeline } from './bench-broker-probe.ts';
import { goals, machineTailLine, medianRow, runLine, throughputRatio, type Row } from './bench-broker-report.ts';

function row(over: Partial<Row> & Pick<Row, 'name' | 'target'>): Row {
  return {
    connections: 32,
    rf: null,
    acks: null,
    durationS: 3,
    requests: 1000,
    reqPerSec: 1000,
    recordsPerSec: 16_000,
    mbPerSec: 16.6,
    latencyUs: { p50: 1000, p90: 2000, p99: 4000, p999: 8000, p9999: 9000, max: 9000, mean: 1200, count: 1000 },
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    loadAvg1: 1.5,
    writeBackMs: null,
    dirtyKiB: null,
    ...over,
  };
}

describe('bench-broker goals and rows', () => {
  it('judges acks=1 RF 1 against 0.5 x the null server and p99.9 <= 5 x p99 per broker row, naming the leader stalls', () => {
    const nullRow = row({ name: 'null server', target: 'null', reqPerSec: 10_000 });
    const a1 = row({ name: 'broker RF 1 acks=1', target: 'broker', rf: 1, acks: '1', reqPerSec: 5_000, leader: { eventLoopMaxUs: 614_000, eventLoopP99Us: 9000, rolls: 1, rollMaxUs: 2_400, flushes: 0 } });
    const stalled = row({ name: 'broker RF 3 acks=all', target: 'broker', rf: 3, acks: 'all', latencyUs: { ...a1.latencyUs, p99: 10_000, p999: 1_030_000 } });
    const g = goals([nullRow, a1, stalled], nullRow.reqPerSec);
    expect(g.map((x) => [x.what, x.pass])).toEqual([
      ['acks=1 RF 1 req/s / null server req/s', true],
      ['broker RF 1 acks=1 p99.9 / p99', true],
      ['broker RF 3 acks=all p99.9 / p99', false],
    ]);
    expect(g[0].figure).toBe('0.5 (5,000 / 10,000)');
    expect(g[1].figure).toBe('2 (8,000 / 4,000 µs; leader event-loop delay max 614 ms, 1 segment roll(s) (longest on the loop 2 ms))');
    expect(g[2].figure).toBe('103 (1,030,000 / 10,000 µs)');
    expect(goals([nullRow, { ...a1, reqPerSec: 4_999 }], nullRow.reqPerSec)[0].pass).toBe(false);
    expect(machineTailLine(nullRow)).toMatch(/^null server p99.9 \/ p99 in this run: 2 \(8,000 \/ 4,000 µs\)/);
    // The single-connection reference names itself: the broker's 1-connection rows are read beside it.
    expect(machineTailLine({ ...nullRow, name: 'null server, 1 connection (median of 3)', connections: 1 })).toMatch(/^null server, 1 connection \(median of 3\) p99.9 \/ p99 in this run: 2 /);
  });

  it('a median row keeps the worst leader stall and the sum of rolls over its runs', () => {
    const a = row({ name: 'x', target: 'broker', reqPerSec: 100, settleMs: 5, leader: { eventLoopMaxUs: 1000, eventLoopP99Us: 10, rolls: 0, rollMaxUs: 0, flushes: 1 } });
    const b = row({ name: 'x', target: 'broker', reqPerSec: 300, settleMs: 50, leader: { eventLoopMaxUs: 90_000, eventLoopP99Us: 30, rolls: 1, rollMaxUs: 1_500, flushes: 2 } });
    const m = medianRow('x', [a, b]);
    expect(m.name).toBe('x (median of 2)');
    expect(m.reqPerSec).toBe(200);
    expect(m.leader).toEqual({ eventLoopMaxUs: 90_000, eventLoopP99Us: 20, rolls: 1, rollMaxUs: 1_500, flushes: 3 });
    expect(m.settleMs).toBe(50);
    expect(medianRow('n', [row({ name: 'n', target: 'null' })]).leader).toBeUndefined();
  });

  it('a median row keeps the longest write-back and the most dirty memory over its runs, and a run line shows them', () => {
    const a = row({ name: 'x', target: 'broker', writeBackMs: 40, dirtyKiB: { start: 2048, end: 300 * 1024 } });
    const b = row({ name: 'x', target: 'broker', writeBackMs: 700, dirtyKiB: { start: 1024, end: 600 * 1024 } });
    const m = medianRow('x', [a, b]);
    expect(m.writeBackMs).toBe(700);
    expect(m.dirtyKiB).toEqual({ start: 2048, end: 600 * 1024 });
    expect(runLine(b)).toContain('dirty 1 -> 600 MiB (written back in 700 ms before)');
    // --no-settle: nothing written back, and a row that lacks the figure in one run has none.
    expect(medianRow('x', [a, { ...b, writeBackMs: null }]).writeBackMs).toBeNull();
    expect(runLine({ ...b, writeBackMs: null })).toMatch(/dirty 1 -> 600 MiB(?! \()/);
  });

  it('the response timeline finds one stall: how many answers, when they finished and the worst', () => {
    const t = new ResponseTimeline();
    for (let i = 0; i < 100_000; i++) t.add(i / 10, 500); // grows past its first 65,536 slots
    for (let i = 0; i < 32; i++) t.add(2166 + i / 4, 120_000 + i);
    const s = t.slow(5 * 500);
    expect(s).toEqual({ count: 32, firstAtMs: 2166, lastAtMs: 2174, worstUs: 120_031, worstAtMs: 2174 });
    expect(t.slow(1e9)).toEqual({ count: 0, firstAtMs: -1, lastAtMs: -1, worstUs: 0, worstAtMs: -1 });
  });

  it('the throughput goal is the median of back-to-back pairs when the acks=1 RF 1 runs have them', () => {
    const a1 = row({ name: 'broker RF 1 acks=1', target: 'broker', rf: 1, acks: '1', reqPerSec: 6_000 });
    const nullRow = row({ name: 'null server', target: 'null', reqPerSec: 20_000 });
    // The host slowed down in the second pair: both of its runs are slower, the pair's ratio is not.
    const runs = [
      { ...a1, reqPerSec: 12_000, pairedNullReqPerSec: 20_000 },
      { ...a1, reqPerSec: 6_000, pairedNullReqPerSec: 10_000 },
      { ...a1, reqPerSec: 5_000, pairedNullReqPerSec: 11_000 },
    ];
    expect(throughputRatio(runs, a1, nullRow.reqPerSec)).toEqual({ ratio: 0.6, figure: '0.6 (median of 3 back-to-back pairs: 0.6, 0.6, 0.45; row medians 6,000 / 20,000)' });
    const g = goals([nullRow, a1], nullRow.reqPerSec, runs);
    expect(g[0]).toMatchObject({ pass: true, figure: expect.stringMatching(/^0.6 \(median of 3/) });
    // Without pairs (runs of an older file, or none given) the row medians decide: 6,000 / 20,000 = 0.3.
    expect(goals([nullRow, a1], nullRow.reqPerSec)[0]).toMatchObject({ pass: false, figure: '0.3 (6,000 / 20,000)' });
  });
});
