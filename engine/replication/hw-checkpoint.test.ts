import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HighWatermarkCheckpoint } from './hw-checkpoint.ts';

describe('HighWatermarkCheckpoint', () => {
  it('writes Kafka-style lines atomically and reads them back', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-hw-'));
    try {
      const cp = new HighWatermarkCheckpoint(dir, 'orders', 3);
      expect(cp.read()).toBeNull();
      expect(cp.write(42)).toBe(true);
      expect(cp.write(42)).toBe(false);
      expect(fs.readFileSync(cp.file, 'utf8')).toBe('0\n1\norders 3 42\n');
      expect(new HighWatermarkCheckpoint(dir, 'orders', 3).read()).toBe(42);
      expect(() => new HighWatermarkCheckpoint(dir, 'orders', 4).read()).toThrow(/no entry for orders-4/);
      fs.writeFileSync(cp.file, '0\n1\norders 3 -5\n');
      expect(() => cp.read()).toThrow(/high-watermark-checkpoint: line 3: expected the high watermark/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes in the background: one write at a time, and a synchronous write made meanwhile is never replaced by an older HW', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-hw-'));
    try {
      const cp = new HighWatermarkCheckpoint(dir, 'orders', 3);
      expect(await cp.writeInBackground(7)).toBe(true);
      expect(new HighWatermarkCheckpoint(dir, 'orders', 3).read()).toBe(7);
      expect(await cp.writeInBackground(7)).toBe(false);
      // Two started in the same turn: the second is skipped (the next tick writes the newer HW).
      const first = cp.writeInBackground(8);
      const second = cp.writeInBackground(9);
      expect(await second).toBe(false);
      expect(await first).toBe(true);
      expect(new HighWatermarkCheckpoint(dir, 'orders', 3).read()).toBe(8);
      // close() writes synchronously while a background write of an older HW is in flight.
      const background = cp.writeInBackground(10);
      expect(cp.write(11)).toBe(true);
      expect(await background).toBe(false);
      expect(new HighWatermarkCheckpoint(dir, 'orders', 3).read()).toBe(11);
      // A synchronous write of the HW already on disk still supersedes one in flight.
      const stale = cp.writeInBackground(12);
      expect(cp.write(11)).toBe(false);
      expect(await stale).toBe(false);
      expect(new HighWatermarkCheckpoint(dir, 'orders', 3).read()).toBe(11);
      expect(fs.readdirSync(dir).sort()).toEqual(['high-watermark-checkpoint']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
