// A classic-protocol consumer-group coordinator, enough for kafkajs (which always consumes
// through a group) and any client that uses JoinGroup/SyncGroup. One coordinator per cluster:
// the live broker with the lowest id (FindCoordinator names it on every broker; the others
// answer group requests NOT_COORDINATOR, so clients look it up again after a failover).
//
// As Kafka's GroupCoordinator does: a JoinGroup moves the group to PreparingRebalance; the join
// completes when every known member has rejoined (or the rebalance timeout drops the ones that
// did not), with a new generation; the leader member gets the member list and protocol
// metadata, sends the assignment in its SyncGroup, and every member's SyncGroup answers with its
// own part. Heartbeats keep members alive (a member silent for its session timeout is removed
// and the group rebalances) and tell them REBALANCE_IN_PROGRESS when they must rejoin.
//
// Committed offsets are kept IN MEMORY only: they do not survive a restart of the coordinator
// broker or a move of the coordinator to another broker; a consumer then starts from its
// auto.offset.reset position (at-least-once consumers re-read, nothing is skipped with
// "earliest"). Not implemented: static membership (GroupInstanceId is ignored),
// group.initial.rebalance.delay.ms (a join completes as soon as every member rejoined),
// transactions' offset commits, DescribeGroups/ListGroups.
import { randomUUID } from 'node:crypto';
import { kafkaErrorCode, type ProtocolErrorName } from '../../protocol/error-codes.ts';
import type { Struct } from '../../protocol/schema.ts';

/** Kafka's group.min.session.timeout.ms and group.max.session.timeout.ms defaults. */
export const MIN_SESSION_TIMEOUT_MS = 6_000;
export const MAX_SESSION_TIMEOUT_MS = 1_800_000;
const CHECK_EVERY_MS = 200;

type State = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable';

interface Member {
  id: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: Array<{ Name: string; Metadata: Buffer }>;
  lastSeenMs: number;
  assignment: Buffer;
  joinWaiter: ((answer: Struct) => void) | null;
  syncWaiter: ((answer: Struct) => void) | null;
}

interface Group {
  id: string;
  state: State;
  generation: number;
  protocolType: string | null;
  protocolName: string;
  leader: string;
  members: Map<string, Member>;
  rebalanceStartedMs: number;
  offsets: Map<string, { offset: number; metadata: string | null }>;
}

const code = (name: ProtocolErrorName): number => kafkaErrorCode(name);

export class GroupCoordinator {
  private readonly groups = new Map<string, Group>();
  private readonly timer: NodeJS.Timeout;
  /** Rebalances completed (new generations handed out), for tests and metrics. */
  rebalances = 0;

  constructor(private readonly now: () => number = Date.now) {
    this.timer = setInterval(() => this.expire(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  private group(id: string): Group {
    let g = this.groups.get(id);
    if (!g) {
      g = { id, state: 'Empty', generation: 0, protocolType: null, protocolName: '', leader: '', members: new Map(), rebalanceStartedMs: 0, offsets: new Map() };
      this.groups.set(id, g);
    }
    return g;
  }

  // ----------------------------------------------------------------------------- JoinGroup

  join(body: Struct): Promise<Struct> | Struct {
    const fail = (name: ProtocolErrorName, memberId = ''): Struct => ({ ThrottleTimeMs: 0, ErrorCode: code(name), GenerationId: -1, ProtocolName: '', Leader: '', MemberId: memberId, Members: [] });
    const groupId = body.GroupId as string;
    const sessionTimeoutMs = body.SessionTimeoutMs as number;
    const rebalanceTimeoutMs = (body.RebalanceTimeoutMs as number) < 0 ? sessionTimeoutMs : (body.RebalanceTimeoutMs as number);
    const protocolType = body.ProtocolType as string;
    const protocols = body.Protocols as Member['protocols'];
    let memberId = body.MemberId as string;
    if (!groupId) return fail('INVALID_GROUP_ID');
    if (sessionTimeoutMs < MIN_SESSION_TIMEOUT_MS || sessionTimeoutMs > MAX_SESSION_TIMEOUT_MS) return fail('INVALID_SESSION_TIMEOUT', memberId);
    if (protocols.length === 0 || !protocolType) return fail('INCONSISTENT_GROUP_PROTOCOL', memberId);
    const g = this.group(groupId);
    if (g.members.size > 0 && g.protocolType !== protocolType) return fail('INCONSISTENT_GROUP_PROTOCOL', memberId);
    if (g.members.size > 0 && !this.commonProtocol(g, protocols)) return fail('INCONSISTENT_GROUP_PROTOCOL', memberId);
    if (memberId && !g.members.has(memberId)) return fail('UNKNOWN_MEMBER_ID', memberId);
    if (!memberId) memberId = `${String(body.clientId ?? 'member')}-${randomUUID()}`;

    let m = g.members.get(memberId);
    if (!m) {
      m = { id: memberId, sessionTimeoutMs, rebalanceTimeoutMs, protocolType, protocols, lastSeenMs: this.now(), assignment: Buffer.alloc(0), joinWaiter: null, syncWaiter: null };
      g.members.set(memberId, m);
      g.protocolType = protocolType;
    }
    m.sessionTimeoutMs = sessionTimeoutMs;
    m.rebalanceTimeoutMs = rebalanceTimeoutMs;
    m.protocols = protocols;
    m.lastSeenMs = this.now();
    // A member that rejoins while the leader is assigning ends the old sync round.
    if (m.joinWaiter) m.joinWaiter(fail('REBALANCE_IN_PROGRESS', memberId));
    const answer = new Promise<Struct>((resolve) => (m.joinWaiter = resolve));
    this.prepareRebalance(g);
    // Complete on the next turn, so joins arriving in the same burst share one generation.
    setImmediate(() => this.maybeCompleteJoin(g));
    return answer;
  }

  private commonProtocol(g: Group, extra?: Member['protocols']): string | null {
    const lists = [...[...g.members.values()].map((m) => m.protocols), ...(extra ? [extra] : [])];
    const first = lists[0] ?? [];
    for (const p of first) if (lists.every((l) => l.some((x) => x.Name === p.Name))) return p.Name;
    return null;
  }

  private prepareRebalance(g: Group): void {
    if (g.state === 'PreparingRebalance') return;
    // Members waiting for their assignment of the old generation must rejoin.
    for (const m of g.members.values()) {
      if (m.syncWaiter) m.syncWaiter({ ThrottleTimeMs: 0, ErrorCode: code('REBALANCE_IN_PROGRESS'), Assignment: Buffer.alloc(0) });
      m.syncWaiter = null;
    }
    g.state = 'PreparingRebalance';
    g.rebalanceStartedMs = this.now();
  }

  private maybeCompleteJoin(g: Group): void {
    if (g.state !== 'PreparingRebalance') return;
    const members = [...g.members.values()];
    const timeoutMs = Math.max(0, ...members.map((m) => m.rebalanceTimeoutMs));
    const allJoined = members.every((m) => m.joinWaiter !== null);
    if (!allJoined && this.now() - g.rebalanceStartedMs < timeoutMs) return;
    // Members that did not rejoin within the rebalance timeout leave the group.
    for (const m of members) if (!m.joinWaiter) g.members.delete(m.id);
    g.generation++;
    this.rebalances++;
    if (g.members.size === 0) {
      g.state = 'Empty';
      g.protocolType = null;
      g.leader = '';
      return;
    }
    g.protocolName = this.commonProtocol(g) ?? '';
    if (!g.members.has(g.leader)) g.leader = g.members.keys().next().value!;
    g.state = 'CompletingRebalance';
    for (const m of g.members.values()) {
      const isLeader = m.id === g.leader;
      const members = isLeader ? [...g.members.values()].map((x) => ({ MemberId: x.id, GroupInstanceId: null, Metadata: x.protocols.find((p) => p.Name === g.protocolName)!.Metadata })) : [];
      const resolve = m.joinWaiter!;
      m.joinWaiter = null;
      m.assignment = Buffer.alloc(0);
      m.lastSeenMs = this.now();
      resolve({ ThrottleTimeMs: 0, ErrorCode: 0, GenerationId: g.generation, ProtocolName: g.protocolName, Leader: g.leader, MemberId: m.id, Members: members });
    }
  }

  // ----------------------------------------------------------------------------- SyncGroup

  sync(body: Struct): Promise<Struct> | Struct {
    const fail = (name: ProtocolErrorName): Struct => ({ ThrottleTimeMs: 0, ErrorCode: code(name), Assignment: Buffer.alloc(0) });
    const g = this.groups.get(body.GroupId as string);
    const m = g?.members.get(body.MemberId as string);
    if (!g || !m) return fail('UNKNOWN_MEMBER_ID');
    if ((body.GenerationId as number) !== g.generation) return fail('ILLEGAL_GENERATION');
    m.lastSeenMs = this.now();
    if (g.state === 'PreparingRebalance') return fail('REBALANCE_IN_PROGRESS');
    if (g.state === 'Stable') return { ThrottleTimeMs: 0, ErrorCode: 0, Assignment: m.assignment };
    const answer = new Promise<Struct>((resolve) => (m.syncWaiter = resolve));
    if (m.id === g.leader) {
      for (const a of body.Assignments as Array<{ MemberId: string; Assignment: Buffer }>) {
        const target = g.members.get(a.MemberId);
        if (target) target.assignment = a.Assignment;
      }
      g.state = 'Stable';
      for (const x of g.members.values()) {
        if (!x.syncWaiter) continue;
        const resolve = x.syncWaiter;
        x.syncWaiter = null;
        resolve({ ThrottleTimeMs: 0, ErrorCode: 0, Assignment: x.assignment });
      }
    }
    return answer;
  }

  // ----------------------------------------------------------------------------- Heartbeat, LeaveGroup

  heartbeat(body: Struct): Struct {
    const answer = (name: ProtocolErrorName | 'NONE'): Struct => ({ ThrottleTimeMs: 0, ErrorCode: name === 'NONE' ? 0 : code(name) });
    const g = this.groups.get(body.GroupId as string);
    const m = g?.members.get(body.MemberId as string);
    if (!g || !m) return answer('UNKNOWN_MEMBER_ID');
    if ((body.GenerationId as number) !== g.generation) return answer('ILLEGAL_GENERATION');
    m.lastSeenMs = this.now();
    return answer(g.state === 'PreparingRebalance' ? 'REBALANCE_IN_PROGRESS' : 'NONE');
  }

  leave(version: number, body: Struct): Struct {
    const ids = version >= 3 ? (body.Members as Array<{ MemberId: string }>).map((x) => x.MemberId) : [body.MemberId as string];
    const g = this.groups.get(body.GroupId as string);
    const results = ids.map((id) => ({ MemberId: id, GroupInstanceId: null, ErrorCode: g?.members.has(id) ? 0 : code('UNKNOWN_MEMBER_ID') }));
    if (g) {
      let left = false;
      for (const id of ids) {
        const m = g.members.get(id);
        if (!m) continue;
        m.joinWaiter?.({ ThrottleTimeMs: 0, ErrorCode: code('UNKNOWN_MEMBER_ID'), GenerationId: -1, ProtocolName: '', Leader: '', MemberId: id, Members: [] });
        m.syncWaiter?.({ ThrottleTimeMs: 0, ErrorCode: code('UNKNOWN_MEMBER_ID'), Assignment: Buffer.alloc(0) });
        g.members.delete(id);
        left = true;
      }
      if (left) this.membersGone(g);
    }
    const errorCode = version < 3 ? results[0].ErrorCode : 0;
    return { ThrottleTimeMs: 0, ErrorCode: errorCode, Members: results };
  }

  private membersGone(g: Group): void {
    if (g.members.size === 0) {
      g.state = 'Empty';
      g.generation++;
      g.protocolType = null;
      g.leader = '';
      return;
    }
    this.prepareRebalance(g);
    setImmediate(() => this.maybeCompleteJoin(g));
  }

  /** Session timeouts, and joins whose rebalance timeout ran out. */
  private expire(): void {
    const now = this.now();
    for (const g of this.groups.values()) {
      let gone = false;
      for (const m of g.members.values()) {
        if (m.joinWaiter) continue; // waiting in a join: the rebalance timeout applies
        if (now - m.lastSeenMs > m.sessionTimeoutMs) {
          m.syncWaiter?.({ ThrottleTimeMs: 0, ErrorCode: code('UNKNOWN_MEMBER_ID'), Assignment: Buffer.alloc(0) });
          g.members.delete(m.id);
          gone = true;
        }
      }
      if (gone) this.membersGone(g);
      else if (g.state === 'PreparingRebalance') this.maybeCompleteJoin(g);
    }
  }

  // ----------------------------------------------------------------------------- offsets

  commit(body: Struct): Struct {
    const g = this.group(body.GroupId as string);
    const generation = body.GenerationIdOrMemberEpoch as number;
    let error: ProtocolErrorName | null = null;
    if (generation >= 0 || (body.MemberId as string) !== '') {
      const m = g.members.get(body.MemberId as string);
      if (!m) error = 'UNKNOWN_MEMBER_ID';
      else if (generation !== g.generation) error = 'ILLEGAL_GENERATION';
      else if (g.state === 'PreparingRebalance') error = 'REBALANCE_IN_PROGRESS';
      else m.lastSeenMs = this.now();
    } else if (g.members.size > 0) error = 'ILLEGAL_GENERATION'; // a simple (groupless) commit to an active group
    const topics = body.Topics as Array<{ Name: string; Partitions: Array<{ PartitionIndex: number; CommittedOffset: number; CommittedMetadata: string | null }> }>;
    return {
      ThrottleTimeMs: 0,
      Topics: topics.map((t) => ({
        Name: t.Name,
        Partitions: t.Partitions.map((p) => {
          if (!error) g.offsets.set(`${t.Name}\0${p.PartitionIndex}`, { offset: p.CommittedOffset, metadata: p.CommittedMetadata });
          return { PartitionIndex: p.PartitionIndex, ErrorCode: error ? code(error) : 0 };
        }),
      })),
    };
  }

  fetchOffsets(body: Struct): Struct {
    const g = this.groups.get(body.GroupId as string);
    const offsets = g?.offsets ?? new Map<string, { offset: number; metadata: string | null }>();
    let topics = body.Topics as Array<{ Name: string; PartitionIndexes: number[] }> | null;
    if (topics === null) {
      const byTopic = new Map<string, number[]>();
      for (const k of offsets.keys()) {
        const [name, p] = k.split('\0');
        byTopic.set(name, [...(byTopic.get(name) ?? []), Number(p)]);
      }
      topics = [...byTopic].map(([Name, PartitionIndexes]) => ({ Name, PartitionIndexes }));
    }
    return {
      ThrottleTimeMs: 0,
      ErrorCode: 0,
      Topics: topics.map((t) => ({
        Name: t.Name,
        Partitions: t.PartitionIndexes.map((i) => {
          const o = offsets.get(`${t.Name}\0${i}`);
          return { PartitionIndex: i, CommittedOffset: o ? o.offset : -1, CommittedLeaderEpoch: -1, Metadata: o ? o.metadata : '', ErrorCode: 0 };
        }),
      })),
    };
  }
}
