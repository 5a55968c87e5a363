// A full disk under a partition, for real (a 4 MiB ext4 image over a loop device, as
// engine/storage/enospc.test.ts): the broker's storage error log names the cause once, with the
// errno and the segment file, however many produces the offline log refuses afterwards.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerError, Partition } from '../replication/index.ts';
import { makeBatch, mountSmallExt4, removeTmpDirs, type SmallFs } from '../storage/testing.ts';
import { missingRequirement } from '../../test/requirements.ts';
import { parseStorageErrorLine, StorageErrorLog } from './storage-error-log.ts';

let small: SmallFs;

beforeAll(() => {
  small = mountSmallExt4(4);
});

afterAll(() => {
  small.unmount?.();
  removeTmpDirs();
});

describe('storage error log', () => {
  it('an ENOSPC on append is logged once, with the errno, the segment file, the log dir and the time', async (ctx) => {
    if (!small.dir) missingRequirement(ctx, small.failure ?? 'a loop-mounted ext4 filesystem');
    const lines: string[] = [];
    const errors = new StorageErrorLog((l) => lines.push(l));
    const p = Partition.open({
      topic: 't',
      partition: 0,
      brokerId: 1,
      dataDir: small.dir!,
      logConfig: {},
      minInsyncReplicas: 1,
      replicaLagTimeMaxMs: 10_000,
      proposeIsr: async () => {
        throw new Error('no ISR change expected');
      },
      onStorageError: (e) => errors.note(e),
    });
    p.applyAssignment({ topic: 't', partition: 0, replicas: [1], leader: 1, leaderEpoch: 0, partitionEpoch: 0, isr: [1] });
    const refused: string[] = [];
    const t0 = Date.now();
    for (let i = 0; i < 200; i++) {
      try {
        await p.appendAsLeader(makeBatch(i, { valueBytes: 60_000 }), { acks: 1, timeoutMs: 1000 });
      } catch (e) {
        refused.push((e as BrokerError).code);
      }
    }
    p.close();
    // The disk filled part way: many produces refused, all as KAFKA_STORAGE_ERROR.
    expect(refused.length).toBeGreaterThan(50);
    expect(new Set(refused)).toEqual(new Set(['KAFKA_STORAGE_ERROR']));
    // One line for them all, naming ENOSPC on the segment file and the offline log dir.
    expect(lines).toHaveLength(1);
    const dir = path.join(small.dir!, 't-0');
    expect(lines[0]).toContain(`KAFKA_STORAGE_ERROR: ENOSPC on ${path.join(dir, '00000000000000000000.log')} at `);
    expect(lines[0]).toContain(`(log dir ${dir} is offline until the broker restarts)`);
    const cause = parseStorageErrorLine(`[broker 1] ${lines[0]}`);
    expect(cause).toMatchObject({ errno: 'ENOSPC', file: path.join(dir, '00000000000000000000.log'), dir });
    expect(cause!.atMs).toBeGreaterThanOrEqual(t0);
    expect(cause!.atMs).toBeLessThanOrEqual(Date.now());
    // Counted: the moment the log went offline, then every refused produce.
    expect(Object.values(errors.counts())).toEqual([refused.length + 1]);
  });

  it('different causes and log dirs get a line each; a line without an errno still parses', () => {
    const lines: string[] = [];
    const errors = new StorageErrorLog((l) => lines.push(l));
    errors.note(new BrokerError('KAFKA_STORAGE_ERROR', 'a', { errno: 'EIO', dir: '/d/t-0', file: '/d/t-0/x.log', atMs: 0 }));
    errors.note(new BrokerError('KAFKA_STORAGE_ERROR', 'b', { errno: 'EIO', dir: '/d/t-0', file: '/d/t-0/y.log', atMs: 5 }));
    errors.note(new BrokerError('KAFKA_STORAGE_ERROR', 'c', { errno: 'EIO', dir: '/d/t-1', atMs: 7 }));
    errors.note(new BrokerError('KAFKA_STORAGE_ERROR', 'd', { errno: 'ENOSPC', file: '/d/t-0/replication-offset-checkpoint' }));
    errors.note(new BrokerError('KAFKA_STORAGE_ERROR', 'internal error: x'));
    expect(lines).toHaveLength(4);
    expect(parseStorageErrorLine(lines[0]!)).toEqual({ errno: 'EIO', file: '/d/t-0/x.log', dir: '/d/t-0', atMs: 0 });
    expect(parseStorageErrorLine(lines[1]!)).toEqual({ errno: 'EIO', file: '/d/t-1', dir: '/d/t-1', atMs: 7 });
    expect(parseStorageErrorLine(lines[2]!)).toMatchObject({ errno: 'ENOSPC', dir: '/d/t-0' });
    expect(parseStorageErrorLine(lines[3]!)).toMatchObject({ errno: null, file: 'an unnamed file', dir: null });
    expect(parseStorageErrorLine('[broker 1] t-0: opened in /d')).toBeNull();
  });
});
