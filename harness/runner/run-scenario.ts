// Runs a scenario: the run record, then its matrix cell by cell (a cell's target, driver and
// host sysctls; its repetitions are run-cell.ts); run.json is rewritten after every cell so an
// interrupted run keeps what finished.
import { randomInt } from 'node:crypto';
import { execa } from 'execa';
import { everyFaultEntry, type Scenario, type MatrixCell } from '../model/scenario.ts';
import type { ResolvedSettings } from '../model/settings.ts';
import { hostGlobalWrite } from '../scenario/settings.ts';
import { cellSettings, evaluateExpectations } from '../scenario/index.ts';
import { collectEnvironment } from '../probes/index.ts';
import { isDriverName, loadDriver, type DriverName } from '../drivers/registry.ts';
import type { ClientDriver } from '../drivers/types.ts';
import { RunStore, newRunId } from '../results/store.ts';
import type { RunResult } from '../results/types.ts';
import { loadTarget, type TargetKind } from '../targets/registry.ts';
import { scenarioWants } from '../faults/scenario-wants.ts';
import { cellTargetKind } from '../scenario/target-axis.ts';
import { HostSysctls } from '../targets/host-sysctl.ts';
import { skippedCell } from './cell-result.ts';
import { diskModelIdFor } from '../targets/run-targets.ts';
import { FAULTS } from '../faults/registry.ts';
import { runCell } from './run-cell.ts';
import { checkEvidenceSpace, type EvidenceSpaceNeed } from './trial-evidence.ts';
import { capabilitiesOf } from '../targets/registry.ts';
import type { RunOptions } from './run-options.ts';
import type { Target } from '../targets/types.ts';
import { cellFaultDisk } from '../targets/host-fault-disks.ts';

export interface RunOutcome {
  run: RunResult;
  runDir: string;
  runFile: string;
}

async function gitCommit(): Promise<string | null> {
  try {
    const { stdout } = await execa('git', ['rev-parse', 'HEAD'], { reject: false, timeout: 2000 });
    return /^[0-9a-f]{40}$/.test(stdout.trim()) ? stdout.trim() : null;
  } catch {
    return null;
  }
}

export async function runScenario(opts: RunOptions): Promise<RunOutcome> {
  const { scenario, log } = opts;
  const baseSeed = opts.baseSeed ?? randomInt(2 ** 31);
  opts = { ...opts, baseSeed };
  const runId = newRunId();
  const store = new RunStore(opts.resultsDir, scenario.name, runId);
  const environment = await collectEnvironment(store.dir);
  const run: RunResult = {
    schemaVersion: 1,
    scenario: { name: scenario.name, file: scenario.file, question: scenario.question, raw: scenario.raw },
    runId,
    status: 'incomplete',
    startedAt: new Date().toISOString(),
    endedAt: null,
    gitCommit: await gitCommit(),
    environment,
    settings: {
      ...scenario.settings,
      workload: scenario.workload,
      cluster: scenario.cluster,
      ...(scenario.faults.length ? { faults: scenario.faults, faultSeed: baseSeed } : {}),
      ...(Object.keys(scenario.faultSets).length ? { faultSets: scenario.faultSets, faultSeed: baseSeed } : {}),
      ...(scenario.vm ? { vm: scenario.vm } : {}),
    },
    target: opts.target.kind,
    ...(opts.target.info ? { targetInfo: await opts.target.info() } : {}),
    // A kind that decides the disk model (crash states) is alone in its schedule (schedule-checks.ts).
    ...(scenario.faults[0] && FAULTS[scenario.faults[0].kind].diskModel
      ? { diskModel: FAULTS[scenario.faults[0].kind].diskModel!(opts.target.capabilities.faultDisk, scenario.vm?.disk?.model) }
      : diskModelIdFor(opts.target)
        ? { diskModel: diskModelIdFor(opts.target) }
        : {}),
    cells: [],
    expectations: [],
  };
  if (opts.keepData) {
    const space = checkEvidenceSpace(evidenceSpaceNeed(scenario, opts.target.kind), opts.resultsDir);
    if (space) log(space);
  }
  let runFile = store.save(run);
  const sysctls = new HostSysctls();
  const caps = opts.target.capabilities;
  // A cell's `driver` setting (a driver axis) overrides workload.driver; each loads once.
  const drivers = new Map<string, ClientDriver>();
  const driverOf = async (settings: ResolvedSettings): Promise<ClientDriver> => {
    const name = cellDriverName(settings, scenario.workload.driver);
    let d = drivers.get(name);
    if (!d) drivers.set(name, (d = await loadDriver(name)));
    return d;
  };
  const targets = new Map<TargetKind, Target>([[opts.target.kind, opts.target]]);
  const targetOf = async (cell: MatrixCell): Promise<Target> => {
    const kind = cellTargetKind(cell.params, opts.target.kind);
    let t = targets.get(kind);
    if (!t) {
      t = await loadTarget(kind, { scenario, wants: scenarioWants(scenario), log });
      targets.set(kind, t);
      if (t.info) run.targetInfos = { ...run.targetInfos, [kind]: await t.info() };
    }
    return t;
  };
  const started = Date.now();
  try {
    for (const [i, cell] of scenario.matrix.entries()) {
      if (opts.signal.aborted) break;
      const settings = cellSettings(scenario, cell);
      const prefix = `[cell ${i + 1}/${scenario.matrix.length} ${cell.label}]`;
      // Host-global writes: the vm.* sysctls, and client settings like consumer.cache: cold (vm.drop_caches).
      const hostWrites = Object.entries(settings.values).flatMap(([n, v]) => hostGlobalWrite(n, v) ?? []);
      const hasSysctls = hostWrites.length > 0;
      // On a target whose sysctls are the host's, only with --allow-host-sysctl; a VM sets them in its guest.
      const onHost = hasSysctls && caps.sysctls === 'host';
      if (onHost && !opts.allowHostSysctl) {
        const note = `sets host sysctls (${hostWrites.join(', ')}); rerun with --allow-host-sysctl as root to change them (they are restored afterwards; the dropped page cache refills)`;
        log(`${prefix} skipped: ${note}`);
        run.cells.push(skippedCell(cell.id, cell.params, 'skipped', note));
        runFile = store.save(run);
        continue;
      }
      try {
        if (onHost) sysctls.apply(settings.sysctls);
        // A target axis (matrix.target): this cell's own target, loaded once per kind.
        const target = await targetOf(cell);
        const result = await runCell({ ...opts, target }, await driverOf(settings), store, i, cell, settings, (line) => log(`${prefix} ${line}`), started);
        if (target !== opts.target) result.target = target.kind;
        run.cells.push(result);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const status = opts.signal.aborted ? 'interrupted' : 'failed';
        log(`${prefix} ${status}: ${message}`);
        run.cells.push(skippedCell(cell.id, cell.params, status, message));
      } finally {
        try {
          sysctls.restore();
        } catch (err) {
          // Left saved: the exit hook tries again. The cell's own outcome stands.
          log(`${prefix} ${(err as Error).message}`);
        }
      }
      runFile = store.save(run);
    }
  } finally {
    sysctls.dispose();
  }
  run.expectations = evaluateExpectations(scenario, run.cells);
  const allRan = run.cells.length === scenario.matrix.length && run.cells.every((c) => c.status !== 'interrupted');
  run.status = opts.signal.aborted || !allRan ? 'incomplete' : 'complete';
  run.endedAt = new Date().toISOString();
  runFile = store.save(run);
  return { run, runDir: store.dir, runFile };
}

/** The cell's driver: its `driver` setting (axis or base settings), else workload.driver. */
function cellDriverName(settings: ResolvedSettings, workloadDriver: DriverName): DriverName {
  const d = settings.values.driver;
  return isDriverName(d) ? d : workloadDriver;
}

/** Trials that keep disk images (host-route fault disks under a fault that cuts power) and one trial's images at most. */
function evidenceSpaceNeed(scenario: Scenario, defaultTarget: TargetKind): EvidenceSpaceNeed {
  const fault = everyFaultEntry(scenario).find((f) => FAULTS[f.kind].needs === 'cut-power');
  if (!fault || FAULTS[fault.kind].ownCell) return { trials: 0, perTrialBytes: 0 };
  let trials = 0;
  let perTrialBytes = 0;
  for (const cell of scenario.matrix) {
    if (capabilitiesOf(cellTargetKind(cell.params, defaultTarget)).faultDisk !== 'host') continue;
    const settings = cellSettings(scenario, cell);
    if (settings.values.measure === 'throughput') continue;
    trials += scenario.workload.repetitions;
    const disk = cellFaultDisk(scenario.vm, settings.values);
    perTrialBytes = Math.max(perTrialBytes, 2 * scenario.cluster.brokers * disk.sizeMiB * 1024 * 1024);
  }
  return { trials, perTrialBytes };
}
