// A full disk, for real: a 4 MiB ext4 image mounted over a loop device (needs root, as on
// this project's machines and CI). When mounting fails the test fails under CI=true with the
// reason, and is skipped with the reason elsewhere (test/requirements.ts).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Log, type AppendResult, type IoMode } from './index.ts';
import type { StorageError } from './errors.ts';
import { makeBatch, mountSmallExt4, removeTmpDirs, type SmallFs } from './testing.ts';
import { missingRequirement } from '../../test/requirements.ts';

let small: SmallFs;
let mnt: string | null = null;

beforeAll(() => {
  small = mountSmallExt4(4);
  mnt = small.dir ?? null;
});

afterAll(() => {
  small.unmount?.();
  removeTmpDirs();
});

function fillUntilFull(io: IoMode, dir: string): { acked: AppendResult[]; batches: Buffer[]; error: unknown } {
  const offline: StorageError[] = [];
  const log = Log.open(dir, { io }, { onOffline: (e) => offline.push(e) });
  const acked: AppendResult[] = [];
  const batches: Buffer[] = [];
  let error: unknown = null;
  for (let i = 0; i < 200 && error === null; i++) {
    const b = makeBatch(i, { valueBytes: 60_000 });
    try {
      acked.push(log.append(b));
      batches.push(b);
    } catch (e) {
      error = e;
    }
  }
  expect(error).not.toBeNull();
  const info = log.segmentInfos()[0];
  const ackedBytes = acked.reduce((a, r) => a + r.bytes, 0);
  // The partial write was cut back: the file ends at the last acknowledged batch.
  expect(info.sizeBytes).toBe(ackedBytes);
  expect(fs.statSync(info.logPath).size).toBe(ackedBytes);
  expect(log.stats().failed).toMatch(/ENOSPC/);
  // The log went offline once, and said so with the errno and the segment file.
  expect(offline).toHaveLength(1);
  expect(offline[0]!.details).toMatchObject({ errno: 'ENOSPC', file: info.logPath, dir: log.dir, atMs: expect.any(Number) });
  // Offline until reopened, but readable.
  expect(() => log.append(makeBatch(999, { valueBytes: 10 }))).toThrow(expect.objectContaining({ kind: 'offline', message: expect.stringMatching(/offline/) }));
  expect(() => log.flush()).toThrow(/offline/);
  // Every refusal names the first cause; the hook heard of it once.
  expect(() => log.append(makeBatch(998, { valueBytes: 10 }))).toThrow(expect.objectContaining({ details: expect.objectContaining({ errno: 'ENOSPC', file: info.logPath }) }));
  expect(offline).toHaveLength(1);
  expect(log.read(0, 1 << 30).data.equals(Buffer.concat(batches))).toBe(true);
  log.close();
  return { acked, batches, error };
}

describe('disk full (ENOSPC)', () => {
  for (const io of ['buffered', 'direct'] as const) {
    it(`io=${io}: the append fails with a clear error, nothing acknowledged is damaged, the log reopens intact`, async (ctx) => {
      if (mnt === null) missingRequirement(ctx, small.failure ?? 'a loop-mounted ext4 filesystem');
      const filler = path.join(mnt, 'filler');
      fs.writeFileSync(filler, Buffer.alloc(256 * 1024, 1));
      const dir = path.join(mnt, `p-${io}`);
      const { acked, batches, error } = fillUntilFull(io, dir);
      expect(acked.length).toBeGreaterThan(5);
      expect(error).toMatchObject({ kind: 'offline', details: { errno: 'ENOSPC' } });
      expect((error as Error).message).toMatch(/append of \d+ bytes to .*00000000000000000000\.log at position \d+ failed \(the partial write was cut back to \d+ bytes\): ENOSPC/);
      // The operator frees space and restarts: no clean-shutdown marker, so recovery runs.
      fs.rmSync(filler);
      const again = Log.open(dir, { io });
      expect(again.recovery.cleanShutdown).toBe(false);
      expect(again.recovery.bytesTruncated).toBe(0);
      expect(again.logEndOffset).toBe(acked[acked.length - 1].lastOffset + 1);
      expect(again.read(0, 1 << 30).data.equals(Buffer.concat(batches))).toBe(true);
      // segment.ms counts from the first batch's timestamp (2023) after a reopen: this append rolls.
      again.append(makeBatch(1000, { valueBytes: 100 }));
      again.close();
      // The roll's background flush holds descriptors until it finishes: wait before removing and unmounting.
      await again.rollFlushesSettled();
      fs.rmSync(dir, { recursive: true });
    });
  }
});
