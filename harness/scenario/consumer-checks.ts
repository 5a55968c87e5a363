// What `workload.consumers:` asks of the rest of the scenario: the kafka driver (the consumers
// speak the Kafka protocol), a fetch.max.bytes the target's broker answers, distinct names, a
// start within the load, and a start and count its membership allows.
import type { TargetKind } from '../model/kinds.ts';
import { DRIVER_NAMES, driverCapabilities, type DriverCapabilities } from '../drivers/registry.ts';
import type { ConsumerMembership } from '../model/consumer-spec.ts';
import { capabilitiesOf } from '../targets/registry.ts';
import type { ScenarioIssue } from './errors.ts';
import type { WorkloadSpec } from '../model/scenario.ts';

interface IssueSource {
  issue(path: PropertyKey[], expected: string, found: string): ScenarioIssue;
}

export function checkConsumers(src: IssueSource, w: WorkloadSpec, kinds: TargetKind[] | null): ScenarioIssue[] {
  const out: ScenarioIssue[] = [];
  if (w.consumers.length === 0) return out;
  const need = (c: { membership: ConsumerMembership }): keyof DriverCapabilities => (c.membership === 'group' ? 'groupConsume' : 'tail');
  const lacking = [...new Set(w.consumers.map(need))].filter((cap) => !driverCapabilities(w.driver)[cap]);
  if (lacking.length) {
    const able = DRIVER_NAMES.filter((d) => lacking.every((cap) => driverCapabilities(d)[cap]));
    out.push(src.issue(['workload', 'consumers'], `workload.driver: ${able.join(' | ') || '(none offers it)'} with consumers (they need a driver that can ${lacking.join(' and ')}; driver ${w.driver} cannot)`, `driver ${w.driver}`));
  }
  const seen = new Set<string>();
  w.consumers.forEach((c, i) => {
    if (seen.has(c.name)) out.push(src.issue(['workload', 'consumers', i, 'name'], 'a name no other consumer group has', `'${c.name}' a second time`));
    seen.add(c.name);
    for (const k of kinds ?? []) {
      const limit = capabilitiesOf(k).fetchLimit;
      if (limit !== undefined && c['fetch.max.bytes'] > limit) {
        out.push(src.issue(['workload', 'consumers', i, 'fetch.max.bytes'], `at most ${limit} bytes (the most a target: ${k} broker answers in one fetch)`, String(c['fetch.max.bytes'])));
      }
    }
    if (c.membership === 'group' && c.start.from === 'lag') {
      out.push(src.issue(['workload', 'consumers', i, 'start'], 'tail or earliest with membership: group (a new group starts where auto.offset.reset says; lag:N needs assigned partitions)', `lag:${c.start.records}`));
    }
    if (c.membership === 'assigned' && c.count !== 1) {
      out.push(src.issue(['workload', 'consumers', i, 'count'], 'no count with membership: assigned (one consumer per partition); count sets the members of membership: group', String(c.count)));
    }
    if (c.startAt >= w.warmupSec + w.durationSec) {
      out.push(src.issue(['workload', 'consumers', i, 'startAt'], `a time within the load (warm-up + duration = ${w.warmupSec + w.durationSec} s)`, `${c.startAt} s`));
    }
  });
  return out;
}
