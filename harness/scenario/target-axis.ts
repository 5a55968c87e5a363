// The `target` axis of a matrix (`matrix: { target: [durolab, kafka] }`): one run compares
// engines cell by cell. A value is a target kind or a target's axis name (durolab: the built-in
// broker as local processes, target process), as the target registry declares them. Each cell
// carries its target in params.target.
import * as z from 'zod';
import { TARGET_AXIS_NAMES, targetKindNamed, type TargetKind } from '../targets/registry.ts';
import type { SettingValue } from './settings.ts';

export const TARGET_AXIS_VALUES = TARGET_AXIS_NAMES as readonly [string, ...string[]];
export type TargetAxisValue = string;

const aliases = TARGET_AXIS_VALUES.filter((v) => targetKindNamed(v) !== v).map((v) => `${v} = target: ${targetKindNamed(v)}`);
export const targetAxisSchema = z.array(z.enum(TARGET_AXIS_VALUES, { error: `expected one of ${TARGET_AXIS_VALUES.join(' | ')}${aliases.length ? ` (${aliases.join(', ')})` : ''}` })).min(1);

/** The target kind of a (validated) axis value. */
export function targetKindOf(v: TargetAxisValue): TargetKind {
  const kind = targetKindNamed(v);
  if (!kind) throw new Error(`target axis value '${v}': expected one of ${TARGET_AXIS_VALUES.join(' | ')}`);
  return kind;
}

/** The target kind a cell runs on: its params.target on a target axis, else the scenario's target. */
export function cellTargetKind(params: Record<string, SettingValue>, scenarioTarget: TargetKind): TargetKind {
  return targetKindNamed(params.target) ?? scenarioTarget;
}
