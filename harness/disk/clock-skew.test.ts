// One clock for the ack ledger and the host route's write log. The disk server is a process of
// its own (disk-server-command.ts); its write log's stamps are compared with the harness's ack
// times by crash states (ledgerAsOf at each plan point's time, with 0 ms of slack). A real disk
// server is started with its own derived clock offset deliberately off by +-50 ms (the test
// seam DUROLAB_TEST_CLOCK_SKEW_US), and a raw NBD client plays a broker: WRITE, FLUSH, then the
// acknowledgement in the ledger (Date.now(), as the drivers stamp it), 10 ms later. Each crash
// point's "must survive" set is then known from the protocol alone: the acknowledgements of
// every cycle whose FLUSH completed before the point.
// (a) Keeping its own offset (the server before this change), the stamps are off by the skew and
//     the sets change: late stamps demand acks made after the point, early ones excuse real ones.
// (b) With the harness's offset passed (DiskServerProcess.start's default), every stamp lies in
//     the harness's own window around its request and every set is the protocol's.
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { adoptHostClockOffset, hostClockOffsetUs, hostClockUs, wallClockStepMs } from '../../engine/common/clock.ts';
import { AckLedger } from '../history/ledger.ts';
import { ledgerAsOf } from './crash-states/check-state.ts';
import { planCrashStates } from './crash-states/plan.ts';
import { DiskServerProcess } from './disk-server-client.ts';
import { DEFAULT_DISK_SPEC, type DiskSpec } from '../model/disk-spec.ts';
import { CMD, OPT, REP } from './nbd-protocol.ts';
import { exportNameRequest, rawNbdClient } from './nbd-raw-client.ts';
import { readWriteLog, requireComplete, type WriteLogRecord } from './write-log.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-clock-skew-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SKEW_US = 50_000;
const CYCLES = 10;
const GAP_MS = 10;
const volatile: DiskSpec = { ...DEFAULT_DISK_SPEC, model: 'volatile-cache' };

interface Session {
  records: WriteLogRecord[];
  /** The harness's host clock just before each request was sent and just after its reply. */
  windows: Array<[number, number]>;
  ledger: AckLedger;
  endUs: number;
}

let n = 0;

/** A disk server whose own offset is `skewUs` off; `clockOffsetUs` null keeps it (no harness offset sent). */
async function session(skewUs: number, clockOffsetUs?: null): Promise<Session> {
  const id = ++n;
  const file = path.join(dir, `disk-${id}.img`);
  writeFileSync(file, '');
  truncateSync(file, 1 << 20);
  const writeLogPath = path.join(dir, `disk-${id}.wlog`);
  process.env.DUROLAB_TEST_CLOCK_SKEW_US = String(skewUs);
  let server: DiskServerProcess;
  try {
    server = await DiskServerProcess.start({ file, sizeMiB: 1, spec: volatile, seed: id, writeLogPath, existing: true, ...(clockOffsetUs === null ? { clockOffsetUs } : {}) }, `skew ${skewUs} us`);
  } finally {
    delete process.env.DUROLAB_TEST_CLOCK_SKEW_US;
  }
  const ledger = new AckLedger({ recordsPerBatch: 1, producerIdBase: 1000, partitions: [0] });
  const windows: Array<[number, number]> = [];
  let endUs: number;
  try {
    const c = await rawNbdClient(server.socketPath);
    expect((await c.option(OPT.GO, exportNameRequest(''))).at(-1)!.type).toBe(REP.ACK);
    for (let i = 0; i < CYCLES; i++) {
      const seq = ledger.send(0, Date.now());
      for (const [type, offset, length] of [[CMD.WRITE, BigInt(i * 4096), 4096], [CMD.FLUSH, 0n, 0]] as const) {
        const t0 = hostClockUs();
        expect(await c.request(type, offset, length)).toBe(0);
        windows.push([t0, hostClockUs()]);
      }
      await sleep(GAP_MS);
      ledger.ack(0, seq, i, Date.now());
      await sleep(GAP_MS);
    }
    endUs = hostClockUs();
    c.sock.destroy();
  } finally {
    await server.close();
  }
  return { records: requireComplete(readWriteLog(writeLogPath)), windows, ledger, endUs };
}

const acked = (l: AckLedger): number[] => [...l.batches(0)].filter((b) => b.status === 'acked').map((b) => b.baseSequence);

/** Per crash point at a record boundary (end, before and after each FLUSH): the must-survive set, and the protocol's. */
function mustSurvive(s: Session): Array<{ kind: string; position: number; got: number[]; expected: number[] }> {
  const plans = planCrashStates(s.records, { states: 4 * s.records.length, policy: 'drop-unflushed', seed: 7, endUs: s.endUs });
  return plans
    .filter((p) => p.point.kind !== 'spread')
    .map((p) => {
      // Records 2i (WRITE) and 2i+1 (FLUSH) are cycle i; its ack came after its FLUSH completed, before cycle i+1's WRITE.
      const cycles = p.point.kind === 'end' ? CYCLES : Math.floor(p.point.position / 2);
      return { kind: p.point.kind, position: p.point.position, got: acked(ledgerAsOf(s.ledger, p.point.timeUs / 1000)), expected: [...Array(cycles).keys()] };
    });
}

/** Median of (stamp - the harness's clock when it sent the request). */
function stampLeadUs(s: Session): number {
  const leads = s.records.map((r, i) => r.submitUs - s.windows[i]![0]).sort((a, b) => a - b);
  return leads[leads.length >> 1]!;
}

describe('one clock for the ack ledger and the disk server\'s write log', () => {
  it('the harness wall clock (the ledger\'s) and its host clock agree to Date.now()\'s rounding', () => {
    const step = wallClockStepMs();
    expect(step).toBeGreaterThan(-1.5);
    expect(step).toBeLessThanOrEqual(0.5);
  });

  it('an offset is adopted only before the first stamp, and a bad one is refused by the disk server naming the field', async () => {
    hostClockUs();
    expect(() => adoptHostClockOffset(hostClockOffsetUs)).not.toThrow();
    expect(() => adoptHostClockOffset(hostClockOffsetUs + 1)).toThrow(/already stamped host-clock times with its own offset/);
    const file = path.join(dir, 'bad.img');
    writeFileSync(file, '');
    truncateSync(file, 1 << 20);
    await expect(
      DiskServerProcess.start({ file, sizeMiB: 1, spec: volatile, seed: 1, writeLogPath: null, existing: true, clockOffsetUs: 'soon' as unknown as number }, 'bad offset'),
    ).rejects.toThrow(/clockOffsetUs: expected the harness's host clock offset \(integer µs\) or null, got "soon"/);
  });

  for (const skewUs of [SKEW_US, -SKEW_US]) {
    it(`own offset ${skewUs > 0 ? '+' : ''}${skewUs / 1000} ms off: the stamps are off by it and the must-survive sets change`, async () => {
      const s = await session(skewUs, null);
      expect(s.records.map((r) => r.op)).toEqual(Array.from({ length: CYCLES }, () => ['write', 'flush']).flat());
      const lead = stampLeadUs(s);
      expect(Math.abs(lead - skewUs)).toBeLessThan(5000);
      const points = mustSurvive(s).filter((p) => p.kind !== 'end');
      const changed = points.filter((p) => JSON.stringify(p.got) !== JSON.stringify(p.expected));
      console.log(`own offset ${skewUs} us off: stamps lead the harness by ${lead} us (median); ${changed.length} of ${points.length} crash points' must-survive sets changed`);
      expect(changed.length).toBeGreaterThanOrEqual(points.length / 2);
      for (const p of changed) {
        // Late stamps: acknowledgements made after the point count as must-survive (false losses); early ones drop real ones (hidden losses).
        if (skewUs > 0) expect(p.got.length).toBeGreaterThan(p.expected.length);
        else expect(p.got.length).toBeLessThan(p.expected.length);
      }
    });

    it(`own offset ${skewUs > 0 ? '+' : ''}${skewUs / 1000} ms off, the harness's passed: the stamps lie in the harness's windows and no must-survive set changes`, async () => {
      const s = await session(skewUs);
      expect(s.records).toHaveLength(2 * CYCLES);
      s.records.forEach((r, i) => {
        const [t0, t1] = s.windows[i]!;
        expect(r.submitUs).toBeGreaterThanOrEqual(t0);
        expect(r.completeUs).toBeGreaterThanOrEqual(r.submitUs);
        expect(r.completeUs).toBeLessThanOrEqual(t1);
      });
      const points = mustSurvive(s);
      console.log(`own offset ${skewUs} us off, harness offset passed: stamps lead the harness by ${stampLeadUs(s)} us (median); ${points.length} crash points checked`);
      // The end, and before and after each FLUSH (the last one's "after" is the end).
      expect(points.length).toBe(2 * CYCLES);
      for (const p of points) expect(p.got, `${p.kind} point at log position ${p.position}`).toEqual(p.expected);
    });
  }
});
