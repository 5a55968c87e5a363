// The group coordinator's state machine in-process, on its real timers with a clock the test
// moves forward: one generation for members that join together, the leader's assignment
// delivered to every member, Kafka's errors for stale generations and unknown members, and
// rebalances after a leave and after a session timeout; offsets committed and fetched.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupCoordinator } from './group-coordinator.ts';
import type { Struct } from '../../protocol/schema.ts';

let clock = 1_000_000;
let coordinator: GroupCoordinator | null = null;
afterEach(() => coordinator?.close());

const join = (c: GroupCoordinator, memberId = ''): Promise<Struct> =>
  Promise.resolve(c.join({ GroupId: 'g', SessionTimeoutMs: 6000, RebalanceTimeoutMs: 6000, MemberId: memberId, GroupInstanceId: null, ProtocolType: 'consumer', Protocols: [{ Name: 'range', Metadata: Buffer.from(memberId || 'new') }] }));
const sync = (c: GroupCoordinator, generation: number, memberId: string, assignments: Array<{ MemberId: string; Assignment: Buffer }> = []): Promise<Struct> =>
  Promise.resolve(c.sync({ GroupId: 'g', GenerationId: generation, MemberId: memberId, GroupInstanceId: null, Assignments: assignments }));
const beat = (c: GroupCoordinator, generation: number, memberId: string): number => c.heartbeat({ GroupId: 'g', GenerationId: generation, MemberId: memberId }).ErrorCode as number;

describe('group coordinator', () => {
  it('forms one generation, hands out the leader assignment, rebalances on leave and session timeout', async () => {
    const c = (coordinator = new GroupCoordinator(() => clock));
    const [a, b] = await Promise.all([join(c), join(c)]);
    expect(a.ErrorCode).toBe(0);
    expect(b.GenerationId).toBe(a.GenerationId);
    const leader = [a, b].find((x) => x.Leader === x.MemberId)!;
    const follower = [a, b].find((x) => x !== leader)!;
    expect((leader.Members as Struct[]).map((m) => m.MemberId).sort()).toEqual([a.MemberId, b.MemberId].sort());
    expect(follower.Members).toEqual([]);
    const gen = a.GenerationId as number;
    const followerSync = sync(c, gen, follower.MemberId as string);
    const leaderSync = await sync(c, gen, leader.MemberId as string, [
      { MemberId: leader.MemberId as string, Assignment: Buffer.from('L') },
      { MemberId: follower.MemberId as string, Assignment: Buffer.from('F') },
    ]);
    expect(leaderSync.Assignment).toEqual(Buffer.from('L'));
    expect((await followerSync).Assignment).toEqual(Buffer.from('F'));
    expect(beat(c, gen, follower.MemberId as string)).toBe(0);
    expect(beat(c, gen - 1, follower.MemberId as string)).toBe(22); // ILLEGAL_GENERATION
    expect(beat(c, gen, 'nobody')).toBe(25); // UNKNOWN_MEMBER_ID

    // Offsets: a commit from the current generation sticks; a stale one is refused.
    const commit = (generation: number, offset: number): Struct =>
      c.commit({ GroupId: 'g', GenerationIdOrMemberEpoch: generation, MemberId: leader.MemberId, Topics: [{ Name: 't', Partitions: [{ PartitionIndex: 0, CommittedOffset: offset, CommittedMetadata: null }] }] });
    expect(((commit(gen, 42).Topics as Struct[])[0].Partitions as Struct[])[0].ErrorCode).toBe(0);
    expect(((commit(gen - 1, 99).Topics as Struct[])[0].Partitions as Struct[])[0].ErrorCode).toBe(22);
    const fetched = c.fetchOffsets({ GroupId: 'g', Topics: [{ Name: 't', PartitionIndexes: [0, 1] }] });
    expect(((fetched.Topics as Struct[])[0].Partitions as Struct[]).map((p) => p.CommittedOffset)).toEqual([42, -1]);

    // The follower leaves: the leader hears REBALANCE_IN_PROGRESS, rejoins alone, new generation.
    expect(c.leave(3, { GroupId: 'g', Members: [{ MemberId: follower.MemberId, GroupInstanceId: null }] }).Members).toEqual([{ MemberId: follower.MemberId, GroupInstanceId: null, ErrorCode: 0 }]);
    expect(beat(c, gen, leader.MemberId as string)).toBe(27);
    const alone = await join(c, leader.MemberId as string);
    expect(alone).toMatchObject({ ErrorCode: 0, GenerationId: gen + 1, Leader: leader.MemberId });
    await sync(c, gen + 1, leader.MemberId as string, [{ MemberId: leader.MemberId as string, Assignment: Buffer.from('all') }]);

    // A second member joins; then the first goes silent past its session timeout (6 s).
    const late = join(c);
    expect(beat(c, gen + 1, leader.MemberId as string)).toBe(27);
    const [again, newcomer] = await Promise.all([join(c, leader.MemberId as string), late]);
    expect(again.GenerationId).toBe(gen + 2);
    await Promise.all([sync(c, gen + 2, newcomer.MemberId as string), sync(c, gen + 2, leader.MemberId as string, [])]);
    clock += 7000;
    expect(beat(c, gen + 2, newcomer.MemberId as string)).toBe(0); // the newcomer stays alive
    await sleep(400); // the coordinator's own expiry timer runs
    expect(beat(c, gen + 2, leader.MemberId as string)).toBe(25); // expired: no longer a member
    expect(beat(c, gen + 2, newcomer.MemberId as string)).toBe(27); // must rejoin
    const solo = await join(c, newcomer.MemberId as string);
    expect(solo).toMatchObject({ ErrorCode: 0, GenerationId: gen + 3, Leader: newcomer.MemberId });
    expect(c.rebalances).toBe(4);
  });

  it('refuses session timeouts outside Kafka bounds and unknown member ids', async () => {
    const c = (coordinator = new GroupCoordinator(() => clock));
    const bad = await Promise.resolve(c.join({ GroupId: 'g', SessionTimeoutMs: 100, RebalanceTimeoutMs: 100, MemberId: '', GroupInstanceId: null, ProtocolType: 'consumer', Protocols: [{ Name: 'range', Metadata: Buffer.alloc(0) }] }));
    expect(bad.ErrorCode).toBe(26); // INVALID_SESSION_TIMEOUT
    expect((await join(c, 'made-up')).ErrorCode).toBe(25);
    expect(c.join({ GroupId: '', SessionTimeoutMs: 6000, RebalanceTimeoutMs: 6000, MemberId: '', GroupInstanceId: null, ProtocolType: 'consumer', Protocols: [] })).toMatchObject({ ErrorCode: 24 });
  });
});
