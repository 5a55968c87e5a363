// One scenario value read by a hand-written parser inside a zod schema: `parse` returns the
// value, or undefined for "invalid", which becomes the issue "expected <expected>" at that path.
import * as z from 'zod';

/** What each leaf expects, for the scenario-file reference (harness/docs/scenario-reference.ts). */
export const LEAF_EXPECTED = new WeakMap<object, string>();

/** A value read by `parse`; undefined from `parse` means invalid and reports `expected`. */
export function leaf<T>(expected: string, parse: (v: unknown) => T | undefined) {
  const schema = z.unknown().transform((v, ctx): T => {
    const out = v === undefined ? undefined : parse(v);
    if (out === undefined) {
      ctx.issues.push({ code: 'custom', message: `expected ${expected}`, input: v });
      return z.NEVER;
    }
    return out;
  });
  LEAF_EXPECTED.set(schema, expected);
  return schema;
}
