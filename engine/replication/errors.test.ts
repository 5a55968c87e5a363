import { describe, expect, it } from 'vitest';
import { StorageError } from '../storage/index.ts';
import { brokerErrorFromStorage } from './errors.ts';

describe('storage errors as the broker answers them', () => {
  it('maps each storage error kind to its Kafka name and HTTP status, keeping message and details', () => {
    const cases = [
      [new StorageError('offline', 'append: log /d is offline', { dir: '/d', errno: 'ENOSPC' }), 'KAFKA_STORAGE_ERROR', 500],
      [new StorageError('unreadable', 'read at offset 3: short'), 'KAFKA_STORAGE_ERROR', 500],
      [new StorageError('corrupt-batch', 'crc-mismatch; nothing was written', { reason: 'crc-mismatch' }), 'CORRUPT_MESSAGE', 400],
      [new StorageError('too-large', 'batch of 9 bytes exceeds 8', { size: 9, limit: 8 }), 'MESSAGE_TOO_LARGE', 413],
      [new StorageError('out-of-range', 'read at offset 9', { logStartOffset: 0, logEndOffset: 5 }), 'OFFSET_OUT_OF_RANGE', 416],
      [new StorageError('invalid-argument', 'append takes a Buffer'), 'INVALID_REQUEST', 400],
    ] as const;
    for (const [storageError, name, status] of cases) {
      const be = brokerErrorFromStorage(storageError);
      expect(be.code).toBe(name);
      expect(be.httpStatus).toBe(status);
      expect(be.toJSON()).toEqual({ error: name, message: storageError.message, ...storageError.details });
    }
  });
});
