// A trial's fault schedule (the scenario's `faults:` list), applied in order while the load runs:
// each entry waits for its moment (from the load's start; harness/faults/schedule.ts), resolves
// its victims then, and is delivered through its kind's phase hooks (harness/faults/registry.ts):
// start; for a lasting kind its heal `duration` later, on a timer, while the next entries go on;
// the load stopped at an entry that needs it stopped (a kill, a cut). Every heal always runs: at
// its time, at once on Ctrl-C or when the schedule fails, and through the attempt's release
// (onLasting) when the trial fails elsewhere. Resolves once every started entry has healed.
import type { Fault } from '../model/scenario.ts';
import type { CutInfo, FaultableCluster } from '../targets/types.ts';
import type { AckLedger } from '../history/ledger.ts';
import type { ClusterClient } from '../drivers/types.ts';
import type { ScheduleEntryOutcome } from '../results/types.ts';
import { planFault, waitForFaultMoment, type FaultPlan } from '../faults/schedule.ts';
import { resolveVictims } from '../faults/victims.ts';
import { healFault, injectFault } from '../faults/inject.ts';
import { type FaultContext } from '../faults/fault-context.ts';
import { FAULTS } from '../faults/registry.ts';
import { recordHwBeforeFault } from '../checker/after-fault.ts';
import type { DataFileSets } from '../targets/data-files.ts';

export interface FiredFault {
  plan: FaultPlan;
  targets: number[];
  cut: CutInfo;
  /** Each partition's leader just before the fault (null: none), for the loss prediction. */
  leaders: Map<number, number | null>;
}

/** One entry as the schedule ran it. */
export interface ScheduledEntry {
  plan: FaultPlan;
  /** Set once it started. */
  fired: FiredFault | null;
  /** Wall clock of its heal (lasting kinds), once healed. */
  healedAtMs: number | null;
  /** Why it never started. */
  notStarted?: string;
}

export interface ScheduleOptions {
  faults: readonly Fault[];
  /** The trial's seed: entry 0's `between` draw uses it as is (a one-entry schedule replays as before), later entries derive theirs. */
  seed: number;
  cluster: FaultableCluster;
  topic: string;
  ledger: AckLedger;
  loadStartMs: number;
  loadDone: Promise<unknown>;
  /** Stops the load generator (right after an entry that needs it stopped went out). */
  stopLoad: () => void;
  signal: AbortSignal;
  /** The client driver: the HW before the trial's main entry (a driver whose produce answers carry it reads nothing), `followers` victims' ISR. */
  client?: Pick<ClusterClient, 'highWatermarks' | 'inSyncReplicas'>;
  /** The target's data files (capabilities.dataFiles), for file faults. */
  dataFiles?: DataFileSets;
  /** Just before the first entry is delivered (marks later produce failures as after the fault). */
  atFirst?: () => void;
  /** Just before the main entry (mainEntry()) is delivered: figures a restart would reset. */
  beforeMain?: () => Promise<void>;
  /** A lasting entry started: its heal, for the attempt's release to run if the trial fails first (idempotent). */
  onLasting?: (heal: () => Promise<void>) => void;
}

export interface ScheduleOutcome {
  entries: ScheduledEntry[];
  /** The trial's fault (run.json's trial.fault): the main entry if it started, else the first that did; null when none did. */
  fired: FiredFault | null;
  /** The brokers recovery restarts before the check: every started entry's whose kind restarts them. */
  restart: number[];
  /** The `when` of the first entry that never started (null: all did). */
  unfired: string | null;
}

/** The entry whose moment is the trial's cut: the first whose kind restarts brokers, else the first. */
export function mainEntry(faults: readonly Fault[]): number {
  return Math.max(0, faults.findIndex((f) => FAULTS[f.kind].restartsBrokers));
}

/** Entry i's seed: the trial's for entry 0, a derived one after. */
export function entrySeed(trialSeed: number, i: number): number {
  return i === 0 ? trialSeed : (trialSeed + Math.imul(i, 0x9e3779b1)) >>> 0;
}

/** A lasting entry's heal: on a timer, at once on request (abort, failure, release); runs once. */
class PendingHeal {
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null;
  readonly done: Promise<void>;
  private finish!: (err?: unknown) => void;

  constructor(
    private readonly heal: () => Promise<void>,
    dueMs: number,
    private readonly signal: AbortSignal,
    private readonly onHealed: (atMs: number) => void,
  ) {
    this.done = new Promise<void>((resolve, reject) => (this.finish = (err) => (err === undefined ? resolve() : reject(err))));
    this.done.catch(() => undefined);
    this.timer = setTimeout(() => void this.now().catch(() => undefined), Math.max(0, dueMs - Date.now()));
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  private readonly onAbort = (): void => void this.now().catch(() => undefined);

  now(): Promise<void> {
    if (this.running) return this.running;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.signal.removeEventListener('abort', this.onAbort);
    const atMs = Date.now();
    this.running = this.heal().then(
      () => {
        this.onHealed(atMs);
        this.finish();
      },
      (err: unknown) => {
        this.finish(err ?? new Error('heal failed'));
        throw err;
      },
    );
    return this.running;
  }
}

export async function driveSchedule(opts: ScheduleOptions): Promise<ScheduleOutcome> {
  const plans = opts.faults.map((f, i) => planFault(f, entrySeed(opts.seed, i)));
  const entries: ScheduledEntry[] = plans.map((plan) => ({ plan, fired: null, healedAtMs: null }));
  const main = mainEntry(opts.faults);
  const heals: PendingHeal[] = [];
  let unfired: string | null = null;
  try {
    for (const [i, plan] of plans.entries()) {
      const moment = await waitForFaultMoment(plan, {
        loadStartMs: opts.loadStartMs,
        ackedRecords: () => opts.ledger.counts().ackedRecords,
        loadDone: opts.loadDone,
        signal: opts.signal,
      });
      if (moment !== 'fire') {
        unfired = plan.whenText;
        const why = moment === 'aborted' ? 'interrupted (Ctrl-C) before it started' : 'the load ended before it started';
        for (const e of entries.slice(i)) e.notStarted = why;
        break;
      }
      const spec = FAULTS[plan.fault.kind];
      let cut: CutInfo;
      let targets: number[] = [];
      // One per entry: its start and its heal share it (what the heal undoes).
      const fctx: FaultContext = { topic: opts.topic, fault: plan.fault, ...(opts.client ? { isr: opts.client } : {}), held: {}, seed: entrySeed(opts.seed, i), signal: opts.signal, ...(opts.dataFiles ? { dataFiles: opts.dataFiles } : {}) };
      try {
        targets = await resolveVictims(plan.fault.target, opts.cluster, opts.topic, opts.client);
        if (i === main) await Promise.all([opts.beforeMain?.(), opts.client ? recordHwBeforeFault(opts.client, opts.topic, opts.ledger) : undefined]);
        if (i === 0) opts.atFirst?.();
        const leaders = new Map(opts.ledger.partitions().map((p) => [p, opts.cluster.leaderId(opts.topic, p)]));
        cut = await injectFault(plan.fault, opts.cluster, targets, fctx);
        fctx.cut = cut;
        entries[i]!.fired = { plan, targets, cut, leaders };
      } finally {
        if (!spec.loadRunsThrough) opts.stopLoad();
      }
      if (spec.heal && plan.fault.duration === undefined && spec.healOptional) {
        // No duration: it lasts through recovery and the check; the attempt's release heals it (Ctrl-C included).
        let healed: Promise<void> | null = null;
        const entry = entries[i]!;
        opts.onLasting?.(() => (healed ??= healFault(plan.fault, opts.cluster, targets, fctx).then(() => void (entry.healedAtMs = Date.now()))));
      } else if (spec.heal) {
        const entry = entries[i]!;
        const pending = new PendingHeal(() => healFault(plan.fault, opts.cluster, targets, fctx), cut.atMs + (plan.fault.duration ?? 0) * 1000, opts.signal, (at) => (entry.healedAtMs = at));
        heals.push(pending);
        opts.onLasting?.(() => pending.now());
      }
    }
  } catch (err) {
    // Heal at once what lasts: nothing may stay paused or cut off because a later entry failed.
    await Promise.allSettled(heals.map((h) => h.now()));
    throw err;
  }
  await Promise.all(heals.map((h) => h.done));
  const started = entries.filter((e) => e.fired !== null);
  const fired = entries[main]?.fired ?? started[0]?.fired ?? null;
  const restart = [...new Set(started.filter((e) => FAULTS[e.plan.fault.kind].restartsBrokers).flatMap((e) => e.fired!.targets))];
  return { entries, fired, restart, unfired };
}

/** The brokers whose disks the started entries filled on purpose (kinds whose registry row says fillsDisk). */
export function filledOnPurpose(entries: readonly ScheduledEntry[]): number[] {
  return [...new Set(entries.filter((e) => e.fired && FAULTS[e.plan.fault.kind].fillsDisk).flatMap((e) => e.fired!.targets))];
}

/** Entries that lasted over a moment (started before it, healed after it or not at all): a quiet ack stream then is theirs. */
export function lastingAt(entries: readonly ScheduledEntry[], atMs: number): ScheduledEntry[] {
  return entries.filter((e) => e.fired && FAULTS[e.plan.fault.kind].heal && e.fired.cut.atMs < atMs && (e.healedAtMs === null || e.healedAtMs >= atMs));
}

/** The schedule as run.json keeps it: each entry's start and heal in ms from the load's start. */
export function scheduleOutcome(entries: readonly ScheduledEntry[], loadStartMs: number): ScheduleEntryOutcome[] {
  return entries.map((e, i) => ({
    entry: i,
    kind: e.plan.fault.kind,
    when: e.plan.whenText,
    ...(e.plan.seed !== undefined ? { seed: e.plan.seed } : {}),
    ...(e.plan.fault.duration !== undefined ? { durationMs: Math.round(e.plan.fault.duration * 1000) } : {}),
    ...(e.fired ? { targets: e.fired.targets } : {}),
    startMs: e.fired ? e.fired.cut.atMs - loadStartMs : null,
    ...(FAULTS[e.plan.fault.kind].heal ? { healMs: e.healedAtMs === null ? null : e.healedAtMs - loadStartMs } : {}),
    ...(cutDetail(e.fired?.cut) ? { detail: cutDetail(e.fired?.cut)! } : {}),
    ...(e.notStarted ? { note: e.notStarted } : {}),
  }));
}

function cutDetail(cut: CutInfo | undefined): string | undefined {
  if (cut?.partition) return cut.partition.description;
  if (cut?.slowLink) return [cut.slowLink.rateMbit !== undefined ? `${cut.slowLink.rateMbit} Mbit/s` : '', cut.slowLink.lossPercent !== undefined ? `${cut.slowLink.lossPercent} % loss` : ''].filter(Boolean).join(', ');
  return undefined;
}

/** The schedule in one terminal line: `pause of broker 2 1.00-3.01 s; process-kill of broker 1 at 4.00 s`. */
export function scheduleLine(schedule: readonly ScheduleEntryOutcome[]): string {
  const s = (ms: number) => (ms / 1000).toFixed(2);
  return schedule
    .map((e) => {
      if (e.startMs === null) return `${e.kind} (${e.when}) not started: ${e.note ?? 'no reason recorded'}`;
      const who = `${e.kind} of broker ${(e.targets ?? []).join(', ')}${e.detail ? ` (${e.detail})` : ''}`;
      if (e.healMs === undefined) return `${who} at ${s(e.startMs)} s`;
      // A lasting kind without a duration (read-error): it lasts through recovery and the check.
      if (e.durationMs === undefined) return `${who} from ${s(e.startMs)} s to the trial's end`;
      return `${who} ${s(e.startMs)}-${e.healMs === null ? 'not healed' : `${s(e.healMs)} s`}`;
    })
    .join('; ');
}
