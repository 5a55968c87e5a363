import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LEADER_EPOCH_CHECKPOINT_FILE, LeaderEpochCache, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET } from './leader-epoch-cache.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-epoch-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const UNDEF = { leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };

describe('LeaderEpochCache', () => {
  it('assigns increasing epochs once and ignores non-increasing ones', () => {
    let leo = 0;
    const c = new LeaderEpochCache(null, () => leo);
    expect(c.assign(0, 0)).toBe(true);
    expect(c.assign(0, 5)).toBe(false);
    expect(c.assign(2, 10)).toBe(true);
    expect(c.assign(1, 12)).toBe(false);
    expect(c.assign(2, 11)).toBe(false);
    leo = 20;
    expect(c.entries).toEqual([
      { epoch: 0, startOffset: 0 },
      { epoch: 2, startOffset: 10 },
    ]);
    expect(c.latestEpoch).toBe(2);
  });

  it('a new epoch that starts at or before later entries drops them (an epoch that wrote nothing)', () => {
    const c = new LeaderEpochCache(null, () => 10, [
      { epoch: 1, startOffset: 0 },
      { epoch: 3, startOffset: 10 },
    ]);
    c.assign(4, 10);
    expect(c.entries).toEqual([
      { epoch: 1, startOffset: 0 },
      { epoch: 4, startOffset: 10 },
    ]);
  });

  it('endOffsetFor follows KIP-279', () => {
    let leo = 30;
    const c = new LeaderEpochCache(null, () => leo, [
      { epoch: 1, startOffset: 5 },
      { epoch: 3, startOffset: 10 },
      { epoch: 6, startOffset: 20 },
    ]);
    expect(c.endOffsetFor(UNDEFINED_EPOCH)).toEqual(UNDEF);
    // latest epoch: the LEO
    expect(c.endOffsetFor(6)).toEqual({ leaderEpoch: 6, endOffset: 30 });
    leo = 31;
    expect(c.endOffsetFor(6)).toEqual({ leaderEpoch: 6, endOffset: 31 });
    // known epoch: start of the next one
    expect(c.endOffsetFor(3)).toEqual({ leaderEpoch: 3, endOffset: 20 });
    expect(c.endOffsetFor(1)).toEqual({ leaderEpoch: 1, endOffset: 10 });
    // unknown epoch between known ones: the largest known below it, and the start of the next
    expect(c.endOffsetFor(2)).toEqual({ leaderEpoch: 1, endOffset: 10 });
    expect(c.endOffsetFor(5)).toEqual({ leaderEpoch: 3, endOffset: 20 });
    // below every known epoch: where the first known one starts
    expect(c.endOffsetFor(0)).toEqual({ leaderEpoch: 0, endOffset: 5 });
    // above every known epoch
    expect(c.endOffsetFor(7)).toEqual(UNDEF);
    expect(new LeaderEpochCache(null, () => 0).endOffsetFor(0)).toEqual(UNDEF);
  });

  it('truncateFromEnd and truncateFromStart', () => {
    const c = new LeaderEpochCache(null, () => 40, [
      { epoch: 1, startOffset: 0 },
      { epoch: 2, startOffset: 10 },
      { epoch: 4, startOffset: 20 },
    ]);
    c.truncateFromEnd(21);
    expect(c.entries.map((e) => e.epoch)).toEqual([1, 2, 4]);
    c.truncateFromEnd(20);
    expect(c.entries.map((e) => e.epoch)).toEqual([1, 2]);
    c.truncateFromStart(12);
    expect(c.entries).toEqual([{ epoch: 2, startOffset: 12 }]);
    c.truncateFromStart(5);
    expect(c.entries).toEqual([{ epoch: 2, startOffset: 12 }]);
  });

  it('checkpoint file: Kafka layout, survives reopen, written on every change', () => {
    const leo = 50;
    const c = LeaderEpochCache.open(dir, () => leo);
    expect(c.isEmpty).toBe(true);
    expect(fs.existsSync(path.join(dir, LEADER_EPOCH_CHECKPOINT_FILE))).toBe(false);
    c.assign(0, 0);
    c.assign(3, 17);
    const text = fs.readFileSync(path.join(dir, LEADER_EPOCH_CHECKPOINT_FILE), 'utf8');
    expect(text).toBe('0\n2\n0 0\n3 17\n');
    expect(fs.existsSync(path.join(dir, `${LEADER_EPOCH_CHECKPOINT_FILE}.tmp`))).toBe(false);
    const again = LeaderEpochCache.open(dir, () => leo);
    expect(again.entries).toEqual(c.entries);
    expect(again.endOffsetFor(0)).toEqual({ leaderEpoch: 0, endOffset: 17 });
    again.truncateFromEnd(17);
    expect(LeaderEpochCache.open(dir, () => leo).entries).toEqual([{ epoch: 0, startOffset: 0 }]);
  });

  it('a malformed checkpoint is an error naming the file and line', () => {
    const file = path.join(dir, LEADER_EPOCH_CHECKPOINT_FILE);
    fs.writeFileSync(file, '0\n2\n0 0\n');
    expect(() => LeaderEpochCache.open(dir, () => 0)).toThrow(/leader-epoch-checkpoint: line 2 says 2 entries but the file has 1/);
    fs.writeFileSync(file, '0\n1\n0 x\n');
    expect(() => LeaderEpochCache.open(dir, () => 0)).toThrow(/line 3: expected the start offset/);
    fs.writeFileSync(file, '1\n0\n');
    expect(() => LeaderEpochCache.open(dir, () => 0)).toThrow(/line 1: expected version 0/);
    fs.writeFileSync(file, '0\n2\n3 10\n2 20\n');
    expect(() => LeaderEpochCache.open(dir, () => 0)).toThrow(/line 4: entries must increase/);
  });
});
