// Random sequences of appends, truncations, flushes, clean reopens and crashes, checked
// against a plain list of the batches that should be in the log.
import fs from 'node:fs';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { iterateBatches } from '../records/index.ts';
import { Log, recoverLog, type LogConfig } from './index.ts';
import { makeBatch, removeTmpDirs, tmpDir } from './testing.ts';

afterAll(removeTmpDirs);

type Op =
  | { kind: 'append'; records: number; valueBytes: number }
  | { kind: 'truncate'; frac: number }
  | { kind: 'flush' }
  | { kind: 'reopen' }
  | { kind: 'crash' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('append' as const), records: fc.integer({ min: 1, max: 5 }), valueBytes: fc.integer({ min: 1, max: 1500 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), frac: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'flush' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reopen' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'crash' as const }) },
);

interface ModelBatch {
  base: number;
  last: number;
  bytes: Buffer;
}

describe('Log against a model', () => {
  it('keeps exactly the appended batches through rolls, truncations, reopens and crashes (buffered and direct)', () => {
    fc.assert(
      fc.property(fc.constantFrom<LogConfig['io']>('buffered', 'direct'), fc.array(opArb, { minLength: 5, maxLength: 40 }), (io, ops) => {
        const dir = tmpDir('durolab-model-');
        const cfg: Partial<LogConfig> = { io, segmentBytes: 10_000, indexIntervalBytes: 700, segmentIndexBytes: 96 };
        let log = Log.open(dir, cfg);
        const model: ModelBatch[] = [];
        const leo = (): number => (model.length === 0 ? 0 : model[model.length - 1].last + 1);
        let seed = 0;
        try {
          for (const op of ops) {
            if (op.kind === 'append') {
              const b = makeBatch(seed++, { records: op.records, valueBytes: op.valueBytes });
              const r = log.append(b);
              expect(r.baseOffset).toBe(leo());
              model.push({ base: r.baseOffset, last: r.lastOffset, bytes: Buffer.from(b) });
            } else if (op.kind === 'truncate') {
              const to = Math.floor(op.frac * leo());
              log.truncateTo(to);
              // The cut is at the start of the batch holding `to`.
              while (model.length > 0 && model[model.length - 1].last >= to) model.pop();
            } else if (op.kind === 'flush') {
              log.flush();
            } else if (op.kind === 'reopen') {
              log.close();
              log = Log.open(dir, cfg);
              expect(log.recovery.cleanShutdown).toBe(true);
            } else {
              log.abandon();
              log = Log.open(dir, cfg);
              expect(log.recovery.bytesTruncated).toBe(log.recovery.zeroTailBytes);
            }
            expect(log.logEndOffset).toBe(leo());
          }
          const all = log.read(0, 1 << 30).data;
          expect(all.equals(Buffer.concat(model.map((m) => m.bytes)))).toBe(true);
          for (const m of model) {
            const one = [...iterateBatches(log.read(m.last, 0).data)];
            expect(one.length).toBe(1);
            expect(one[0].header.baseOffset).toBe(m.base);
          }
          for (const s of log.segmentInfos()) expect(fs.statSync(s.logPath).size).toBeGreaterThanOrEqual(s.sizeBytes);
          log.close();
          // Every byte on disk validates, and the files hold nothing past the model.
          const full = recoverLog(dir, cfg, { full: true });
          expect([full.logEndOffset, full.bytesTruncated, full.batchesValidated]).toEqual([leo(), 0, model.length]);
        } finally {
          log.close();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 30 },
    );
  });
});
