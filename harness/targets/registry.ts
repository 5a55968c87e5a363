// The one list of target kinds (how brokers are started). Each row declares its system, its
// capabilities (statically, so `durolab scenario check` can refuse what a target cannot do
// without loading it) and a loader that imports its module only when a scenario uses it (the
// process path never pulls in the QEMU code). A row lives beside its target's code; this file
// lists them and answers the questions asked of them by name (a run's target, a matrix's target
// axis, a system's side bench). Nothing outside a target's folder branches on a kind's name.
import * as z from 'zod';
import type { Target, TargetCapabilities } from './types.ts';
import type { SideBenchName, TargetKindSpec, TargetLoadOptions } from './target-kind.ts';
import { PROCESS_KIND } from './process-kind.ts';
import { VM_KIND } from './vm-kind.ts';
import { KAFKA_KIND } from './kafka/kafka-kind.ts';
import { EXTERNAL_KIND } from './external/external-kind.ts';
import { NATS_KIND } from './nats/nats-kind.ts';
export type { TargetCapabilities, TargetKindSpec, TargetLoadOptions };

import { TARGET_KINDS, type TargetKind } from '../model/kinds.ts';
export { TARGET_KINDS, type TargetKind };

export const TARGETS: Record<TargetKind, TargetKindSpec> = {
  process: PROCESS_KIND,
  vm: VM_KIND,
  kafka: KAFKA_KIND,
  external: EXTERNAL_KIND,
  nats: NATS_KIND,
};

export const DEFAULT_TARGET: TargetKind = 'process';

export const targetKindSchema = z.enum(TARGET_KINDS);

export function capabilitiesOf(kind: TargetKind): TargetCapabilities {
  return TARGETS[kind].capabilities;
}

export function loadTarget(kind: TargetKind, opts: TargetLoadOptions): Promise<Target> {
  return TARGETS[kind].load(opts);
}

export function isTargetKind(name: unknown): name is TargetKind {
  return typeof name === 'string' && (TARGET_KINDS as readonly string[]).includes(name);
}

/** The values a matrix's target axis takes: each target's axis name (process: durolab), then the kinds. */
export const TARGET_AXIS_NAMES: readonly string[] = [...new Set([...TARGET_KINDS.flatMap((k) => (TARGETS[k].axisName ? [TARGETS[k].axisName] : [])), ...TARGET_KINDS])];

/** The target kind a name stands for: a kind, or a target's axis name (durolab: process); undefined when neither. */
export function targetKindNamed(name: unknown): TargetKind | undefined {
  if (typeof name !== 'string') return undefined;
  if (isTargetKind(name)) return name;
  return TARGET_KINDS.find((k) => TARGETS[k].axisName !== undefined && TARGETS[k].axisName === name);
}

/** The system a target name (a kind or an axis name, as run.json records it) started; an unknown name is its own system. */
export function systemOfTarget(name: string): string {
  const kind = targetKindNamed(name);
  return kind ? TARGETS[kind].system : name;
}

/** The capabilities of a target name as run.json records it (a kind or an axis name); undefined for a name no row has. */
export function capabilitiesNamed(name: string): TargetCapabilities | undefined {
  const kind = targetKindNamed(name);
  return kind ? TARGETS[kind].capabilities : undefined;
}

/** The systems in the registry, in its order (durolab, kafka, ...), each once. */
export function systemNames(): string[] {
  return [...new Set(TARGET_KINDS.map((k) => TARGETS[k].system))];
}

/** A system's name in a sentence ("Apache Kafka"), or the name itself when no target starts it. */
export function systemLabel(system: string): string {
  return TARGET_KINDS.map((k) => TARGETS[k]).find((t) => t.system === system)?.systemLabel ?? system;
}

/** The systems a side bench runs, in the registry's order, each with the target it runs on (its first row that takes part). */
export function sideBenchSystems(bench: SideBenchName): Array<{ system: string; kind: TargetKind; spec: TargetKindSpec }> {
  const out: Array<{ system: string; kind: TargetKind; spec: TargetKindSpec }> = [];
  for (const kind of TARGET_KINDS) {
    const spec = TARGETS[kind];
    if (spec.sideBench?.benches[bench] && !out.some((o) => o.system === spec.system)) out.push({ system: spec.system, kind, spec });
  }
  return out;
}
