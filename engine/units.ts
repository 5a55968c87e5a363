// Sizes and durations as people write them in scenario files and engine flags ("64KiB",
// "250ms", "7d"), and back into the shortest exact form for cell ids, so an id does not depend
// on how a value was spelled.

const SIZE_UNITS: Record<string, number> = {
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1000 ** 4,
  tib: 1024 ** 4,
};

const DURATION_UNITS_MS: Record<string, number> = {
  us: 0.001,
  ms: 1,
  s: 1000,
  sec: 1000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const NUMBER_WITH_UNIT = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/;

/** Bytes from a number or a string like `64KiB`, `1GiB`, `500MB`; undefined when not an exact byte count. */
export function parseSize(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const m = NUMBER_WITH_UNIT.exec(value);
  if (!m) return undefined;
  const factor = m[2] === '' ? 1 : SIZE_UNITS[m[2].toLowerCase()];
  if (factor === undefined) return undefined;
  const bytes = Number(m[1]) * factor;
  // "1.5KiB" is fine (1536 bytes), "1.3KiB" is not a whole number of bytes.
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/**
 * Duration in `unitMs` units from a number (already in that unit) or a string like `250ms`,
 * `5s`, `1h`, `7d`. undefined when the result is not a whole number of units.
 */
export function parseDuration(value: unknown, unitMs: number): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const m = NUMBER_WITH_UNIT.exec(value);
  if (!m) return undefined;
  if (m[2] === '') return Number(m[1]);
  const factor = DURATION_UNITS_MS[m[2].toLowerCase()];
  if (factor === undefined) return undefined;
  const units = (Number(m[1]) * factor) / unitMs;
  return Number.isFinite(units) ? units : undefined;
}

const SIZE_FORMAT: Array<[string, number]> = [
  ['TiB', 1024 ** 4],
  ['GiB', 1024 ** 3],
  ['MiB', 1024 ** 2],
  ['KiB', 1024],
];

export function formatSize(bytes: number): string {
  for (const [unit, factor] of SIZE_FORMAT) {
    if (bytes >= factor && bytes % factor === 0) return `${bytes / factor}${unit}`;
  }
  return String(bytes);
}

const DURATION_FORMAT: Array<[string, number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
];

export function formatDurationMs(ms: number): string {
  for (const [unit, factor] of DURATION_FORMAT) {
    if (ms >= factor && ms % factor === 0) return `${ms / factor}${unit}`;
  }
  return `${ms}ms`;
}
