// The one list of fault kinds. Each kind declares the fields of its scenario entry beyond the
// common kind/target/when/duration, the action a target must offer to deliver it, and its phase
// hooks in a trial's fault schedule (harness/runner/fault-schedule.ts): start (deliver), heal
// (lasting kinds, `duration` after the start), whether the load runs through it, whether the hit
// brokers restart before the check. A new kind is its module plus a row here. The scenario schema, validation, results types, the report
// and the runner read the kinds from here; FAULTS is a Record over FaultKind, so a kind without
// a delivery is a type error.
import type { DriverCapabilities } from '../drivers/registry.ts';
import * as z from 'zod';
import type { CutInfo, FaultableCluster, TargetCapabilities } from '../targets/types.ts';
import type { FaultScenarioIssue } from '../model/scenario-issue.ts';
import type { FaultContext } from './fault-context.ts';
import { leaf } from '../model/zod-leaf.ts';
import { FROM_EXPECTED, LINKS_EXPECTED, parseFrom, parseLinks } from '../net/partition-peers.ts';
import { partitionScenarioIssues } from './partition-checks.ts';
import { LOSS_EXPECTED, RATE_EXPECTED, parseLoss, parseRate, slowLinkScenarioIssues } from './slow-link-checks.ts';
import { ON_CUT_POLICIES } from '../disk/on-cut.ts';
import { FILE_KIND_ROWS } from './file-faults/file-kinds.ts';

import { FAULT_ACTIONS, FAULT_KINDS, type FaultAction, type FaultKind } from '../model/kinds.ts';
export { FAULT_ACTIONS, FAULT_KINDS, type FaultAction, type FaultKind };

/**
 * What a target's clusters can do to a broker. A target lists the actions it offers
 * (TargetCapabilities.faultActions); a fault kind names the one it needs.
 */
// FAULT_ACTIONS: harness/model/kinds.ts.

export interface FaultKindSpec {
  /** One line for help texts and reports. */
  summary: string;
  /** Scenario fields of this kind besides kind, target and when (a zod shape; empty today). */
  fields: z.ZodRawShape;
  /** The action a target must offer to deliver this kind. */
  needs: FaultAction;
  /** What the cell's client driver must offer for this kind to be checked (harness/drivers/registry.ts DriverCapabilities); absent: any driver. */
  needsDriver?: keyof DriverCapabilities;
  /** On which targets needsDriver applies (the cell's target's capabilities); absent: on every target. */
  needsDriverOn?: (target: TargetCapabilities) => boolean;
  /** Phase start: sends the fault to the brokers; CutInfo.atMs is the moment it went out. `topic`: the scenario's. */
  deliver(cluster: FaultableCluster, brokerIds: number[], ctx: FaultContext): Promise<CutInfo>;
  /**
   * Phase heal, of a lasting kind (its entries then need `duration:`): undoes the fault on the same
   * brokers `duration` after the start. It always runs: at its time, and at once when the trial
   * fails, throws or is interrupted while the fault lasts (before anything else is stopped).
   * Idempotent and quiet about brokers that are gone. `cut`: what its deliver returned (the heal may add to it).
   */
  heal?(cluster: FaultableCluster, brokerIds: number[], ctx: FaultContext): Promise<void>;
  /**
   * A lasting kind whose `duration` may be left out: its heal then runs when the trial ends (after
   * recovery and the check: a read-error's bad blocks stay bad through them), Ctrl-C included.
   */
  healOptional?: boolean;
  /** The load keeps running through the fault; false: the load stops at the delivery (a cut: requests to a dead broker only fail). */
  loadRunsThrough: boolean;
  /** The hit brokers are down afterwards: recovery restarts them before the check (false: it waits for leaders, catch-up and the ISR only). */
  restartsBrokers: boolean;
  /** The victims' page caches are lost (a power cut): what no completed flush covered is at risk (harness/checker/loss-prediction.ts). */
  losesPageCache: boolean;
  /**
   * It fills the victims' disks on purpose: their ENOSPC and full filesystems are the fault under test,
   * not a finding that makes the trial suspect (harness/runner/full-disk.ts); other brokers' still are.
   */
  fillsDisk?: boolean;
  /**
   * What this kind asks of the scenario beyond a deliverable target (scenario check names each):
   * its fields as parsed, the cluster, the when clause.
   */
  checkScenario?(fault: Record<string, unknown>, cluster: { brokers: number; partitions: number; replicationFactor?: number } | undefined): FaultScenarioIssue[];
  /**
   * A kind whose cell is its own trial (one recorded run, then N states), not the runner's
   * load-fault-recover loop; the runner holds that cell's code (harness/runner/own-cell.ts).
   */
  ownCell?: boolean;
  /** It acts on the lab network (each broker its own host): a scenario with it runs its cells in namespaces (cluster.network). */
  needsLabNetwork?: boolean;
  /**
   * What this kind asks of the cell's target beyond the action (a file fault's `files:` must name a
   * set the system has); `system`: the target's kind, as the refusal names it.
   */
  checkTarget?(fault: Record<string, unknown>, target: TargetCapabilities, system: string): FaultScenarioIssue[];
  /** The run's disk model id (run.json diskModel) when this kind decides it, from the target's fault disk and the scenario's disk model. */
  diskModel?(faultDisk: 'guest' | 'host' | null, vmDiskModel: string | undefined): string;
}

/** A cluster's power cut; a target that offers cut-power has one (capabilities.faultActions are checked before). */
function powerCutOf(cluster: FaultableCluster): (ids: number[]) => Promise<CutInfo> {
  if (!cluster.powerCut) throw new Error('this cluster has no power cut (its target does not offer cut-power)');
  return (ids) => cluster.powerCut!(ids);
}

export const FAULTS: Record<FaultKind, FaultKindSpec> = {
  'power-cut': {
    summary: "power cut: SIGKILL of the broker's VM, or on the host route its fault disk loses power and the broker is SIGKILLed; its page cache is lost",
    fields: {},
    needs: 'cut-power',
    losesPageCache: true,
    loadRunsThrough: false,
    restartsBrokers: true,
    deliver: (cluster, ids) => powerCutOf(cluster)(ids),
  },
  'process-kill': {
    summary: 'process kill: SIGKILL of the broker process, the page cache survives',
    fields: {},
    needs: 'kill-broker-process',
    losesPageCache: false,
    loadRunsThrough: false,
    restartsBrokers: true,
    deliver: (cluster, ids) => cluster.processKill(ids),
  },
  'crash-states': {
    summary:
      "crash states: the broker's disk (a VM's, or the host route's fault disk) records every WRITE/FLUSH/FUA/TRIM; after a power cut, N crash states are built " +
      "from the write log and checked on the host by the target's own recovery (harness/disk/crash-states; Kafka's UnifiedLog for target kafka), a sample also booted through the real broker; " +
      'a target with no offline recovery tool (nats) boots every state instead',
    // The offline check reads each state's recovered bytes as the driver's producer wrote them
    // (ClientDriver.servedFromStored); a target that boots every state (crashStateCheck 'boot')
    // reads them back through the driver's consume instead, and needs no stored-batch decoding.
    needsDriver: 'storedBatches',
    needsDriverOn: (target) => (target.crashStateCheck ?? 'offline') === 'offline',
    fields: {
      /** Crash states built per trial. */
      states: z.int().min(1).max(100_000),
      /** What of the unflushed writes persists in a state. */
      onCut: z.enum(ON_CUT_POLICIES),
      /** Seed of the crash points and of the policy's draws. */
      seed: z.int().min(0).max(2 ** 31 - 1),
      /** States also booted in a VM and checked through the broker (default 3). */
      boot: z.int().min(0).max(50),
    },
    needs: 'record-write-log',
    losesPageCache: true,
    loadRunsThrough: false,
    restartsBrokers: true,
    // The cut itself; the states are built afterwards by the kind's cell (harness/runner/crash-states/cell.ts).
    deliver: (cluster, ids) => powerCutOf(cluster)(ids),
    checkScenario(fault, cluster) {
      // One recorded disk, one partition: the states are built from one broker's write log.
      const out: FaultScenarioIssue[] = [];
      if (fault.states === undefined) out.push({ path: [], expected: 'states: N (crash states per trial, 1 .. 100000)', found: 'none' });
      if (cluster && (cluster.brokers !== 1 || cluster.partitions !== 1)) {
        out.push({ path: ['cluster'], topLevel: true, expected: 'brokers: 1 and partitions: 1 with a crash-states fault', found: `${cluster.brokers} broker(s), ${cluster.partitions} partition(s)` });
      }
      if (typeof fault.when === 'object' && fault.when !== null && 'afterAcked' in fault.when) out.push({ path: ['when'], expected: 'at or between with a crash-states fault', found: 'afterAcked' });
      return out;
    },
    ownCell: true,
    diskModel: (faultDisk, vmDiskModel) =>
      faultDisk === 'host' ? 'host-nbd-write-log-crash-states' : vmDiskModel === 'volatile-cache' ? 'nbd-write-log-crash-states' : 'recorded-write-log-crash-states',
  },
  'move-leader': {
    summary:
      "planned leader move: every partition the target leads moves to an in-sync follower through the Kafka admin API (AlterPartitionReassignments, then ElectLeaders PREFERRED), as an operator's rebalance does; no broker stops, the load runs through the hand-over",
    fields: {},
    needs: 'elect-preferred-leader',
    losesPageCache: false,
    loadRunsThrough: true,
    restartsBrokers: false,
    deliver: async (cluster, ids, { topic }) => {
      const r = await (await import('./move-leader.ts')).moveLeaders(cluster, ids, topic);
      return { brokerIds: r.brokerIds, atMs: r.atMs, leaderMoves: r.moves };
    },
    checkScenario(fault, cluster) {
      const out: FaultScenarioIssue[] = [];
      if (cluster && cluster.brokers < 2) out.push({ path: ['cluster', 'brokers'], topLevel: true, expected: 'at least 2 brokers with a move-leader fault (the leadership moves to a follower)', found: String(cluster.brokers) });
      if (cluster?.replicationFactor !== undefined && cluster.replicationFactor < 2) {
        out.push({ path: ['cluster', 'replicationFactor'], topLevel: true, expected: 'replicationFactor >= 2 with a move-leader fault (a follower to move to)', found: String(cluster.replicationFactor) });
      }
      if (fault.target === 'all' || fault.target === 'followers') {
        out.push({ path: ['target'], expected: 'leader or { broker: N } with a move-leader fault (all brokers cannot hand leadership to each other)', found: String(fault.target) });
      }
      return out;
    },
  },
  pause: {
    summary:
      "pause: SIGSTOP of the broker process (Kafka's JVM) for `duration`, then SIGCONT, as a long GC pause or a stalled VM; nothing is lost from memory, the load runs through it (acks=all waits for a paused in-sync follower until replica.lag.time.max.ms takes it out of the ISR)",
    fields: {},
    needs: 'pause-broker-process',
    losesPageCache: false,
    loadRunsThrough: true,
    restartsBrokers: false,
    deliver: async (cluster, ids) => (await import('./pause.ts')).pauseBrokers(cluster, ids),
    heal: async (cluster, ids) => (await import('./pause.ts')).resumeBrokers(cluster, ids),
  },
  partition: {
    summary:
      'network partition: traffic between the victims and `from` (rest, followers, controller, clients, broker indexes) dropped for `duration`, then healed; `links:` narrows it to replication, controller or clients traffic (nft rules in the nodes\' namespaces; the load runs through it)',
    fields: {
      /** Whom the victims are cut from (harness/faults/partition.ts); default rest. */
      from: leaf(FROM_EXPECTED, parseFrom),
      /** Only these links' ports; default: all traffic (controller and clients: their own link). */
      links: leaf(LINKS_EXPECTED, parseLinks),
    },
    needs: 'partition-network',
    needsLabNetwork: true,
    losesPageCache: false,
    loadRunsThrough: true,
    restartsBrokers: false,
    deliver: async (cluster, ids, ctx) => (await import('./partition.ts')).deliverPartition(cluster, ids, ctx),
    heal: async (_cluster, _ids, ctx) => ctx.held.heal?.(),
    checkScenario: (fault, cluster) => partitionScenarioIssues(fault, cluster),
  },
  'slow-link': {
    summary: "slow link: the victims' links capped in bandwidth (`rate:`, tc tbf) and/or losing packets at random (`loss:` per cent, nft numgen) for `duration`, then restored; `delay:` is refused (no netem on this kernel)",
    fields: {
      /** Bandwidth cap each direction, megabits per second (from `8mbit`). */
      rate: leaf(RATE_EXPECTED, parseRate),
      /** Packet loss, per cent. */
      loss: leaf(LOSS_EXPECTED, parseLoss),
      /** Refused at scenario check with the reason (slow-link-checks.ts). */
      delay: z.unknown(),
    },
    needs: 'shape-lab-network',
    needsLabNetwork: true,
    losesPageCache: false,
    loadRunsThrough: true,
    restartsBrokers: false,
    deliver: async (cluster, ids, ctx) => (await import('./slow-link.ts')).deliverSlowLink(cluster, ids, ctx),
    heal: async (_cluster, _ids, ctx) => ctx.held.heal?.(),
    checkScenario: (fault) => slowLinkScenarioIssues(fault),
  },
  'disk-full': {
    summary:
      "full disk: a filler file takes every free byte of the victims' host fault disks (fallocate, then zeros) for `duration`, under the running load, so their next appends " +
      "and flushes fail with ENOSPC (Kafka takes the log dir offline and, its only one, halts; durolab's log goes offline until restart); the heal deletes the filler, the hit brokers are restarted before the check",
    fields: {},
    needs: 'fill-disk',
    // Writes refused with ENOSPC were never acknowledged; what was written stays in the page cache and reaches the disk.
    losesPageCache: false,
    loadRunsThrough: true,
    // Neither system comes back on its own: Kafka's broker halted, durolab's keeps the log offline until it restarts.
    restartsBrokers: true,
    fillsDisk: true,
    deliver: async (cluster, ids) => (await import('./disk-full.ts')).fillDisks(cluster, ids),
    heal: async (_cluster, _ids, { cut }) => (await import('./disk-full.ts')).freeDisks(cut!),
  },
  ...FILE_KIND_ROWS,
};

/** The kind acts on the lab network: its scenario's cells run in namespaces. */
export function needsLabNetwork(kind: FaultKind): boolean {
  return FAULTS[kind].needsLabNetwork === true;
}

/** A kind that lasts (has a heal phase): its entries need `duration:`. */
export function isLasting(kind: FaultKind): boolean {
  return FAULTS[kind].heal !== undefined;
}

/** A lasting kind whose entries may leave out `duration` (healed at the trial's end). */
export function healsAtTrialEnd(kind: FaultKind): boolean {
  return FAULTS[kind].healOptional === true;
}

export const faultKindSchema = z.enum(FAULT_KINDS);

/** The fault kinds a target offering these actions can deliver. */
export function deliverableKinds(actions: readonly FaultAction[]): FaultKind[] {
  return FAULT_KINDS.filter((k) => actions.includes(FAULTS[k].needs));
}

export function canDeliver(kind: FaultKind, actions: readonly FaultAction[]): boolean {
  return actions.includes(FAULTS[kind].needs);
}
