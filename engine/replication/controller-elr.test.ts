// The controller's eligible leader replicas (KIP-966) and unclean-shutdown handling, on the
// pure Controller with a fake clock: the rules partition-change.ts states, each against the
// behaviour with eligible.leader.replicas off.
import { describe, expect, it } from 'vitest';
import { Controller } from './controller.ts';

const url = (id: number): string => `http://127.0.0.1:${9000 + id}`;

function setup(opts: { elr: boolean; minIsr?: number; unclean?: boolean }) {
  let t = 1000;
  const clock = { advance: (ms: number) => (t += ms) };
  const c = new Controller({ sessionTimeoutMs: 1500, uncleanLeaderElection: opts.unclean ?? false, eligibleLeaderReplicas: opts.elr, minInsyncReplicas: opts.minIsr ?? 2, now: () => t });
  const incarnation = new Map<number, number>();
  /** One heartbeat from broker `id`'s current process. */
  const beat = (id: number, clean?: boolean): void => void c.heartbeat(id, url(id), undefined, `inc-${id}-${incarnation.get(id) ?? 0}`, clean);
  /** A new process of broker `id`: `clean` says whether its previous run closed its logs cleanly. */
  const restart = (id: number, clean: boolean): void => {
    incarnation.set(id, (incarnation.get(id) ?? 0) + 1);
    beat(id, clean);
  };
  /** Time passes with only `alive` heartbeating, then the controller checks sessions. */
  const passWith = (alive: number[], ms = 1600): void => {
    clock.advance(ms);
    for (const id of alive) beat(id);
    c.tick();
  };
  for (const id of [1, 2, 3]) beat(id);
  c.createTopic('t', 1, 3, [1, 2, 3]);
  const p = () => c.assignment('t', 0)!;
  return { c, beat, restart, passWith, p };
}

describe('eligible leader replicas (KIP-966): ISR [1,2,3], min.insync.replicas 2', () => {
  it('followers out of the ISR at once: both become ELR; the leader dies: one of them leads, not the restarted old leader', () => {
    const on = setup({ elr: true });
    on.c.alterPartition({ topic: 't', partition: 0, brokerId: 1, leaderEpoch: 0, partitionEpoch: 0, isr: [1] });
    expect(on.p()).toMatchObject({ leader: 1, isr: [1], elr: [2, 3] });
    expect(on.c.state().events.at(-1)).toMatchObject({ kind: 'isr-change', elr: [2, 3] });
    // The leader's power is cut: its session expires; 2 and 3 heartbeat on.
    on.passWith([2, 3]);
    expect(on.p()).toMatchObject({ leader: 2, leaderEpoch: 1, isr: [2], elr: [1, 3] });
    expect(on.c.state().events.at(-1)!.reason).toMatch(/ISR empty: elected 2 from the eligible leader replicas \(KIP-966\) ELR \[1,3\]$/);
    // It comes back without a clean shutdown: out of the ELR, a follower to re-replicate from 2.
    on.restart(1, false);
    expect(on.p()).toMatchObject({ leader: 2, leaderEpoch: 1, isr: [2], elr: [3] });
    expect(on.c.state().events.find((e) => e.kind === 'unclean-shutdown')).toMatchObject({ brokerId: 1 });
    // 3 catches up: the ISR is back at min.insync.replicas, the ELR empties.
    on.c.alterPartition({ topic: 't', partition: 0, brokerId: 2, leaderEpoch: 1, partitionEpoch: on.p().partitionEpoch, isr: [2, 3] });
    expect(on.p()).toMatchObject({ isr: [2, 3], elr: [] });

    // Off: the last ISR member stays in the ISR (KIP-841), the partition waits for it, and it
    // leads again whatever it lost.
    const off = setup({ elr: false });
    off.c.alterPartition({ topic: 't', partition: 0, brokerId: 1, leaderEpoch: 0, partitionEpoch: 0, isr: [1] });
    off.passWith([2, 3]);
    expect(off.p()).toMatchObject({ leader: -1, isr: [1] });
    expect(off.p().elr).toBeUndefined();
    off.restart(1, false);
    expect(off.p()).toMatchObject({ leader: 1, leaderEpoch: 2, isr: [1] });
    expect(off.c.state().events.find((e) => e.kind === 'unclean-shutdown')?.reason).toMatch(/handled as a fence \(eligible.leader.replicas off\)/);
  });

  it('followers fenced one after the other: only the one that left at the minimum is eligible; with nobody alive the partition waits for it, not for the old leader', () => {
    const { passWith, restart, beat, p, c } = setup({ elr: true });
    passWith([1]); // 2 and 3 paused: fenced in id order, 2 while the ISR still had 3 members
    expect(p()).toMatchObject({ leader: 1, isr: [1], elr: [3] });
    // Fencing does not take a broker out of an ELR: it may come back with its log intact.
    passWith([]); // the leader's power is cut too
    expect(p()).toMatchObject({ leader: -1, isr: [], elr: [1, 3], lastKnownLeader: 1 });
    restart(1, false);
    expect(p()).toMatchObject({ leader: -1, isr: [], elr: [3] });
    beat(2);
    expect(p().leader).toBe(-1); // 2 left the ISR while it was above the minimum: not eligible
    beat(3);
    expect(p()).toMatchObject({ leader: 3, isr: [3], elr: [] });
    expect(c.state().events.at(-1)).toMatchObject({ kind: 'election', leader: 3 });
    expect(c.state().events.some((e) => e.unclean)).toBe(false);
  });

  it('a clean restart keeps a broker in the ELR, and it can lead', () => {
    const { passWith, restart, p } = setup({ elr: true });
    passWith([1]);
    passWith([]);
    expect(p()).toMatchObject({ leader: -1, isr: [], elr: [1, 3] });
    restart(1, true);
    expect(p()).toMatchObject({ leader: 1, isr: [1], elr: [3] });
  });

  it('ISR and ELR empty: the last known leader leads once it is back (unclean, as Kafka 4.4), or an unclean election picks a live replica first', () => {
    // min.insync.replicas 1: followers leave the ISR without becoming eligible.
    const a = setup({ elr: true, minIsr: 1 });
    a.c.alterPartition({ topic: 't', partition: 0, brokerId: 1, leaderEpoch: 0, partitionEpoch: 0, isr: [1] });
    expect(a.p()).toMatchObject({ isr: [1], elr: [] });
    a.passWith([2, 3]);
    expect(a.p()).toMatchObject({ leader: -1, isr: [], elr: [1], lastKnownLeader: 1 });
    a.restart(1, false);
    // Out of the ELR; still the last known leader, elected (KAFKA-19522: only once it is unfenced).
    expect(a.p()).toMatchObject({ leader: 1, isr: [1], elr: [] });
    expect(a.p().lastKnownLeader).toBeUndefined();
    expect(a.c.state().events.at(-1)).toMatchObject({ kind: 'election', leader: 1, unclean: true });
    expect(a.c.state().events.at(-1)!.reason).toMatch(/ISR and ELR empty: elected the last known leader 1/);

    const b = setup({ elr: true, minIsr: 1, unclean: true });
    b.c.alterPartition({ topic: 't', partition: 0, brokerId: 1, leaderEpoch: 0, partitionEpoch: 0, isr: [1] });
    b.passWith([2, 3]);
    // The ELR ([1]) is fenced: unclean election of a live replica clears the ELR.
    expect(b.p()).toMatchObject({ leader: 2, isr: [2], elr: [] });
    expect(b.c.state().events.at(-1)).toMatchObject({ kind: 'election', leader: 2, unclean: true });
  });

  it('a new process within the session timeout without a clean shutdown: fenced, then out of every ISR and ELR', () => {
    const { c, restart, p } = setup({ elr: true });
    c.alterPartition({ topic: 't', partition: 0, brokerId: 1, leaderEpoch: 0, partitionEpoch: 0, isr: [1, 2] });
    // 3 left while the ISR was at 3 members: not eligible; the leader restarts at once.
    restart(1, false);
    expect(p()).toMatchObject({ leader: 2, isr: [2], elr: [] });
    expect(c.state().events.filter((e) => e.brokerId === 1).map((e) => e.kind)).toEqual(['fenced', 'unclean-shutdown', 'unfenced']);
  });

  it('a rack power cut: every replica fenced at once and back without a clean shutdown: the last eligible one leads again (unclean), the partition does not stay offline', () => {
    const on = setup({ elr: true });
    on.passWith([]);
    expect(on.p()).toMatchObject({ leader: -1, isr: [], elr: [2, 3] });
    for (const id of [3, 1, 2]) on.restart(id, false);
    // Each unclean shutdown took its broker out of the ELR; the last one that was eligible is remembered.
    on.passWith([1, 2, 3], 100);
    expect(on.p()).toMatchObject({ leader: 2, isr: [2], elr: [] });
    expect(on.c.state().events.filter((e) => e.kind === 'election').at(-1)!.reason).toMatch(/ISR and ELR empty: elected the last known leader 2 \(unclean: it may lack what it lost\)/);
  });
});
