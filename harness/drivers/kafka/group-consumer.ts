// A member of a consumer group through the group coordinator (workload.consumers with
// `membership: group`): @platformatic/kafka's Consumer joins the group (FindCoordinator,
// JoinGroup, SyncGroup, heartbeats, OffsetCommit every second), gets its partitions from the
// group's assignment and fetches them from their leaders, as a real application's consumer
// does. Each Fetch it sends is seen through the library's diagnostics channel
// `plt:kafka:consumer:fetches`: request to answer timed, and per partition of the answer its
// batches (cut into ledger batches by the identity header), bytes, high watermark and the
// offset it was asked from, handed over as the assigned-partition consumer's answers are. The
// library parses the batches itself and does not check their CRCs, so a group member counts no
// corrupt batch (`corrupt` 0); the assigned-partition consumer and the checker's read-back do.
import diagnostics from 'node:diagnostics_channel';
import { Consumer, MessagesStreamFallbackModes, MessagesStreamModes } from '@platformatic/kafka';
import { IdentityRuns, ID_HEADER, decodeIdentity } from './identity.ts';
import type { GroupMemberOptions, ServedBatch } from '../types.ts';

const FETCHES_CHANNEL = 'plt:kafka:consumer:fetches';
const ID_KEY = Buffer.from(ID_HEADER);

interface FetchRequestPartition {
  partition: number;
  fetchOffset: bigint;
}
interface FetchAnswerBatch {
  firstOffset: bigint;
  length: number;
  records: Array<{ offsetDelta: number; headers: Array<[Buffer, Buffer]> }>;
}
interface FetchContext {
  client?: unknown;
  options?: { topics?: Array<{ topicId?: string; partitions?: FetchRequestPartition[] }> };
  result?: { responses?: Array<{ partitions?: Array<{ partitionIndex: number; errorCode: number; highWatermark: bigint; records?: FetchAnswerBatch[] }> }> };
  error?: unknown;
  durolabT0?: bigint;
}

/** Fetch answers by consumer instance: one channel subscription for the process. */
const watchers = new Map<unknown, (ctx: FetchContext, latencyUs: number) => void>();
let subscribed = false;

function subscribe(): void {
  if (subscribed) return;
  subscribed = true;
  diagnostics.tracingChannel(FETCHES_CHANNEL).subscribe({
    start(ctx: FetchContext) {
      if (watchers.has(ctx.client)) ctx.durolabT0 = process.hrtime.bigint();
    },
    end() {},
    asyncStart(ctx: FetchContext) {
      const watch = watchers.get(ctx.client);
      if (!watch || ctx.durolabT0 === undefined || ctx.error) return;
      watch(ctx, Number((process.hrtime.bigint() - ctx.durolabT0) / 1000n));
    },
    asyncEnd() {},
    error() {},
  } as unknown as Parameters<ReturnType<typeof diagnostics.tracingChannel>['subscribe']>[0]);
}

/** One Fetch answer's partition, as the workload's checks take it. */
function servedOf(batches: FetchAnswerBatch[], position: number): { batches: ServedBatch[]; bytes: number } {
  const out: ServedBatch[] = [];
  let bytes = 0;
  for (const b of batches) {
    bytes += 12 + b.length;
    const runs = new IdentityRuns(out);
    const base = Number(b.firstOffset);
    for (const r of b.records) {
      const offset = base + r.offsetDelta;
      if (offset < position) continue;
      const id = r.headers.find(([k]) => k.equals(ID_KEY))?.[1] ?? null;
      runs.add(offset, decodeIdentity(id));
    }
    runs.end();
  }
  return { batches: out, bytes };
}

/** Runs one group member until the signal; resolves once it has left the group. */
export async function groupMember(bootstrap: string[], o: GroupMemberOptions): Promise<void> {
  subscribe();
  const consumer = new Consumer<Buffer, Buffer, Buffer, Buffer>({
    clientId: o.memberName,
    groupId: o.groupId,
    bootstrapBrokers: bootstrap,
    // A dead member leaves the group after 10 s (the Java client: 45 s), heartbeats every 3 s.
    sessionTimeout: 10_000,
    heartbeatInterval: 3_000,
    rebalanceTimeout: 30_000,
    autocommit: 1_000,
    minBytes: o.fetch.minBytes,
    maxBytes: o.fetch.maxBytes,
    maxWaitTime: o.fetch.maxWaitMs,
    strict: true,
  });
  watchers.set(consumer, (ctx, latencyUs) => {
    const atMs = Date.now();
    const asked = new Map<number, number>();
    for (const t of ctx.options?.topics ?? []) for (const p of t.partitions ?? []) asked.set(p.partition, Number(p.fetchOffset));
    for (const t of ctx.result?.responses ?? []) {
      for (const p of t.partitions ?? []) {
        const position = asked.get(p.partitionIndex);
        if (position === undefined || p.errorCode !== 0) continue;
        const served = servedOf(p.records ?? [], position);
        o.onFetch(p.partitionIndex, { latencyUs, atMs, bytes: served.bytes, batches: served.batches, corrupt: 0, highWatermark: Number(p.highWatermark), position });
      }
    }
  });
  consumer.on('consumer:group:join', (e: { assignments?: Array<{ topic: string; partitions: number[] }> }) => {
    o.onAssignment?.((e.assignments ?? []).filter((a) => a.topic === o.topic).flatMap((a) => a.partitions));
  });
  try {
    const stream = await consumer.consume({
      topics: [o.topic],
      // A new group has no committed offsets: auto.offset.reset decides where it starts.
      mode: MessagesStreamModes.COMMITTED,
      fallbackMode: o.start === 'earliest' ? MessagesStreamFallbackModes.EARLIEST : MessagesStreamFallbackModes.LATEST,
    });
    await new Promise<void>((resolve, reject) => {
      const stop = () => resolve();
      if (o.signal.aborted) return resolve();
      o.signal.addEventListener('abort', stop, { once: true });
      // The messages themselves are read from the Fetch answers above; the stream is drained.
      stream.on('data', () => undefined);
      stream.once('error', (err: Error) => {
        o.signal.removeEventListener('abort', stop);
        reject(err);
      });
    });
    await stream.close();
  } finally {
    watchers.delete(consumer);
    // Leaves the group (LeaveGroup), closes its connections.
    await new Promise<void>((resolve) => consumer.close(true, () => resolve()));
  }
}
