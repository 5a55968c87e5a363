// The kafka driver's workload consumer (workload.consumers): Fetch long polls (fetch.max.bytes,
// fetch.min.bytes, fetch.max.wait.ms, as a Kafka consumer sends them) from the partition's
// leader, from where the consumer starts to the end of the load, each answer timed and handed
// over with its batches by ledger identity. A leader that moves is found again through
// Metadata; an offset out of range (the log start moved past it, or it is beyond the log end)
// is reset as auto.offset.reset=earliest would and counted.
import { KafkaWire, KafkaWireError } from './wire.ts';
import { currentLeader, leaderMoved, type LeaderContext } from './leader.ts';
import { servedByIdentity } from './identity.ts';
import type { TailOptions } from '../types.ts';

export async function tailOverKafka(ctx: LeaderContext, o: TailOptions): Promise<void> {
  const timeoutMs = Math.max(30_000, o.fetch.maxWaitMs + 10_000);
  let wire = new KafkaWire(ctx.addressOf((await currentLeader(ctx.bootstrap, o.topic, o.partition)).leader), timeoutMs);
  /** A new connection to the leader Metadata names now (after NOT_LEADER_OR_FOLLOWER or a closed connection). */
  const reconnect = async () => {
    wire.close();
    wire = new KafkaWire(ctx.addressOf((await currentLeader(ctx.bootstrap, o.topic, o.partition)).leader), timeoutMs);
  };
  try {
    let position = -1;
    // A partition that was just created may not serve yet on its leader: ask again, bounded.
    for (let attempt = 0; position < 0; attempt++) {
      try {
        if (o.start.from === 'earliest') position = await wire.listOffset(o.topic, o.partition, -2);
        else {
          const hw = await wire.listOffset(o.topic, o.partition, -1);
          const logStart = await wire.listOffset(o.topic, o.partition, -2);
          position = o.start.from === 'latest' ? hw : Math.max(logStart, hw - o.start.records);
        }
      } catch (err) {
        if (attempt >= 50 || o.signal.aborted || !(leaderMoved(err) || (err instanceof KafkaWireError && err.errorName === 'NETWORK_EXCEPTION'))) throw err;
        await new Promise((r) => setTimeout(r, 100));
        await reconnect();
      }
    }
    while (!o.signal.aborted) {
      const t0 = process.hrtime.bigint();
      let f;
      try {
        f = await wire.fetch(o.topic, o.partition, position, o.fetch.maxBytes, { maxWaitMs: o.fetch.maxWaitMs, minBytes: o.fetch.minBytes });
      } catch (err) {
        if (o.signal.aborted) break;
        if (err instanceof KafkaWireError && err.errorName === 'OFFSET_OUT_OF_RANGE') {
          const from = position;
          position = await wire.listOffset(o.topic, o.partition, -2);
          o.onOffsetReset?.(from, position);
          continue;
        }
        if (!leaderMoved(err) && !(err instanceof KafkaWireError && err.errorName === 'NETWORK_EXCEPTION')) throw err;
        await reconnect();
        continue;
      }
      const latencyUs = Number((process.hrtime.bigint() - t0) / 1000n);
      const served = servedByIdentity(f.records, { partialTail: true });
      // Everything served counts, also a batch at or above the HW the answer reports (Kafka read
      // the log up to its HW and reported it after another append): the position moves past it.
      const batches = served.batches.filter((b) => b.lastOffset >= position);
      const bytes = served.spans.reduce((a, s) => a + s.size, 0);
      o.onFetch({ latencyUs, atMs: Date.now(), bytes, batches, corrupt: served.corrupt, highWatermark: f.highWatermark, position });
      const last = served.raw[served.raw.length - 1];
      if (last && served.corrupt === 0) position = last.lastOffset + 1;
      else if (served.corrupt > 0) break;
    }
  } finally {
    wire.close();
  }
}
