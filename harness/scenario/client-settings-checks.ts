// Checks of the client-side settings a scenario may set per cell (harness/scenario/settings.ts
// CLIENT_SETTINGS): a `driver` setting or axis names drivers every target of the run can talk
// to; a setting only some driver reads (kafka: `enable.idempotence`, `max.in.flight`, `library`)
// and a workload.producer: block need such a driver in some cell (harness/drivers/registry.ts);
// an idempotent cell keeps no more sends in flight than its driver's client library allows
// (librdkafka 5, @platformatic/kafka 1).
import type { ScenarioIssue } from './errors.ts';
import type { SettingValue } from './settings.ts';
import type { SourceFile } from './source.ts';
import type { MatrixCell } from '../model/scenario.ts';
import { cellTargetKind } from './target-axis.ts';
import { FAULTS } from '../faults/registry.ts';
import type { FaultKind } from '../model/kinds.ts';
import { DRIVER_NAMES, DRIVERS, driversReading, isDriverName, type DriverCapabilities } from '../drivers/registry.ts';
import { capabilitiesOf, type TargetKind } from '../targets/registry.ts';
import type { KafkaProducerSettings } from '../model/kafka-producer.ts';

export interface ClientSettingsInput {
  src: SourceFile;
  layers: ReadonlyArray<{ path: PropertyKey[]; values: Record<string, SettingValue[]> }>;
  /** The run's targets, or null when the target is misspelt (reported elsewhere). */
  kinds: TargetKind[] | null;
  /** The scenario's target (a cell off a target axis runs on it); with `cells`, each cell's driver is checked against its own target. */
  scenarioTarget?: TargetKind;
  /** workload.driver as resolved for the target(s). */
  driver: string | undefined;
  producer: KafkaProducerSettings | undefined;
  pipelining: number | undefined;
  baseSettings: Record<string, SettingValue> | undefined;
  cells: MatrixCell[] | undefined;
  /** The scenario's faults: a kind may need something of the cells' drivers (FaultKindSpec.needsDriver). */
  faults?: ReadonlyArray<{ kind: FaultKind; target?: unknown }>;
}

/** The drivers the run's cells use: workload.driver unless every cell names its own. */
export function checkClientSettings(input: ClientSettingsInput): ScenarioIssue[] {
  const { src, layers, kinds, driver, producer } = input;
  const issues: ScenarioIssue[] = [];
  const cellDrivers = new Set<string>(driver ? [driver] : []);
  const can = kinds ? DRIVER_NAMES.filter((x) => kinds.every((k) => capabilitiesOf(k).drivers.includes(x))) : null;
  // With the cells known (excludes applied), each cell's driver is judged against its own target:
  // a target axis may pair each target with a driver of its own (a driver axis, the other pairs excluded).
  const perCell = input.cells !== undefined && kinds !== null && input.scenarioTarget !== undefined;
  for (const layer of layers) {
    const ds = layer.values.driver;
    if (!ds) continue;
    const isAxis = layer.path[0] === 'matrix' && layer.path.length === 1;
    // An axis or base setting gives every cell its driver; workload.driver is then unused.
    if (layer.path.length === 1 && driver) cellDrivers.delete(driver);
    ds.forEach((d, i) => {
      cellDrivers.add(String(d));
      if (!perCell && can && kinds && !(can as readonly string[]).includes(String(d))) {
        const path = isAxis ? [...layer.path, 'driver', i] : [...layer.path, 'driver'];
        issues.push(src.issue(path, `a driver target: ${kinds.join(', ')} can talk to (${can.join(' | ') || 'none in common'})`, `'${String(d)}'`));
      }
    });
  }
  if (perCell) issues.push(...checkCellDrivers(src, layers, input.cells!, input.scenarioTarget!));
  const driverOnly = [...new Set(DRIVER_NAMES.flatMap((d) => DRIVERS[d].capabilities.settings))];
  for (const layer of layers) {
    for (const name of driverOnly) {
      const readers = driversReading(name);
      if (name in layer.values && !readers.some((d) => cellDrivers.has(d))) {
        issues.push(src.issue([...layer.path, name], `${name} only with the ${readers.join(' or ')} driver (workload.driver: ${readers.join(' | ')} or a driver: [${readers.join(', ')}] axis)`, name, { key: true }));
      }
    }
  }
  const producerDrivers = DRIVER_NAMES.filter((d) => DRIVERS[d].capabilities.producerBlock);
  if (producer && !producerDrivers.some((d) => cellDrivers.has(d))) {
    issues.push(src.issue(['workload', 'producer'], `no producer: block unless workload.driver is ${producerDrivers.join(' or ')} (it sets that driver's client producer)`, 'a producer: block', { key: true }));
  }
  for (const cell of input.cells ?? []) {
    const p = { ...input.baseSettings, ...cell.params };
    const idempotent = p['enable.idempotence'] ?? producer?.['enable.idempotence'] ?? false;
    const inFlight = Number(p['max.in.flight'] ?? producer?.['max.in.flight'] ?? input.pipelining ?? 1);
    const cellDriver = p.driver ?? driver;
    const limit = isDriverName(cellDriver) ? DRIVERS[cellDriver].capabilities.idempotentInFlightLimit?.(p.library ?? producer?.library) : undefined;
    if (limit && idempotent === true && inFlight > limit.max) {
      const path = 'max.in.flight' in cell.params ? ['matrix', 'max.in.flight'] : producer?.['max.in.flight'] !== undefined ? ['workload', 'producer', 'max.in.flight'] : ['workload', 'pipelining'];
      issues.push(src.issue(path, `max.in.flight at most ${limit.max} in cell ${cell.id} (enable.idempotence: true, library ${limit.library}; ${limit.why})`, String(inFlight)));
      break;
    }
  }
  issues.push(...checkFaultDriverNeeds(src, input, cellDrivers));
  return issues;
}

/** Each cell whose driver a setting or axis gives (not workload.driver: validate.ts judges that) talks to its own target. */
function checkCellDrivers(src: SourceFile, layers: ClientSettingsInput['layers'], cells: MatrixCell[], scenarioTarget: TargetKind): ScenarioIssue[] {
  const out = new Map<string, ScenarioIssue>();
  const base = layers.find((l) => l.path.length === 1 && l.path[0] === 'settings')?.values.driver?.[0];
  for (const cell of cells) {
    const d = cell.params.driver ?? base;
    if (d === undefined) continue;
    const kind = cellTargetKind(cell.params, scenarioTarget);
    const drivers = capabilitiesOf(kind).drivers;
    if ((drivers as readonly string[]).includes(String(d))) continue;
    const layer = cell.params.driver === undefined ? undefined : layers.find((l) => l.path[0] === 'matrix' && l.values.driver?.includes(d));
    const path = !layer ? ['settings', 'driver'] : layer.path.length === 1 ? [...layer.path, 'driver', layer.values.driver!.indexOf(d)] : [...layer.path, 'driver'];
    const issue = src.issue(path, `a driver target: ${kind} can talk to (${drivers.join(' | ')}) in cell ${cell.id}, or that pair excluded (matrix.exclude)`, `'${String(d)}'`);
    out.set(`${path.join('.')}|${kind}`, issue);
  }
  return [...out.values()];
}

/** Each cell's driver and target; without the cells, every driver the run uses with each of its targets. */
function driverTargetPairs(input: ClientSettingsInput, cellDrivers: ReadonlySet<string>): Array<{ driver: string; kind: TargetKind | null }> {
  if (input.cells !== undefined && input.scenarioTarget !== undefined && input.kinds !== null) {
    return input.cells.map((cell) => ({ driver: String({ ...input.baseSettings, ...cell.params }.driver ?? input.driver), kind: cellTargetKind(cell.params, input.scenarioTarget!) }));
  }
  return [...cellDrivers].flatMap((driver) => (input.kinds ?? [null]).map((kind) => ({ driver, kind })));
}

/**
 * A fault entry that needs something of the client driver refuses a cell driver without it: its
 * kind's need (crash states checked offline: stored batches decoded) on the cell's target where
 * the need applies there (FaultKindSpec.needsDriverOn), or its victims' (followers: the ISR read).
 */
function checkFaultDriverNeeds(src: SourceFile, input: ClientSettingsInput, cellDrivers: ReadonlySet<string>): ScenarioIssue[] {
  const out: ScenarioIssue[] = [];
  const pairs = driverTargetPairs(input, cellDrivers);
  (input.faults ?? []).forEach((f, i) => {
    const needs: Array<[keyof DriverCapabilities, PropertyKey, string, (kind: TargetKind | null) => boolean]> = [];
    const spec = FAULTS[f.kind];
    if (spec?.needsDriver) needs.push([spec.needsDriver, 'kind', `fault ${f.kind}`, (kind) => kind === null || (spec.needsDriverOn?.(capabilitiesOf(kind)) ?? true)]);
    if (f.target === 'followers' || f.target === 'one' || f.target === 'minority' || f.target === 'majority') {
      needs.push(['isr', 'target', `target ${f.target} (read from the leader's in-sync replicas)`, () => true]);
    }
    for (const [need, field, what, appliesOn] of needs) {
      const lacking = [...new Set(pairs.filter((p) => appliesOn(p.kind) && isDriverName(p.driver) && !DRIVERS[p.driver].capabilities[need]).map((p) => p.driver))];
      if (lacking.length === 0) continue;
      const able = DRIVER_NAMES.filter((d) => DRIVERS[d].capabilities[need]);
      out.push(src.issue(['faults', i, field], `a driver that offers ${need} for ${what} (${able.join(' | ') || 'none does'})`, `driver ${lacking.join(', ')}`));
    }
  });
  return out;
}
