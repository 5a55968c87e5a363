// A broker's recovery as run.json keeps it: the log-recovery figures summed over its partitions
// where the broker reports them (durolab's health, Kafka's log lines), absent where it reports
// none (NATS), never zeros that were not measured.
import { describe, expect, it } from 'vitest';
import { summarizeRecovery } from './recover.ts';

describe('summarizeRecovery', () => {
  it('sums what the broker reported per partition', () => {
    const part = (durationMs: number, bytesTruncated: number) => ({ topic: 't', partition: 0, cleanShutdown: false, bytesTruncated, batchesTruncated: bytesTruncated ? 1 : 0, durationMs });
    expect(summarizeRecovery({ brokerId: 2, restartMs: 900, partitions: [part(12.34, 0), part(30, 512)] })).toEqual({
      broker: 2,
      durationMs: 42.3,
      bytesTruncated: 512,
      batchesTruncated: 1,
      restartMs: 900,
      cleanShutdown: false,
    });
  });

  it('leaves the log-recovery figures out for a broker that reported none', () => {
    expect(summarizeRecovery({ brokerId: 1, restartMs: 9800, partitions: [] })).toEqual({ broker: 1, restartMs: 9800, cleanShutdown: false });
  });
});
