// The steps of one trial, timed into run.json (Trial.timing) and shown by the report and the
// terminal: one list for every target (a process target has no image, boot or restart step)
// and the goals for a power-cut trial cycle: issue 14 on the VM target, issue 27 on the host route.
import type { RunResult } from './types.ts';
import { capabilitiesNamed } from '../targets/registry.ts';

/** In order. Each step is a stretch of the trial's wall time: together they sum to the cycle. */
export const TRIAL_STEPS = [
  { key: 'image', label: 'image staging', meaning: 'VM image found (or built) and hard-linked under the work dir' },
  { key: 'setup', label: 'controller + disks', meaning: 'controller started, network planned, data disks made (mkfs.ext4)' },
  { key: 'boot', label: 'VM boot', meaning: 'QEMU spawn to the guest agent answering (the slowest VM)' },
  { key: 'brokerStart', label: 'broker start', meaning: 'guest setup (sysctls, mount) and broker start to serving; a process target: broker processes to serving' },
  { key: 'leaders', label: 'leaders', meaning: 'every partition led, client connected, the broker figures read once (fault trials), up to the load start' },
  { key: 'load', label: 'load', meaning: 'load start to the fault moment (a trial without a fault: the whole load)' },
  { key: 'cut', label: 'cut', meaning: 'fault moment to the fault delivered and the load stopped (readings before the fault, SIGKILL, QEMU exit)' },
  { key: 'restart', label: 'restart boot', meaning: 'after a power cut: QEMU spawn to the agent answering again (the slowest VM)' },
  { key: 'recovery', label: 'recovery', meaning: 'mount (journal replay), broker start with log recovery, leaders elected, replicas caught up' },
  { key: 'check', label: 'check', meaning: 'checker reads and compares, replica bytes, broker figures, ledger written' },
  { key: 'stop', label: 'stop', meaning: 'cluster stopped (VMs killed), data directories removed' },
  { key: 'other', label: 'other', meaning: 'what no step above accounts for' },
] as const;

export type TrialStepKey = (typeof TRIAL_STEPS)[number]['key'];
export const TRIAL_STEP_KEYS: readonly TrialStepKey[] = TRIAL_STEPS.map((s) => s.key);

/** Figures measured inside the steps (not added to the sum). */
export interface TrialStepDetail {
  /** First boot of the slowest VM: QEMU spawn to the first line of /init. */
  spawnToInitMs?: number;
  /** Restart after a power cut: QEMU spawn to the first line of /init. */
  restartSpawnToInitMs?: number;
  /** Restart: guest setup, i.e. sysctls and the data-disk mount (ext4 replays its journal here). */
  restartMountMs?: number;
  /** Restart: broker exec to serving, in which the engine recovers its logs. */
  restartBrokerStartMs?: number;
  /** The broker's own log-recovery figure (engine recovery, summed over partitions; the slowest broker). */
  logRecoveryMs?: number;
  /** Power cut: SIGKILL to QEMU's exit (the slowest VM). */
  killToExitMs?: number;
  /** Fault trials: the first read of the broker figures, before the load (in the leaders step). */
  figuresWarmUpMs?: number;
  /** VM starts of the trial (first boots and restarts) that resumed a saved guest instead of booting (a count). */
  resumedBoots?: number;
  /** A first boot that had to make the saved guest first (one boot and a save, once per image and VM shape). */
  templateMadeMs?: number;
}

/** The keys of TrialStepDetail, each a number; medians are taken over trials. */
export const TRIAL_DETAIL_KEYS = [
  'spawnToInitMs',
  'restartSpawnToInitMs',
  'restartMountMs',
  'restartBrokerStartMs',
  'logRecoveryMs',
  'killToExitMs',
  'figuresWarmUpMs',
  'resumedBoots',
  'templateMadeMs',
] as const satisfies ReadonlyArray<keyof TrialStepDetail>;

export interface TrialTiming {
  /** Milliseconds per step; a step a trial did not have is absent. They sum to totalMs. */
  steps: Partial<Record<TrialStepKey, number>>;
  totalMs: number;
  detail?: TrialStepDetail;
  /** VM starts (first boots and restarts) that booted although they wanted to resume a saved guest, each with its reason. */
  notResumed?: string[];
  /** 1-minute load average of the host at the end of the trial, and its core count. */
  loadAvg1: number;
  cores: number;
}

/** Issue 14: a power-cut trial cycle (one VM, TCG) at most 10 s, three VMs at most 20 s, on an idle machine. */
export const CYCLE_GOALS_MS: Readonly<Record<number, number>> = { 1: 10_000, 3: 20_000 };
/** Issue 27: a power-cut trial cycle on the host route's fault disk (every target whose capabilities.faultDisk is host, any broker count) at most 20 s. */
export const HOST_ROUTE_CYCLE_GOAL_MS = 20_000;
/**
 * Issue 35: a trial whose schedule holds a lasting fault (a partition, a pause, a slow link; the
 * load runs through it, a power cut may follow), on the host route, at most 30 s: isr-shrink-power-cut
 * on Kafka, whose 10 s load waits out replica.lag.time.max.ms 5 s before its cut.
 */
export const LASTING_FAULT_CYCLE_GOAL_MS = 30_000;
/** Where a target (a kind or an axis name, as run.json records it) keeps its fault disk: the host route, a guest's, or none. */
const faultDiskOf = (target: string): 'host' | 'guest' | null => capabilitiesNamed(target)?.faultDisk ?? null;

export interface CycleVerdict {
  state: 'pass' | 'fail' | 'unknown';
  goalMs: number | null;
  reason: string;
}

/**
 * The goal holds for the median cycle of a cell's power-cut trials: on the VM target per VM
 * count (a guest's fault disk), on the host route (capabilities.faultDisk host) one goal. Above the goal it FAILs only
 * when the machine was about idle (load average at most cores + brokers: the trial's own QEMUs
 * or broker processes keep cores busy); on a busier machine it is unknown, since the goal is for
 * an idle one. `brokersOwnMs`: the median time the system under test spent starting itself (first
 * start and restart, exec to serving), measured in the same trials: the part of the cycle the lab
 * cannot shorten, named beside a verdict above the goal.
 */
export function judgeCycle(args: { medianMs: number; vms: number; loadAvg1: number; cores: number; faultKind: string; target: string; lasting?: boolean; brokersOwnMs?: number }): CycleVerdict {
  const faultDisk = faultDiskOf(args.target);
  const hostRoute = faultDisk === 'host';
  const lasting = hostRoute && args.lasting === true;
  if (!lasting && (faultDisk === null || args.faultKind !== 'power-cut')) {
    return { state: 'unknown', goalMs: null, reason: `the goal is for power-cut trials on the VM target or the host route's fault disk, and for lasting faults on the host route (this is ${args.faultKind} on ${args.target})` };
  }
  const goalMs = lasting ? LASTING_FAULT_CYCLE_GOAL_MS : hostRoute ? HOST_ROUTE_CYCLE_GOAL_MS : (CYCLE_GOALS_MS[args.vms] ?? null);
  if (goalMs === null) return { state: 'unknown', goalMs, reason: `no goal for ${args.vms} VMs (goals: 1 VM <= 10 s, 3 VMs <= 20 s)` };
  const load = `load average ${args.loadAvg1.toFixed(1)} on ${args.cores} cores`;
  if (args.medianMs <= goalMs) return { state: 'pass', goalMs, reason: `median ${(args.medianMs / 1000).toFixed(1)} s <= ${goalMs / 1000} s (${load})` };
  const own =
    args.brokersOwnMs !== undefined
      ? `; the ${args.target} brokers' own start and restart (exec to serving) take ${(args.brokersOwnMs / 1000).toFixed(1)} s of it, the rest of the cycle (disks, load, cut, check, stop) ${((args.medianMs - args.brokersOwnMs) / 1000).toFixed(1)} s`
      : '';
  const idleUpTo = args.cores + args.vms;
  if (args.loadAvg1 <= idleUpTo) return { state: 'fail', goalMs, reason: `median ${(args.medianMs / 1000).toFixed(1)} s > ${goalMs / 1000} s on an about idle machine (${load})${own}` };
  return {
    state: 'unknown',
    goalMs,
    reason: `median ${(args.medianMs / 1000).toFixed(1)} s > ${goalMs / 1000} s, but the machine was busy (${load}; idle means at most ${idleUpTo}): the goal is for an idle machine${own}`,
  };
}

/** A cell's trials step by step: the median per step over the trials that timed it, the median cycle, the goal. */
export interface CycleBreakdown {
  trials: number;
  /** Median ms per step over the trials (a step no trial had is absent). Medians need not add up to medianTotalMs. */
  medianSteps: Partial<Record<TrialStepKey, number>>;
  medianTotalMs: number;
  medianDetail: TrialStepDetail;
  loadAvg1: { min: number; max: number };
  cores: number;
  faultKind: string;
  verdict: CycleVerdict;
}

function medianOf(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Null when no trial of the cell was timed step by step. `vms`: brokers per cluster; `target`: the cell's target kind. */
export function cycleBreakdown(
  trials: ReadonlyArray<{ timing?: TrialTiming; fault?: { kind: string }; schedule?: ReadonlyArray<{ durationMs?: number | null }> }>,
  opts: { vms: number; target: string },
): CycleBreakdown | null {
  const timed = trials.filter((t): t is typeof t & { timing: TrialTiming } => t.timing !== undefined);
  if (timed.length === 0) return null;
  const medianSteps: Partial<Record<TrialStepKey, number>> = {};
  for (const key of TRIAL_STEP_KEYS) {
    const xs = timed.map((t) => t.timing.steps[key]).filter((v): v is number => typeof v === 'number');
    if (xs.length) medianSteps[key] = Math.round(medianOf(xs));
  }
  const medianDetail: TrialStepDetail = {};
  for (const key of TRIAL_DETAIL_KEYS) {
    const xs = timed.map((t) => t.timing.detail?.[key]).filter((v): v is number => typeof v === 'number');
    if (xs.length) medianDetail[key] = Math.round(medianOf(xs));
  }
  const medianTotalMs = Math.round(medianOf(timed.map((t) => t.timing.totalMs)));
  const loads = timed.map((t) => t.timing.loadAvg1);
  const kinds = [...new Set(timed.map((t) => t.fault?.kind ?? 'none'))];
  const faultKind = kinds.length === 1 ? kinds[0]! : kinds.join('+');
  const cores = timed[0]!.timing.cores;
  // A lasting entry (with a duration) in the schedule: the load ran through a fault that healed.
  const lasting = timed.some((t) => (t.schedule ?? []).some((e) => typeof e.durationMs === 'number'));
  return {
    trials: timed.length,
    medianSteps,
    medianTotalMs,
    medianDetail,
    loadAvg1: { min: Math.min(...loads), max: Math.max(...loads) },
    cores,
    faultKind,
    verdict: judgeCycle({ medianMs: medianTotalMs, vms: opts.vms, loadAvg1: medianOf(loads), cores, faultKind, target: opts.target, lasting, ...brokersOwn(medianSteps, medianDetail, opts.target) }),
  };
}

/**
 * On the host route the broker start step is the brokers' own start (the fault disks are the
 * setup step) and restartBrokerStartMs their restart: together what the system under test itself takes.
 */
function brokersOwn(steps: Partial<Record<TrialStepKey, number>>, detail: TrialStepDetail, target: string): { brokersOwnMs?: number } {
  if (faultDiskOf(target) !== 'host' || steps.brokerStart === undefined || detail.restartBrokerStartMs === undefined) return {};
  return { brokersOwnMs: steps.brokerStart + detail.restartBrokerStartMs };
}

/** Per cell with timed trials, its breakdown (cells of a target axis keep their own target). */
export function cycleBreakdowns(run: RunResult): Array<{ cell: string; b: CycleBreakdown }> {
  const vms = Number((run.settings.cluster as { brokers?: number } | undefined)?.brokers ?? 0);
  return run.cells.flatMap((c) => {
    const b = cycleBreakdown(c.trials ?? [], { vms, target: c.target ?? run.target });
    return b ? [{ cell: c.id, b }] : [];
  });
}
