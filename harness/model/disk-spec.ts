// The scenario's `vm.disk:` block: which disk a VM broker writes to and how it misbehaves.
// `model: file` is the sparse host file under virtio-blk (no volatile cache: every write QEMU
// passed on survives a cut); `model: volatile-cache` is the harness's NBD server, which keeps
// unflushed writes in memory and loses (or partly keeps) them at a cut. The settings registry
// documents each field (engine/settings/registry.ts, `durolab settings`); the defaults below
// are read from it.
import * as z from 'zod';
import { parseDuration, parseSize } from '../../engine/units.ts';
import { ON_CUT_POLICIES, type OnCutPolicy } from './kinds.ts';
import { leaf } from './zod-leaf.ts';

export const DISK_MODELS = ['file', 'volatile-cache'] as const;
export type DiskModelName = (typeof DISK_MODELS)[number];
// The onCut words and their meaning live in on-cut.ts (shared with the crash-state builder).
export { ON_CUT_POLICIES, type OnCutPolicy };
export const FLUSH_BEHAVIOURS = ['honoured', 'ignored'] as const;
export type FlushBehaviour = (typeof FLUSH_BEHAVIOURS)[number];

/**
 * One injected EIO: on the Nth write (1-based, counted over the disk's life), the Nth flush,
 * the Nth data write (a write outside the ext4 journal of at least minBytes), or any write
 * touching a sector range.
 */
export type ErrorRule =
  | { on: 'write' | 'flush'; nth: number; sticky: boolean }
  | { on: 'data-write'; nth: number; minBytes: number; sticky: boolean }
  | { on: 'sectors'; from: number; to: number; sticky: boolean };

export interface LatencySpec {
  /** Added to every request (µs). */
  perOpUs: number;
  /** Plus a uniform draw in [0, jitterUs] (seeded). */
  jitterUs: number;
  /** Every `stallEveryMs` of the disk's life, requests wait out a stall of `stallForMs` (0: none). */
  stallEveryMs: number;
  stallForMs: number;
}

export interface DiskSpec {
  model: DiskModelName;
  onCut: OnCutPolicy;
  flush: FlushBehaviour;
  errors: ErrorRule[];
  latency: LatencySpec;
  /** The NBD write log stops the trial past this many bytes. */
  writeLogLimitBytes: number;
}

export const DEFAULT_WRITE_LOG_LIMIT = 1024 ** 3;

export const DEFAULT_DISK_SPEC: DiskSpec = {
  model: 'file',
  onCut: 'drop-unflushed',
  flush: 'honoured',
  errors: [],
  latency: { perOpUs: 0, jitterUs: 0, stallEveryMs: 0, stallForMs: 0 },
  writeLogLimitBytes: DEFAULT_WRITE_LOG_LIMIT,
};


const oneOf = <T extends string>(values: readonly T[]) => leaf<T>(values.join(' | '), (v) => (values.includes(v as T) ? (v as T) : undefined));
const positiveInt = (what: string) => leaf<number>(what, (v) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 1 ? v : undefined));
const sector = leaf<number>('a sector number (integer >= 0, 512-byte sectors)', (v) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined));
const mode = leaf<boolean>('once | sticky', (v) => (v === 'once' ? false : v === 'sticky' ? true : undefined));
const micros = leaf<number>('a duration such as 200us, 2ms or 0 (a bare number is ms)', (v) => {
  const ms = parseDuration(v, 1);
  return ms !== undefined && ms <= 600_000 ? Math.round(ms * 1000) : undefined;
});
const millis = leaf<number>('a duration such as 500ms or 10s (a bare number is ms)', (v) => {
  const ms = parseDuration(v, 1);
  return ms !== undefined && ms <= 86_400_000 ? Math.round(ms) : undefined;
});

const errorRuleSchema = z.union([
  z.strictObject({ on: z.enum(['write', 'flush']), nth: positiveInt('an integer >= 1 (the Nth request of that kind, counted from the first boot)'), mode: mode.default(false) }),
  z.strictObject({ on: z.literal('sectors'), from: sector, to: sector, mode: mode.default(true) }),
  z.strictObject({
    on: z.literal('data-write'),
    nth: positiveInt('an integer >= 1 (the Nth write outside the ext4 journal, counted from the first boot)'),
    minBytes: leaf<number>('a size such as 8KiB (writes smaller than this are not counted)', (v) => parseSize(v)).default(0),
    mode: mode.default(false),
  }),
]);

export const diskSchema = z
  .strictObject({
    model: oneOf(DISK_MODELS).default('file'),
    onCut: oneOf(ON_CUT_POLICIES).optional(),
    flush: oneOf(FLUSH_BEHAVIOURS).optional(),
    errors: z.array(errorRuleSchema).optional(),
    latency: z
      .strictObject({ perOp: micros.default(0), jitter: micros.default(0), stallEvery: millis.default(0), stallFor: millis.default(0) })
      .optional(),
    writeLogLimit: leaf<number>('a size of at least 64KiB, such as 1GiB', (v) => {
      const b = parseSize(v);
      return b !== undefined && b >= 64 * 1024 ? b : undefined;
    }).optional(),
  })
  .superRefine((d, ctx) => {
    if (d.model === 'file') {
      for (const k of ['onCut', 'flush', 'errors', 'latency', 'writeLogLimit'] as const) {
        if (d[k] !== undefined) ctx.issues.push({ code: 'custom', path: [k], message: `expected no ${k} with model: file (only model: volatile-cache, the NBD disk, has it)`, input: d[k] });
      }
    }
    for (const [i, r] of (d.errors ?? []).entries()) {
      if (r.on === 'sectors' && r.to < r.from) ctx.issues.push({ code: 'custom', path: ['errors', i, 'to'], message: `expected to >= from (${r.from})`, input: r.to });
    }
    const l = d.latency;
    if (l && (l.stallEvery > 0) !== (l.stallFor > 0)) ctx.issues.push({ code: 'custom', path: ['latency'], message: 'expected stallEvery and stallFor together (both > 0) or neither', input: l });
    if (l && l.stallFor > 0 && l.stallFor >= l.stallEvery) ctx.issues.push({ code: 'custom', path: ['latency', 'stallFor'], message: `expected stallFor below stallEvery (${l.stallEvery} ms)`, input: l.stallFor });
  })
  .transform(
    (d): DiskSpec => ({
      model: d.model,
      onCut: d.onCut ?? DEFAULT_DISK_SPEC.onCut,
      flush: d.flush ?? DEFAULT_DISK_SPEC.flush,
      errors: (d.errors ?? []).map((r): ErrorRule =>
        r.on === 'sectors'
          ? { on: 'sectors', from: r.from, to: r.to, sticky: r.mode }
          : r.on === 'data-write'
            ? { on: 'data-write', nth: r.nth, minBytes: r.minBytes, sticky: r.mode }
            : { on: r.on, nth: r.nth, sticky: r.mode },
      ),
      latency: d.latency ? { perOpUs: d.latency.perOp, jitterUs: d.latency.jitter, stallEveryMs: d.latency.stallEvery, stallForMs: d.latency.stallFor } : DEFAULT_DISK_SPEC.latency,
      writeLogLimitBytes: d.writeLogLimit ?? DEFAULT_WRITE_LOG_LIMIT,
    }),
  );

/** The disk-model id the results and report key their text by (harness/results/disk-models.ts). */
export function diskModelId(spec: DiskSpec): string {
  if (spec.model === 'file') return 'virtio-blk-file-writeback';
  const parts = ['nbd-volatile-cache', spec.onCut];
  if (spec.flush === 'ignored') parts.push('flush-ignored');
  if (spec.errors.length > 0) parts.push('eio');
  return parts.join('+');
}


/** A cell's disk: the scenario's vm.disk: block with the cell's vm.disk.* settings (settings:/matrix:) on top. */
export function effectiveDiskSpec(block: DiskSpec | undefined, values: Readonly<Record<string, unknown>>): DiskSpec {
  const base = block ?? DEFAULT_DISK_SPEC;
  const pick = <T>(name: string, allowed: readonly T[], fallback: T): T => {
    const v = values[name];
    if (v === undefined) return fallback;
    if (!allowed.includes(v as T)) throw new Error(`setting ${name}: expected ${allowed.join(' | ')}, got ${JSON.stringify(v)}`);
    return v as T;
  };
  const limit = values['vm.disk.writeLogLimit'];
  return {
    ...base,
    model: pick('vm.disk.model', DISK_MODELS, base.model),
    onCut: pick('vm.disk.onCut', ON_CUT_POLICIES, base.onCut),
    flush: pick('vm.disk.flush', FLUSH_BEHAVIOURS, base.flush),
    writeLogLimitBytes: typeof limit === 'number' ? limit : base.writeLogLimitBytes,
  };
}

/** True when some cell sets a vm.disk.* setting (the run then has no single disk model). */
export function diskVariesByCell(cells: ReadonlyArray<{ params: Readonly<Record<string, unknown>> }>, base: Readonly<Record<string, unknown>> = {}): boolean {
  return [base, ...cells.map((c) => c.params)].some((p) => Object.keys(p).some((k) => k.startsWith('vm.disk.')));
}
