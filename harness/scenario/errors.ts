// Problems found in a scenario file, each pinned to file:line:column and a field path, so a
// user can fix them all in one pass before anything starts.

export interface ScenarioIssue {
  file: string;
  line: number;
  column: number;
  /** Field path like `matrix.flush[2]`; `yaml` for syntax errors; `` for the whole document. */
  path: string;
  expected: string;
  found: string;
}

export function formatIssue(i: ScenarioIssue): string {
  const where = i.path === '' ? '' : ` ${i.path}`;
  return `${i.file}:${i.line}:${i.column}${where}: expected ${i.expected}, found ${i.found}`;
}

export class ScenarioError extends Error {
  readonly issues: ScenarioIssue[];

  constructor(issues: ScenarioIssue[]) {
    super(issues.map(formatIssue).join('\n'));
    this.name = 'ScenarioError';
    this.issues = issues;
  }
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

/** How a YAML value reads back to the user in "found ...". */
export function describeFound(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null (an empty value)';
  if (typeof value === 'string') {
    const s = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return `'${s}'`;
  }
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : 'a list';
  if (typeof value === 'object') return 'a mapping';
  return String(value);
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

/** Damerau-style closeness is enough here: typos are swaps, drops and case slips. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let d = editDistance(x, y);
  // A single transposition (flsuh -> flush) counts as one edit.
  if (x.length === y.length) {
    const diff = [...x].flatMap((c, i) => (c === y[i] ? [] : [i]));
    if (diff.length === 2 && diff[1] === diff[0] + 1 && x[diff[0]] === y[diff[1]] && x[diff[1]] === y[diff[0]]) d = 1;
  }
  return d;
}

/** The closest candidate within a third of the word's length (2 edits at least, 1 for short words). */
export function suggest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = distance(word, c);
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  const limit = word.length <= 3 ? 1 : Math.max(2, Math.floor(word.length / 3));
  return bestD <= limit ? best : undefined;
}

/** "expected" text for a key that is not allowed here. */
export function unknownKeyExpected(key: string, known: readonly string[]): string {
  const close = suggest(key, known);
  if (close) return `a known key (did you mean '${close}'?)`;
  return `one of ${known.join(', ')}`;
}
