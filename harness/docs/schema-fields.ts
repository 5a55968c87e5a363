// The fields of the scenario-file schema (harness/scenario/schema.ts), walked from the zod
// schemas themselves: each field's path, what it takes (a leaf's "expected" text, an enum's
// values, a list or block), and its default. The scenario reference (docs/scenarios.md) is
// rendered from this walk, so a field added to the schema shows up there or fails its test.
import type * as z from 'zod';
import { SECTION_SCHEMAS } from '../scenario/schema.ts';
import { LEAF_EXPECTED } from '../model/zod-leaf.ts';
import { SETTING_NAMES } from '../scenario/settings.ts';

export interface SchemaField {
  /** Dotted path: `workload.recordBytes`, `faults[].when.at`, `matrix.<setting>`. */
  path: string;
  takes: string;
  /** As written in a scenario file; null: none (optional, or required). */
  default: string | null;
  required: boolean;
}

type Def = { type: string; innerType?: z.ZodType; defaultValue?: unknown; shape?: Record<string, z.ZodType>; element?: z.ZodType; items?: z.ZodType[]; entries?: Record<string, string>; in?: z.ZodType; values?: unknown[]; options?: z.ZodType[] };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** Sections whose keys are the settings registry's: one row stands for all of them (docs/settings.md lists them). */
const SETTING_KEYED = new Set(['settings', 'matrix', 'matrix.include[]', 'matrix.exclude[]']);
const SETTING_NAMES_SET = new Set(SETTING_NAMES);

function unwrap(s: z.ZodType): { core: z.ZodType; def: unknown; optional: boolean } {
  let cur = s;
  let dflt: unknown;
  let optional = false;
  for (;;) {
    const d = defOf(cur);
    if (d.type === 'default' || d.type === 'prefault') {
      if (d.type === 'default') dflt = d.defaultValue;
      optional = true;
      cur = d.innerType!;
    } else if (d.type === 'optional' || d.type === 'nullable') {
      optional = true;
      cur = d.innerType!;
    } else return { core: cur, def: dflt, optional };
  }
}

function takesOf(core: z.ZodType): string {
  const leafText = LEAF_EXPECTED.get(core);
  if (leafText) return leafText;
  const d = defOf(core);
  switch (d.type) {
    case 'enum':
      return Object.values(d.entries ?? {}).join(' | ');
    case 'literal':
      return (d.values ?? []).map(String).join(' | ');
    case 'boolean':
      return 'true | false';
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'object':
      return 'a block';
    case 'array':
      return `a list of ${takesOf(unwrap(d.element!).core)}`;
    case 'tuple':
      return `[${(d.items ?? []).map((i) => takesOf(unwrap(i).core)).join(', ')}]`;
    case 'pipe':
      return takesOf(d.in!);
    case 'union':
      return (d.options ?? []).map((o) => takesOf(unwrap(o).core)).join(', or ');
    default:
      return d.type;
  }
}

const shown = (v: unknown): string | null => (v === undefined ? null : v === null ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v));

function walk(path: string, s: z.ZodType, out: SchemaField[]): void {
  const { core, def, optional } = unwrap(s);
  out.push({ path, takes: takesOf(core), default: shown(def), required: !optional });
  walkInside(path, core, out);
}

/** The fields inside a block, a list of blocks, or a refined block. */
function walkInside(path: string, core: z.ZodType, out: SchemaField[]): void {
  const d = defOf(core);
  if (d.type === 'array') return walkInside(`${path}[]`, unwrap(d.element!).core, out);
  if (d.type === 'pipe') return walkInside(path, d.in!, out);
  if (d.type !== 'object') return;
  const keys = Object.keys(d.shape ?? {});
  if (SETTING_KEYED.has(path)) {
    out.push({ path: `${path}.<setting>`, takes: path === 'matrix' ? "a list of that setting's values (an axis)" : 'a value of that setting (docs/settings.md)', default: null, required: false });
    for (const k of keys.filter((k) => !SETTING_NAMES_SET.has(k))) walk(`${path}.${k}`, d.shape![k]!, out);
    return;
  }
  for (const k of keys) walk(`${path}.${k}`, d.shape![k]!, out);
}


/** Every field of a scenario file, in the schema's order. */
export function schemaFields(): SchemaField[] {
  const out: SchemaField[] = [];
  for (const [k, v] of Object.entries(SECTION_SCHEMAS)) walk(k, v as z.ZodType, out);
  return out;
}
