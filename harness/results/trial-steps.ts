// The steps of one trial, timed into run.json (Trial.timing) and shown by the report and the
// terminal: one list for every target (a process target has no image, boot or restart step).
// The goals for a trial cycle and the verdicts on them are cycle-goals.ts.

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
