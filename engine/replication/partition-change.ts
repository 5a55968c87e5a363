// How the controller changes one partition's leader, ISR and eligible leader replicas (ELR):
// the rules of Kafka's KIP-966 as its KRaft controller applies them, read in Apache Kafka's
// metadata module: PartitionChangeBuilder (build, maybePopulateTargetElr, electAnyLeader,
// isValidNewLeader, canElectLastKnownLeader, tryElection, maybeUpdateRecordElr,
// maybeUpdateLastKnownLeader), ReplicationControlManager (generateLeaderAndIsrUpdates,
// handleBrokerFenced, handleBrokerShutdown / handleBrokerUncleanShutdown, isElrEnabled) and
// ClusterControlManager.registerBroker (a new incarnation is a clean restart only when its
// BrokerRegistrationRequest's PreviousBrokerEpoch, read from the clean-shutdown files of its log
// dirs, matches the epoch the controller holds; KAFKA-19522 for the last known leader).
//
// The rules (eligible.leader.replicas on; Kafka: eligible.leader.replicas.version=1):
// 1. ELR. Whenever a change leaves the ISR at or above min.insync.replicas, the ELR is empty.
//    When it leaves the ISR below it, the ELR becomes (ELR + the ISR before the change) minus the
//    new ISR, minus a broker being handled for an unclean shutdown. Below the minimum Kafka's
//    leader does not advance its HW and acks=all answers NOT_ENOUGH_REPLICAS, so whoever left the
//    ISR while it was at or below the minimum holds everything committed (durolab's leader holds
//    its HW the same way: engine/replication/leader-requests.ts maybeIncrementHw).
// 2. Fencing. A fenced broker leaves every ISR even when it is the last member: the ISR may be
//    empty (the last member is then in the ELR). Fencing does not take a broker out of an ELR: it
//    may come back with its log intact.
// 3. Unclean shutdown. A broker whose new process registers without proof of a clean shutdown
//    (durolab: not every partition log of its data dir had its clean-shutdown marker) may have
//    lost its unflushed tail: it leaves every ISR and ELR, and is not a candidate in that change.
// 4. Election, when the leader is gone: the first replica (preferred order) that is in the ISR
//    and alive; if the ISR is empty, the first in the ELR that is alive (it becomes the ISR, the
//    rest of the ELR stays); if both are empty, the last known leader (the leader at the moment
//    the ISR became empty) once it is alive again (Kafka's balanced recovery, with KAFKA-19522:
//    only when it is unfenced); then, only with unclean.leader.election.enable, any alive
//    replica. The last two are unclean elections: the ISR becomes the new leader alone and the
//    ELR is cleared. No candidate: leader -1 (offline).
//
// eligible.leader.replicas off (Kafka 4.0's default, eligible.leader.replicas.version=0): no ELR;
// the last ISR member stays in the ISR when it is fenced (KIP-841), so it alone can be elected
// when it comes back, whatever it lost; an unclean shutdown is handled as a fence.
//
// What differs from Kafka: (a) Kafka marks an unclean leader RECOVERING (leaderRecoveryState);
// durolab has no such state. (b) durolab's controller takes min.insync.replicas from its
// settings (one value per cluster), as Kafka's controller does from the cluster-level config when
// ELR is on; per-topic overrides do not exist here. (c) The clean-shutdown proof is the partition
// logs' markers, not a stored broker epoch. (d) A new process within the old one's session: Kafka
// refuses it (DuplicateBrokerRegistration) until the session expires; durolab fences the old one
// at once. (e) durolab's brokers do not list eligible.leader.replicas.version among their
// ApiVersions features.
import type { PartitionAssignment } from './types.ts';

export interface ElectionRules {
  /** KIP-966 (eligible.leader.replicas). */
  eligibleLeaderReplicas: boolean;
  /** unclean.leader.election.enable. */
  uncleanLeaderElection: boolean;
  /** min.insync.replicas, as the controller knows it. */
  minInsyncReplicas: number;
}

/** Where a new leader came from; 'kept': the current leader stays; 'none': offline. */
export type ElectionSource = 'kept' | 'isr' | 'elr' | 'last-known-leader' | 'unclean' | 'none';

export interface PartitionChangeRequest {
  /** The ISR this change asks for (any order; replica order is restored). */
  targetIsr: readonly number[];
  /** May this broker lead now (registered, unfenced, not being handled for an unclean shutdown)? */
  acceptable: (id: number) => boolean;
  /** A broker handled for an unclean shutdown: out of the ISR and the ELR. */
  uncleanShutdown?: number;
}

export interface PartitionChange {
  leader: number;
  isr: number[];
  elr: number[];
  /** -1: none. */
  lastKnownLeader: number;
  source: ElectionSource;
}

/** The partition's state after the change (pure: `p` is not modified). */
export function planPartitionChange(p: Readonly<PartitionAssignment>, req: PartitionChangeRequest, rules: ElectionRules): PartitionChange {
  const inOrder = (ids: Iterable<number>): number[] => {
    const set = new Set(ids);
    return p.replicas.filter((id) => set.has(id));
  };
  const elrOn = rules.eligibleLeaderReplicas;
  let targetIsr = inOrder(req.targetIsr);
  // KIP-841 without ELR: the ISR never becomes empty; its last member stays.
  if (!elrOn && targetIsr.length === 0) targetIsr = inOrder(p.isr);
  const eligibleFor = (isr: readonly number[]): number[] =>
    !elrOn || isr.length >= rules.minInsyncReplicas ? [] : inOrder([...(p.elr ?? []), ...p.isr]).filter((id) => !isr.includes(id) && id !== req.uncleanShutdown);
  const targetElr = eligibleFor(targetIsr);
  const lastKnown = p.lastKnownLeader ?? -1;

  const valid = (id: number): boolean => (targetIsr.includes(id) || (targetIsr.length === 0 && targetElr.includes(id))) && req.acceptable(id);
  let leader = p.leader;
  let source: ElectionSource = 'kept';
  if (!(leader >= 0 && valid(leader))) {
    const clean = p.replicas.find(valid);
    if (clean !== undefined) {
      leader = clean;
      source = targetIsr.includes(clean) ? 'isr' : 'elr';
    } else if (elrOn && targetIsr.length === 0 && targetElr.length === 0 && lastKnown >= 0 && req.acceptable(lastKnown)) {
      leader = lastKnown;
      source = 'last-known-leader';
    } else {
      const any = rules.uncleanLeaderElection ? p.replicas.find(req.acceptable) : undefined;
      leader = any ?? -1;
      source = any === undefined ? 'none' : 'unclean';
    }
  }

  let isr: number[];
  if (source === 'isr') isr = targetIsr.filter((id) => id === leader || req.acceptable(id));
  else if (source === 'elr' || source === 'last-known-leader' || source === 'unclean') isr = [leader];
  else isr = targetIsr;
  const elr = source === 'last-known-leader' || source === 'unclean' ? [] : eligibleFor(isr);

  let lastKnownLeader = lastKnown;
  if (!elrOn || leader >= 0) lastKnownLeader = -1;
  else if (isr.length === 0 && p.isr.length > 0 && p.leader >= 0) lastKnownLeader = p.leader;
  else if (isr.length === 0 && elr.length === 0 && lastKnown < 0) {
    // Every eligible replica gone (they all shut down uncleanly: a rack's power cut) with no leader
    // to remember: the last one that was eligible leads when it is back, unclean (Kafka keeps the
    // last known ELR for this); without it the partition would stay offline for good.
    const last = [...(p.elr ?? []), ...p.isr].at(-1);
    if (last !== undefined) lastKnownLeader = last;
  }
  return { leader, isr, elr, lastKnownLeader, source };
}

/** The ELR part of a partition's description in events and logs. */
export function elrText(p: Readonly<PartitionAssignment>): string {
  const elr = p.elr ?? [];
  const last = p.lastKnownLeader ?? -1;
  return `${elr.length > 0 ? ` ELR [${elr.join(',')}]` : ''}${last >= 0 ? ` last known leader ${last}` : ''}`;
}

/** Why a partition has the leader it has now (the reasons name the source of the new leader). */
export function electionReason(reason: string, source: ElectionSource, leader: number, rules: ElectionRules): string {
  switch (source) {
    case 'isr':
    case 'kept':
      return `${reason}; elected ${leader} from the ISR`;
    case 'elr':
      return `${reason}; ISR empty: elected ${leader} from the eligible leader replicas (KIP-966)`;
    case 'last-known-leader':
      return `${reason}; ISR and ELR empty: elected the last known leader ${leader} (unclean: it may lack what it lost)`;
    case 'unclean':
      return `${reason}; no alive ISR member: unclean election of out-of-sync replica ${leader}`;
    case 'none': {
      const members = rules.eligibleLeaderReplicas ? 'ISR or ELR member' : 'ISR member';
      return `${reason}; no alive ${members}${rules.uncleanLeaderElection ? ' and no alive replica' : ' (unclean election disabled)'}: offline`;
    }
  }
}
