// Checks of the client-side settings a scenario may set per cell (harness/scenario/settings.ts
// CLIENT_SETTINGS): a `driver` setting or axis names drivers every target of the run can talk
// to; `enable.idempotence` / `max.in.flight` and a workload.producer: block need the kafka
// driver in some cell; an idempotent cell keeps no more sends in flight than its client library
// allows (librdkafka 5, @platformatic/kafka 1).
import type { ScenarioIssue } from './errors.ts';
import type { SettingValue } from './settings.ts';
import type { SourceFile } from './source.ts';
import type { MatrixCell } from './types.ts';
import { DRIVER_NAMES } from '../drivers/registry.ts';
import { capabilitiesOf, type TargetKind } from '../targets/registry.ts';
import { idempotentInFlightLimit, type KafkaProducerSettings } from '../drivers/kafka/producer-settings.ts';
import { isKafkaLibraryName } from '../drivers/kafka/libraries.ts';

export interface ClientSettingsInput {
  src: SourceFile;
  layers: ReadonlyArray<{ path: PropertyKey[]; values: Record<string, SettingValue[]> }>;
  /** The run's targets, or null when the target is misspelt (reported elsewhere). */
  kinds: TargetKind[] | null;
  /** workload.driver as resolved for the target(s). */
  driver: string | undefined;
  producer: KafkaProducerSettings | undefined;
  pipelining: number | undefined;
  baseSettings: Record<string, SettingValue> | undefined;
  cells: MatrixCell[] | undefined;
}

/** The drivers the run's cells use: workload.driver unless every cell names its own. */
export function checkClientSettings(input: ClientSettingsInput): ScenarioIssue[] {
  const { src, layers, kinds, driver, producer } = input;
  const issues: ScenarioIssue[] = [];
  const cellDrivers = new Set<string>(driver ? [driver] : []);
  const can = kinds ? DRIVER_NAMES.filter((x) => kinds.every((k) => capabilitiesOf(k).drivers.includes(x))) : null;
  for (const layer of layers) {
    const ds = layer.values.driver;
    if (!ds) continue;
    const isAxis = layer.path[0] === 'matrix' && layer.path.length === 1;
    // An axis or base setting gives every cell its driver; workload.driver is then unused.
    if (layer.path.length === 1 && driver) cellDrivers.delete(driver);
    ds.forEach((d, i) => {
      cellDrivers.add(String(d));
      if (can && kinds && !(can as readonly string[]).includes(String(d))) {
        const path = isAxis ? [...layer.path, 'driver', i] : [...layer.path, 'driver'];
        issues.push(src.issue(path, `a driver target: ${kinds.join(', ')} can talk to (${can.join(' | ') || 'none in common'})`, `'${String(d)}'`));
      }
    });
  }
  for (const layer of layers) {
    for (const name of ['enable.idempotence', 'max.in.flight', 'library']) {
      if (name in layer.values && !cellDrivers.has('kafka')) {
        issues.push(src.issue([...layer.path, name], `${name} only with the kafka driver (workload.driver: kafka or a driver: [kafka] axis)`, name, { key: true }));
      }
    }
  }
  if (producer && !cellDrivers.has('kafka')) {
    issues.push(src.issue(['workload', 'producer'], 'no producer: block unless workload.driver is kafka (it sets the Kafka client producer)', 'a producer: block', { key: true }));
  }
  for (const cell of input.cells ?? []) {
    const p = { ...input.baseSettings, ...cell.params };
    const idempotent = p['enable.idempotence'] ?? producer?.['enable.idempotence'] ?? false;
    const inFlight = Number(p['max.in.flight'] ?? producer?.['max.in.flight'] ?? input.pipelining ?? 1);
    const cellDriver = p.driver ?? driver;
    const limit = idempotentInFlightLimit(isKafkaLibraryName(p.library) ? p.library : producer?.library);
    if (cellDriver === 'kafka' && idempotent === true && inFlight > limit.max) {
      const path = 'max.in.flight' in cell.params ? ['matrix', 'max.in.flight'] : producer?.['max.in.flight'] !== undefined ? ['workload', 'producer', 'max.in.flight'] : ['workload', 'pipelining'];
      issues.push(src.issue(path, `max.in.flight at most ${limit.max} in cell ${cell.id} (enable.idempotence: true, library ${limit.library}; ${limit.why})`, String(inFlight)));
      break;
    }
  }
  return issues;
}
