// Matrix expansion: the cartesian product of the axes (in file order, first axis slowest),
// minus `exclude:` entries, plus `include:` cells. Each cell gets an id built from its own
// params in a fixed order, so the same file always yields the same ids.

import { SETTINGS, type SettingValue } from './settings.ts';
import type { MatrixCell } from '../model/scenario.ts';

export const MAX_CELLS = 1000;

export interface MatrixSpec {
  axes: Array<[string, SettingValue[]]>;
  include: Array<{ params: Record<string, SettingValue>; label?: string }>;
  exclude: Array<Record<string, SettingValue>>;
}

export interface MatrixProblem {
  path: PropertyKey[];
  expected: string;
  found: string;
  /** Point at the key rather than the value. */
  key?: boolean;
}

function orderedKeys(params: Record<string, SettingValue>, axisOrder: readonly string[]): string[] {
  const keys = Object.keys(params);
  return [...axisOrder.filter((k) => keys.includes(k)), ...keys.filter((k) => !axisOrder.includes(k))];
}

export function cellId(params: Record<string, SettingValue>, axisOrder: readonly string[] = []): string {
  const keys = orderedKeys(params, axisOrder);
  if (keys.length === 0) return 'base';
  return keys.map((k) => `${k}=${SETTINGS[k] ? SETTINGS[k].display(params[k]) : String(params[k])}`).join(',');
}

export function cellLabel(params: Record<string, SettingValue>, axisOrder: readonly string[] = []): string {
  const keys = orderedKeys(params, axisOrder);
  if (keys.length === 0) return 'base settings';
  return keys.map((k) => (SETTINGS[k] ? SETTINGS[k].label(params[k]) : `${k}=${params[k]}`)).join(', ');
}

function matches(params: Record<string, SettingValue>, partial: Record<string, SettingValue>): boolean {
  return Object.entries(partial).every(([k, v]) => params[k] === v);
}

export function expandMatrix(spec: MatrixSpec): { cells: MatrixCell[]; problems: MatrixProblem[] } {
  const problems: MatrixProblem[] = [];
  const axisNames = spec.axes.map(([name]) => name);

  for (const [name, values] of spec.axes) {
    values.forEach((v, i) => {
      if (values.indexOf(v) !== i) {
        problems.push({ path: ['matrix', name, i], expected: 'distinct values', found: `${SETTINGS[name].display(v)} a second time` });
      }
    });
  }

  const size = spec.axes.reduce((n, [, values]) => n * values.length, 1);
  if (size > MAX_CELLS) {
    problems.push({ path: ['matrix'], expected: `at most ${MAX_CELLS} cells`, found: `${size} cells` });
    return { cells: [], problems };
  }

  let product: Array<Record<string, SettingValue>> = spec.axes.length === 0 ? [] : [{}];
  for (const [name, values] of spec.axes) {
    product = product.flatMap((partial) => values.map((v) => ({ ...partial, [name]: v })));
  }

  spec.exclude.forEach((entry, i) => {
    let valid = true;
    for (const key of Object.keys(entry)) {
      if (!axisNames.includes(key)) {
        valid = false;
        problems.push({
          path: ['matrix', 'exclude', i, key],
          key: true,
          expected: axisNames.length ? `a matrix key (${axisNames.join(', ')})` : 'matrix keys to exclude from (the matrix has none)',
          found: `'${key}'`,
        });
      }
    }
    if (!valid) return;
    const before = product.length;
    product = product.filter((params) => !matches(params, entry));
    if (product.length === before) {
      problems.push({
        path: ['matrix', 'exclude', i],
        expected: 'an entry that matches at least one cell',
        found: `'${cellId(entry, axisNames)}', which matches none`,
      });
    }
  });

  const cells: MatrixCell[] = product.map((params) => ({
    id: cellId(params, axisNames),
    label: cellLabel(params, axisNames),
    params,
  }));

  spec.include.forEach((entry, i) => {
    const id = cellId(entry.params, axisNames);
    if (cells.some((c) => c.id === id)) {
      problems.push({ path: ['matrix', 'include', i], expected: 'a cell not already in the matrix', found: `a second '${id}'` });
      return;
    }
    cells.push({ id, label: entry.label ?? cellLabel(entry.params, axisNames), params: entry.params });
  });

  if (cells.length === 0 && spec.axes.length === 0 && spec.include.length === 0) {
    cells.push({ id: 'base', label: 'base settings', params: {} });
  } else if (cells.length === 0) {
    problems.push({ path: ['matrix'], expected: 'at least one cell', found: 'every cell excluded' });
  }
  return { cells, problems };
}
