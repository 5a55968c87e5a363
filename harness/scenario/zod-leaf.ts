// One scenario value read by a hand-written parser inside a zod schema: `parse` returns the
// value, or undefined for "invalid", which becomes the issue "expected <expected>" at that path.
import * as z from 'zod';

/** A value read by `parse`; undefined from `parse` means invalid and reports `expected`. */
export function leaf<T>(expected: string, parse: (v: unknown) => T | undefined) {
  return z.unknown().transform((v, ctx): T => {
    const out = v === undefined ? undefined : parse(v);
    if (out === undefined) {
      ctx.issues.push({ code: 'custom', message: `expected ${expected}`, input: v });
      return z.NEVER;
    }
    return out;
  });
}
