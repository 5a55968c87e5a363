// What the side bench commands (bench-recovery, bench-fault-disk, bench-crash-states,
// bench-peers) ask of the target registry: the systems a bench runs (every row whose sideBench
// takes part, one target per system), `--systems` parsed against them, and one system's
// settings (the bench's values over the target's base settings; a value the target has no
// equivalent for refused, or left out where the bench says it applies only where it can).
import { parseChoice } from '../../engine/common/flags.ts';
import type { SettingValue } from '../../engine/settings/index.ts';
import { resolveSettings, type ResolvedSettings } from '../model/settings.ts';
import { sideBenchSystems } from './registry.ts';
import type { SideBenchName, SideBenchSpec, TargetKindSpec } from './target-kind.ts';
import type { TargetKind } from '../model/kinds.ts';

export interface BenchSystem {
  system: string;
  kind: TargetKind;
  spec: TargetKindSpec;
  bench: SideBenchSpec;
}

/** The systems a bench runs, in the registry's order (durolab first). */
export function benchSystems(name: SideBenchName): BenchSystem[] {
  return sideBenchSystems(name).map((s) => ({ ...s, bench: s.spec.sideBench! }));
}

/** `--systems a,b` against the bench's systems (absent: all of them). */
export function parseBenchSystems(name: SideBenchName, flag: string | undefined): BenchSystem[] {
  const all = benchSystems(name);
  const names = all.map((s) => s.system);
  if (flag === undefined) return all;
  return flag.split(',').map((x) => {
    const chosen = parseChoice('--systems', x.trim(), names);
    return all.find((s) => s.system === chosen)!;
  });
}

/** The systems' names for a bench's --help ("durolab, kafka"). */
export function benchSystemNames(name: SideBenchName): string {
  return benchSystems(name).map((s) => s.system).join(', ');
}

/**
 * One system's settings in a bench: the bench's `values` over the target's base settings (kafka:
 * sync fsync). A value the target has no equivalent for (capabilities.refuseSetting) is an error
 * naming the system and why, unless the bench lists it in `whereItApplies` (e.g. --io, durolab's
 * write path): then the system runs without it and `log` says so.
 */
export function benchSettings(s: BenchSystem, values: Record<string, SettingValue>, opts: { whereItApplies?: readonly string[]; log?: (line: string) => void } = {}): ResolvedSettings {
  const caps = s.spec.capabilities;
  const kept: Record<string, SettingValue> = {};
  for (const [name, value] of Object.entries(values)) {
    const why = caps.refuseSetting?.(name, value) ?? null;
    if (why === null) kept[name] = value;
    else if (opts.whereItApplies?.includes(name)) opts.log?.(`${s.system}: runs without ${name}=${String(value)} (${why})`);
    else throw new Error(`${s.system}: ${why}`);
  }
  return resolveSettings({ ...caps.baseSettings, ...kept }, 1);
}
