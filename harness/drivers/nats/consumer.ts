// Driver nats's read-back for the checker: every message of the topic's stream, from its first
// sequence to the last one the stream leader reports, through an ordered consumer (an ephemeral
// consumer the stream's leader serves, recreated by the client on a gap), cut into ledger
// batches by identity (IdentityRuns: consecutive sequences of one ledger producer at consecutive
// offsets). A message whose payload fails its CRC or disagrees with its header is corrupt.
import { DeliverPolicy, jetstream } from '@nats-io/jetstream';
import type { ConsumeOptions, ConsumedPartition, DriverCluster, ServedBatch } from '../types.ts';
import { IdentityRuns } from '../kafka/identity.ts';
import { NATS_ID_HEADER, checkedPayload, parseIdentity } from './message.ts';
import { connectNats, jetstreamManager, natsStreamInfo, natsStreamName, onlyPartition } from './stream.ts';
import { natsServers } from './producer.ts';

/** The NATS client's own request timeout (a JetStream API call no server answered in time). */
function isRequestTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === 'TimeoutError' || err.message === 'timeout');
}

/**
 * The read-back, asked again while a JetStream API request times out (a stream leader that was
 * just paused or elected may leave the first requests unanswered), within the read's time budget.
 */
export async function consumeNatsStream(cluster: DriverCluster, o: ConsumeOptions): Promise<ConsumedPartition> {
  onlyPartition(o.topic, o.partition);
  const leader = cluster.leaderId(o.topic, o.partition);
  if (o.brokerId !== undefined && o.brokerId !== leader) {
    throw new Error(`nats driver: reading ${o.topic} from broker ${o.brokerId} is not given by driver nats (a JetStream consumer reads from the stream's leader, now ${leader ?? 'none'})`);
  }
  const budgetMs = o.timeoutMs ?? 120_000;
  const deadline = Date.now() + budgetMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await readStreamOnce(cluster, o, Math.max(1000, deadline - Date.now()));
    } catch (err) {
      if (!isRequestTimeout(err) || Date.now() + 1000 >= deadline) {
        throw attempt > 1 && err instanceof Error ? new Error(`${err.message} (attempt ${attempt}, within ${budgetMs} ms)`) : err;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function readStreamOnce(cluster: DriverCluster, o: ConsumeOptions, timeoutMs: number): Promise<ConsumedPartition> {
  const nc = await connectNats(natsServers(cluster), 'durolab-check');
  try {
    const jsm = await jetstreamManager(nc, { timeout: 5000 });
    const info = await natsStreamInfo(jsm, o.topic);
    if (info === null) throw new Error(`nats driver: stream ${natsStreamName(o.topic)} of topic ${o.topic} does not exist`);
    const { first_seq: first, last_seq: last, messages } = info.state;
    const batches: ServedBatch[] = [];
    let corrupt = 0;
    if (messages > 0) {
      const consumer = await jetstream(nc).consumers.get(natsStreamName(o.topic), { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: first });
      const runs = new IdentityRuns(batches);
      const deadline = Date.now() + timeoutMs;
      const iter = await consumer.consume({ max_messages: 1000 });
      const guard = setTimeout(() => void iter.close(), timeoutMs).unref();
      let seen = 0;
      try {
        for await (const m of iter) {
          const header = parseIdentity(m.headers?.get(NATS_ID_HEADER));
          const id = checkedPayload(m.data, header);
          if (id === null && header !== null) corrupt++;
          else runs.add(m.seq, id);
          seen = m.seq;
          if (m.seq >= last) break;
        }
      } finally {
        clearTimeout(guard);
        await iter.close().catch(() => undefined);
      }
      runs.end();
      if (seen < last) throw new Error(`nats driver: reading stream ${natsStreamName(o.topic)} stopped at sequence ${seen} of ${last} after ${timeoutMs} ms${Date.now() >= deadline ? ' (timed out)' : ''}`);
    }
    // The stream's high watermark in Kafka's terms: the offset (sequence) after its last message.
    return { partition: o.partition, batches, corrupt, highWatermark: last + 1 };
  } finally {
    await nc.close().catch(() => undefined);
  }
}
