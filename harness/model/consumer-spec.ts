// `workload.consumers:` — the consumer groups of a workload. A group reads every partition of
// the topic once, with a Kafka consumer's fetch settings, from where it starts (the log end: a
// tailing consumer; the log start; or N records behind the log end: a lagging one), `startAt`
// seconds into the load. Its membership says how it gets its partitions:
//   assigned  one consumer (one fetch loop, its own connection) per partition, with assigned
//             partitions, no group coordinator involved (harness/drivers/kafka/tail-consumer.ts);
//   group     `count` members join a consumer group through the group coordinator, which
//             assigns them the partitions; they commit their offsets every second
//             (harness/drivers/kafka/group-consumer.ts, @platformatic/kafka's Consumer). A new
//             group starts where auto.offset.reset says: tail or earliest (lag:N is refused).
import * as z from 'zod';
import { leaf } from './zod-leaf.ts';
import { parseDuration } from './units.ts';

export type ConsumerStart = { from: 'latest' } | { from: 'earliest' } | { from: 'lag'; records: number };

export interface ConsumerSpec {
  name: string;
  start: ConsumerStart;
  'fetch.max.bytes': number;
  'fetch.min.bytes': number;
  'fetch.max.wait.ms': number;
  /** Seconds after the load starts (warm-up included). */
  startAt: number;
  membership: ConsumerMembership;
  /** Members of a `group` (1 for `assigned`, whose consumers are one per partition). */
  count: number;
}

export const CONSUMER_MEMBERSHIPS = ['assigned', 'group'] as const;
export type ConsumerMembership = (typeof CONSUMER_MEMBERSHIPS)[number];


const START = /^(tail|earliest|lag:([1-9]\d*))$/;

const int = (min: number, max: number, what: string) =>
  leaf<number>(`${what}: an integer from ${min} to ${max}`, (v) => (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : undefined));

export const consumerSchema = z.strictObject({
  name: leaf<string>('a name of letters, digits, . _ -', (v) => (typeof v === 'string' && /^[A-Za-z0-9._-]{1,40}$/.test(v) ? v : undefined)).optional(),
  start: leaf<ConsumerStart>('tail (the log end) | earliest (the log start) | lag:N (N records behind the log end)', (v) => {
    const m = typeof v === 'string' ? START.exec(v) : null;
    if (!m) return undefined;
    if (m[1] === 'tail') return { from: 'latest' };
    if (m[1] === 'earliest') return { from: 'earliest' };
    const n = Number(m[2]);
    return Number.isSafeInteger(n) ? { from: 'lag', records: n } : undefined;
  }),
  // 0 would never let a fetch return anything; the broker's limit is checked per target (scenario check).
  'fetch.max.bytes': int(1, 2 ** 31 - 1, 'bytes per fetch').default(52_428_800),
  'fetch.min.bytes': int(1, 2 ** 31 - 1, 'bytes a fetch waits for').default(1),
  'fetch.max.wait.ms': int(0, 60_000, 'ms a fetch waits').default(500),
  startAt: leaf<number>('a duration >= 0 into the load (seconds, or a string like 500ms, 5s)', (v) => {
    const s = parseDuration(v, 1000);
    return s !== undefined && s >= 0 ? s : undefined;
  }).default(0),
  membership: leaf<ConsumerMembership>('assigned (one consumer per partition, no coordinator) | group (count members through the group coordinator)', (v) =>
    typeof v === 'string' && (CONSUMER_MEMBERSHIPS as readonly string[]).includes(v) ? (v as ConsumerMembership) : undefined,
  ).default('assigned'),
  count: int(1, 64, 'members of the group (membership: group)').optional(),
});

export const consumersSchema = z.array(consumerSchema).max(16).default([]);

export function consumerSpecs(parsed: Array<z.infer<typeof consumerSchema>>): ConsumerSpec[] {
  return parsed.map((c, i) => ({ ...c, name: c.name ?? `consumers-${i + 1}`, count: c.count ?? 1 }));
}

export function startText(s: ConsumerStart): string {
  return s.from === 'latest' ? 'tail' : s.from === 'earliest' ? 'earliest' : `lag:${s.records}`;
}
