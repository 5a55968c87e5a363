// Summary statistics shared by the engine's benches and the harness.

/**
 * The median of `xs` (the mean of the two middle values for an even count), or null for an
 * empty list: "no samples" is not a number, and each caller says what it shows instead
 * (`median(xs) ?? 0`, `?? NaN`, ...). The input is not modified.
 */
export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Smallest, median and largest of a set of samples (trials, repetitions). */
export interface Distribution {
  min: number;
  median: number;
  max: number;
}

/** min / median / max of `xs`, or null for an empty list. */
export function distribution(xs: readonly number[]): Distribution | null {
  const med = median(xs);
  if (med === null) return null;
  return { min: Math.min(...xs), median: med, max: Math.max(...xs) };
}
