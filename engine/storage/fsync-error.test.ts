// fsync errors, like Kafka: a failed fdatasync takes the log offline (log.fsync.error=fail-stop,
// the default): the failing append is not acknowledged, nothing after it either, until the log
// is reopened. log.fsync.error=retry keeps the unsafe behaviour for comparison: the failure is
// retried and the append acknowledged when the retry succeeds. The EIO comes from the writer's
// test seam (injectedSyncFailures); the VM test (harness/disk/nbd.vm.test.ts) gets a real one
// from the guest kernel through the NBD disk's injected write error.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Log } from './index.ts';
import { StorageError } from './errors.ts';
import { injectedSyncFailures } from './segment-writer.ts';
import { resolveLogConfig } from './config.ts';
import { makeBatch, removeTmpDirs, tmpDir } from './testing.ts';

afterAll(removeTmpDirs);
afterEach(() => {
  injectedSyncFailures.failNext = 0;
});

describe('log.fsync.error', () => {
  it('defaults to fail-stop and rejects anything else, naming the setting', () => {
    expect(resolveLogConfig().fsyncError).toBe('fail-stop');
    expect(() => resolveLogConfig({ fsyncError: 'ignore' as never })).toThrow(/fsyncError \(log\.fsync\.error\) must be one of fail-stop, retry, got "ignore"/);
  });

  it('fail-stop: the failed flush is not acknowledged, the log refuses appends until reopened, reads keep working', () => {
    const dir = tmpDir();
    const log = Log.open(dir, { flush: { kind: 'per-batch' } });
    log.append(makeBatch(1));
    injectedSyncFailures.failNext = 1;
    let err: unknown;
    try {
      log.append(makeBatch(2));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).kind).toBe('offline');
    expect((err as Error).message).toMatch(/fdatasync of .*\.log failed: EIO/);
    expect(log.offlineReason).toMatch(/EIO/);
    // No retry happened, and the next append is refused though fsync would work again.
    expect(injectedSyncFailures.failNext).toBe(0);
    expect(() => log.append(makeBatch(3))).toThrow(/offline after an earlier I\/O error/);
    expect(log.stats().fsyncRetries).toBe(0);
    // Batch 2 was written before its flush failed: readable, never acknowledged.
    expect(log.read(0, 1 << 20).nextOffset).toBe(2);
    log.close();
    const again = Log.open(dir, { flush: { kind: 'per-batch' } });
    expect(again.offlineReason).toBeNull();
    again.append(makeBatch(4));
    again.close();
  });

  it('retry: the failed fdatasync is retried and the append acknowledged (the unsafe behaviour, counted)', () => {
    const log = Log.open(tmpDir(), { flush: { kind: 'per-batch' }, fsyncError: 'retry' });
    injectedSyncFailures.failNext = 1;
    const r = log.append(makeBatch(1));
    expect(r.records).toBe(1);
    expect(log.offlineReason).toBeNull();
    expect(log.stats()).toMatchObject({ fsyncRetries: 1, lastFsyncError: expect.stringMatching(/EIO.*retried \(log\.fsync\.error=retry\)/) });
    // A disk that keeps failing still takes it offline after the retries.
    injectedSyncFailures.failNext = 10;
    expect(() => log.append(makeBatch(2))).toThrow(/failed 3 times/);
    expect(log.offlineReason).not.toBeNull();
    log.close();
  });
});
