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

  it("takes a broker's one log-loading time (Kafka) as its duration, and leaves out what no partition measured", () => {
    const kafka = (over: { logLoadMs?: number; bytes?: Array<number | undefined> } = {}) => ({
      brokerId: 3,
      restartMs: 5200,
      ...(over.logLoadMs !== undefined ? { logLoadMs: over.logLoadMs } : {}),
      partitions: (over.bytes ?? [100, 0]).map((b, partition) => ({ topic: 't', partition, cleanShutdown: false, ...(b !== undefined ? { bytesTruncated: b } : {}) })),
    });
    // Kafka gives one time for the node, none per partition: the node's, not a sum of made-up 0s.
    expect(summarizeRecovery(kafka({ logLoadMs: 3100 }))).toEqual({ broker: 3, durationMs: 3100, bytesTruncated: 100, restartMs: 5200, cleanShutdown: false });
    // No "Loaded N logs" line: the log recovery was not timed (the restart is restartMs, not the recovery).
    expect(summarizeRecovery(kafka())).toEqual({ broker: 3, bytesTruncated: 100, restartMs: 5200, cleanShutdown: false });
    // A partition whose truncation was not measured: the broker's sum would be partial, so none.
    expect(summarizeRecovery(kafka({ logLoadMs: 3100, bytes: [100, undefined] }))).toEqual({ broker: 3, durationMs: 3100, restartMs: 5200, cleanShutdown: false });
  });
});
