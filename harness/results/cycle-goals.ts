// The goals for a trial cycle and a cell's verdict on them: issue 14 (a power cut on the VM
// target), issue 27 (on the host route's fault disk), issue 35 (a lasting fault on the host
// route). The steps themselves are trial-steps.ts.
import type { RunResult } from './types.ts';
import { TRIAL_DETAIL_KEYS, TRIAL_STEP_KEYS, type TrialStepDetail, type TrialStepKey, type TrialTiming } from './trial-steps.ts';

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
/** Where a target keeps its fault disk: the host route, a guest's, or none (its registry row says: harness/targets/run-targets.ts). */
export type FaultDiskPlace = 'host' | 'guest' | null;
/** Where the target a run.json names kept its fault disk. */
export type FaultDiskOf = (target: string) => FaultDiskPlace;

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
export function judgeCycle(args: { medianMs: number; vms: number; loadAvg1: number; cores: number; faultKind: string; target: string; faultDisk: FaultDiskPlace; lasting?: boolean; brokersOwnMs?: number }): CycleVerdict {
  const faultDisk = args.faultDisk;
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
  opts: { vms: number; target: string; faultDisk: FaultDiskPlace },
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
    verdict: judgeCycle({ medianMs: medianTotalMs, vms: opts.vms, loadAvg1: medianOf(loads), cores, faultKind, target: opts.target, faultDisk: opts.faultDisk, lasting, ...brokersOwn(medianSteps, medianDetail, opts.faultDisk) }),
  };
}

/**
 * On the host route the broker start step is the brokers' own start (the fault disks are the
 * setup step) and restartBrokerStartMs their restart: together what the system under test itself takes.
 */
function brokersOwn(steps: Partial<Record<TrialStepKey, number>>, detail: TrialStepDetail, faultDisk: FaultDiskPlace): { brokersOwnMs?: number } {
  if (faultDisk !== 'host' || steps.brokerStart === undefined || detail.restartBrokerStartMs === undefined) return {};
  return { brokersOwnMs: steps.brokerStart + detail.restartBrokerStartMs };
}

/** Per cell with timed trials, its breakdown (cells of a target axis keep their own target; faultDiskOf answers where each kept its fault disk). */
export function cycleBreakdowns(run: RunResult, faultDiskOf: FaultDiskOf): Array<{ cell: string; b: CycleBreakdown }> {
  const vms = Number((run.settings.cluster as { brokers?: number } | undefined)?.brokers ?? 0);
  return run.cells.flatMap((c) => {
    const target = c.target ?? run.target;
    const b = cycleBreakdown(c.trials ?? [], { vms, target, faultDisk: faultDiskOf(target) });
    return b ? [{ cell: c.id, b }] : [];
  });
}
