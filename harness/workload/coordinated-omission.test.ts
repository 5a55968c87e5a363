// Coordinated omission, proven against a real broker process: a fixed-rate load while the
// broker is frozen (SIGSTOP ... SIGCONT). The load generator keeps one request in flight per
// connection, so during the freeze it simply stops sending: the raw histogram holds one slow
// sample per connection among a thousand fast ones, and its p99 does not see the freeze. The
// corrected histogram adds the samples the schedule was owed (HdrHistogram's
// recordValueWithExpectedInterval), and its p99 does.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrokerProcess, tempDir, type BrokerProcess } from '../../engine/server/test-support.ts';
import { BatchFactory } from './batch-factory.ts';
import { AckLedger } from './ledger.ts';
import { loadDriver } from '../drivers/registry.ts';
import type { ProduceResult } from '../drivers/types.ts';

let dir: string;
let broker: BrokerProcess;

beforeAll(async () => {
  dir = tempDir('co-test');
  broker = await startBrokerProcess(['--id', '1', '--data', dir, '--listen', '127.0.0.1:0', '--topic', 'co:1']);
});

afterAll(async () => {
  if (broker) {
    process.kill(broker.pid, 'SIGCONT');
    broker.kill('SIGTERM');
    await broker.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('coordinated-omission correction (fixed rate, broker frozen by SIGSTOP)', () => {
  it('corrected p99 >= 500 ms while the raw p99 stays below it', async () => {
    // Why these numbers. 2 connections at 200 batches/s: each connection is owed one request
    // every 10 ms (the expected interval). Over 6 s that is ~1,200 samples, so 1% is ~12.
    // Raw: during the freeze each connection waits on one request, so at most 2 samples (0.2%)
    // are slow: raw p99 is a normal loopback latency (a few ms), far below 500 ms.
    // Corrected: a request stalled for v ms is followed by synthetic samples v-10, v-20, ...
    // ms, never more than v; so for corrected samples to reach 500 ms the freeze must last
    // longer than 500 ms (a freeze of exactly 500 ms makes at most the 2 in-flight requests
    // reach it, too few for any p99). The broker is frozen for 1,000 ms: each connection then
    // owes ~50 samples >= 500 ms, ~100 of ~1,300 (7%) — p99 >= 500 ms with a wide margin even
    // if the freeze starts mid-interval or the rate sags on this 2-core machine.
    const freezeMs = 1000;
    const ledger = new AckLedger({ recordsPerBatch: 2, producerIdBase: 11_000, partitions: [0] });
    const factory = new BatchFactory({ recordBytes: 64, recordsPerBatch: 2 });
    let frozenAt = 0;
    let thawedAt = 0;
    const freezer = setTimeout(() => {
      frozenAt = Date.now();
      process.kill(broker.pid, 'SIGSTOP');
      setTimeout(() => {
        process.kill(broker.pid, 'SIGCONT');
        thawedAt = Date.now();
      }, freezeMs);
    }, 2000);
    const client = (await loadDriver('http')).connect(
      { brokers: [{ id: 1, url: broker.url, dataDir: dir }], leaderId: () => 1 },
      { dataOnHost: true },
    );
    let r: ProduceResult;
    try {
      r = await client.produce({
        leaders: new Map([[0, 1]]),
        topic: 'co',
        acks: 1,
        timeoutMs: 10_000,
        connections: 2,
        pipelining: 1,
        rate: 200,
        warmupSec: 0,
        durationSec: 6,
        ledger,
        factory,
      });
    } finally {
      clearTimeout(freezer);
      process.kill(broker.pid, 'SIGCONT');
    }
    expect(thawedAt - frozenAt).toBeGreaterThanOrEqual(freezeMs);
    expect(r.errors).toEqual({});
    const raw = r.latencyUs;
    const corrected = r.correctedLatencyUs!;
    expect(corrected).not.toBeNull();
    const rawP99 = raw.getValueAtPercentile(99);
    const correctedP99 = corrected.getValueAtPercentile(99);
    const line = `raw p99 ${rawP99} µs (max ${raw.maxValue} µs, ${raw.totalCount} samples); corrected p99 ${correctedP99} µs (${corrected.totalCount} samples)`;
    console.log(line);
    // The freeze is in the raw samples too (as the max), just not in their p99.
    expect(raw.maxValue, line).toBeGreaterThanOrEqual(500_000);
    expect(raw.totalCount, line).toBeGreaterThan(600);
    expect(rawP99, line).toBeLessThan(500_000);
    expect(correctedP99, line).toBeGreaterThanOrEqual(500_000);
  }, 30_000);
});
