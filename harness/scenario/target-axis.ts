// The `target` axis of a matrix (`matrix: { target: [durolab, kafka] }`): one run compares
// engines cell by cell. `durolab` names the built-in broker as local processes (target:
// process); the other values are target kinds. Each cell carries its target in params.target.
import * as z from 'zod';
import { TARGET_KINDS, type TargetKind } from '../targets/registry.ts';
import type { SettingValue } from './settings.ts';

export const TARGET_AXIS_VALUES = ['durolab', ...TARGET_KINDS] as const;
export type TargetAxisValue = (typeof TARGET_AXIS_VALUES)[number];

export const targetAxisSchema = z.array(z.enum(TARGET_AXIS_VALUES, { error: `expected one of ${TARGET_AXIS_VALUES.join(' | ')} (durolab = the built-in broker, target: process)` })).min(1);

export function targetKindOf(v: TargetAxisValue): TargetKind {
  return v === 'durolab' ? 'process' : v;
}

/** The target kind a cell runs on: its params.target on a target axis, else the scenario's target. */
export function cellTargetKind(params: Record<string, SettingValue>, scenarioTarget: TargetKind): TargetKind {
  const v = params.target;
  return typeof v === 'string' && (TARGET_AXIS_VALUES as readonly string[]).includes(v) ? targetKindOf(v as TargetAxisValue) : scenarioTarget;
}
