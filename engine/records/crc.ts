// CRC-32C (Castagnoli), as Kafka's RecordBatch uses it. Two implementations:
//   isa-l           the N-API addon dist/crc32c.node over ISA-L's crc32_iscsi (folding with
//                   PCLMULQDQ / VPCLMULQDQ: memory speed), built by scripts/build-native.mjs;
//   @node-rs/crc32  the npm package (SSE4.2 crc32 instruction, one stream), the fallback where
//                   the addon was not built or does not load (e.g. inside the power-cut VMs).
// Which one runs is decided once, at load, and recorded in every result (crc32cImplementation).
// DUROLAB_CRC32C=node-rs forces the fallback (to compare the two in the same build).
import { createRequire } from 'node:module';
import { loadNativeAddon } from '../common/native-addon.ts';

/** Unsigned 32-bit CRC-32C of buf; pass a previous result as `initial` to continue it. */
export type Crc32cFunction = (buf: Uint8Array, initial?: number) => number;

export type Crc32cName = 'isa-l' | '@node-rs/crc32';

export interface Crc32cImplementation {
  name: Crc32cName;
  /** What exactly ran: library version and where the addon was loaded from. */
  detail: string;
  crc32c: Crc32cFunction;
}

/** The addon's record-framing walk (framing-check.ts): true = well framed, false = ask the full walker. */
export type RecordsFramingFunction = (buf: Uint8Array, batchPos: number, size: number) => boolean;

/**
 * The addon's whole check of a buffer holding exactly one batch (decode.ts checkSoleBatch): true =
 * it passes and `out` holds its 12 header fields; false = ask the JS path, which throws the precise error.
 */
export type SoleBatchFunction = (buf: Uint8Array, maxBatchBytes: number, verify: boolean, out: Float64Array) => boolean;

/**
 * The addon's check, offset stamp and pwrite(2) of a leader's append in one call (crc32c.c
 * appendSoleBatch; params and out are laid out there): 0 = written, 1 = refused by the check and
 * 2 = needs the JS path (roll, log-append time), nothing written or stamped; -errno = the write failed.
 */
export type AppendSoleBatchFunction = (fd: number, buf: Uint8Array, params: Float64Array, out: Float64Array) => number;

export interface Crc32cChoice {
  name: Crc32cName;
  detail: string;
  /** Why the addon is not the one running (null when it is). */
  fallbackReason: string | null;
}

const requireHere = createRequire(import.meta.url);
let nodeRsCrc32c: Crc32cFunction | undefined;
/**
 * Loaded on first use: where the addon runs, a process never loads this second native module
 * (resolving it, lexing its CommonJS loader and the dlopen cost a broker in a TCG guest ~1.5 s
 * of its start, from a CPU profile in the guest).
 */
const NODE_RS: Crc32cImplementation = {
  name: '@node-rs/crc32',
  detail: '@node-rs/crc32 (npm)',
  get crc32c(): Crc32cFunction {
    return (nodeRsCrc32c ??= (requireHere('@node-rs/crc32') as { crc32c: Crc32cFunction }).crc32c);
  },
};

/** RFC 3720 B.4: CRC-32C of "123456789". A loaded addon must reproduce it before it is used. */
const CHECK_INPUT = Buffer.from('123456789');
const CHECK_VALUE = 0xe3069283;

function loadAddon(): {
  impl: Crc32cImplementation | null;
  framing: RecordsFramingFunction | null;
  soleBatch: SoleBatchFunction | null;
  append: AppendSoleBatchFunction | null;
  reason: string | null;
} {
  const r = loadNativeAddon('crc32c', (mod) => {
    if (typeof mod.crc32c !== 'function') return 'exports no crc32c function';
    const got = (mod.crc32c as Crc32cFunction)(CHECK_INPUT);
    return got === CHECK_VALUE ? null : `computes 0x${got.toString(16)} for "123456789", expected 0x${CHECK_VALUE.toString(16)}`;
  });
  if (r.module === null) return { impl: null, framing: null, soleBatch: null, append: null, reason: `${r.reason} (run node scripts/build-native.mjs; it needs a C compiler and libisal-dev)` };
  const mod = r.module;
  const framing = typeof mod.recordsFramingOk === 'function' ? (mod.recordsFramingOk as RecordsFramingFunction) : null;
  const soleBatch = typeof mod.soleBatchOk === 'function' ? (mod.soleBatchOk as SoleBatchFunction) : null;
  const append = typeof mod.appendSoleBatch === 'function' ? (mod.appendSoleBatch as AppendSoleBatchFunction) : null;
  return { impl: { name: 'isa-l', detail: `ISA-L ${String(mod.isalVersion)} crc32_iscsi (N-API addon ${r.file})`, crc32c: mod.crc32c as Crc32cFunction }, framing, soleBatch, append, reason: null };
}

/** DUROLAB_CRC32C=node-rs: the fallback even where the addon loads. */
function forcedFallback(): string | null {
  const forced = process.env.DUROLAB_CRC32C;
  if (forced === undefined || forced === '' || forced === 'isa-l') return null;
  if (forced === 'node-rs' || forced === '@node-rs/crc32') return `DUROLAB_CRC32C=${forced} asks for @node-rs/crc32`;
  throw new Error(`DUROLAB_CRC32C: expected isa-l or node-rs, found ${JSON.stringify(forced)}`);
}

const loaded = loadAddon();
const forced = forcedFallback();
const chosen: Crc32cImplementation = forced === null && loaded.impl ? loaded.impl : NODE_RS;

/** The implementation every CRC in this process goes through, and why the addon is not it when it is not. */
export const crc32cImplementation: Crc32cChoice = Object.freeze({ name: chosen.name, detail: chosen.detail, fallbackReason: forced ?? loaded.reason });

/** One line for an environment record: "isa-l (…)" or "@node-rs/crc32 (fallback: …)". */
export function describeCrc32c(): string {
  const c = crc32cImplementation;
  return c.fallbackReason === null ? `${c.name}: ${c.detail}` : `${c.name} (fallback: ${c.fallbackReason})`;
}

/** Every implementation that loads here, the chosen one first (for `durolab engine bench --crc`). */
export function crc32cImplementations(): Crc32cImplementation[] {
  return loaded.impl ? [loaded.impl, NODE_RS] : [NODE_RS];
}

/** CRC-32C (Castagnoli), unsigned 32-bit; pass a previous result as `initial` to continue it. */
export const crc32c: Crc32cFunction = chosen.crc32c;

/** The addon's framing walk when the addon runs (not under DUROLAB_CRC32C=node-rs), else null. */
export const nativeRecordsFramingOk: RecordsFramingFunction | null = chosen === loaded.impl ? loaded.framing : null;

/** The addon's one-call batch check when the addon runs (not under DUROLAB_CRC32C=node-rs), else null. */
export const nativeSoleBatchOk: SoleBatchFunction | null = chosen === loaded.impl ? loaded.soleBatch : null;

/** The addon's one-call check + stamp + write of an append when the addon runs (not under DUROLAB_CRC32C=node-rs), else null. */
export const nativeAppendSoleBatch: AppendSoleBatchFunction | null = chosen === loaded.impl ? loaded.append : null;
