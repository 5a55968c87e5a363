// CRC-32C (Castagnoli), as Kafka's RecordBatch uses it. Three implementations:
//   native          the N-API addon dist/crc32c.node (engine/native/crc32c/), built by
//                   scripts/build-native.mjs: its own AVX-512 VPCLMULQDQ folding interleaved
//                   with SSE4.2 crc32 streams on inputs of 1,536 bytes and more where the CPU
//                   has them (crc32c-fold.c), ISA-L's crc32_iscsi below that and elsewhere;
//   isa-l           the same addon with ISA-L alone (folding with PCLMULQDQ / VPCLMULQDQ);
//   @node-rs/crc32  the npm package (SSE4.2 crc32 instruction), the fallback where the addon
//                   was not built or does not load.
// Which one runs is decided once, at load, and recorded in every result (crc32cImplementation).
// DUROLAB_CRC32C=isa-l or =node-rs forces the others (to compare them in the same build).
import { createRequire } from 'node:module';
import { loadNativeAddon } from '../common/native-addon.ts';

/** Unsigned 32-bit CRC-32C of buf; pass a previous result as `initial` to continue it. */
export type Crc32cFunction = (buf: Uint8Array, initial?: number) => number;

export type Crc32cName = 'native' | 'isa-l' | '@node-rs/crc32';

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

/**
 * The addon's loop of `count` pwrite(2)s of one batch at consecutive positions from 0, each after
 * the append's check and offset stamp when `check` (crc32c.c checkedWriteLoop): its µs, or -errno
 * when a write failed. Throws a RangeError when `check` and the batch fails the check.
 */
export type CheckedWriteLoopFunction = (fd: number, buf: Uint8Array, count: number, check: boolean) => number;

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

interface LoadedAddon {
  native: Crc32cImplementation;
  isal: Crc32cImplementation;
  /** Turns the own kernel off or on in the addon (it runs nowhere else); returns whether it runs. */
  setFoldKernel: (on: boolean) => boolean;
  framing: RecordsFramingFunction | null;
  soleBatch: SoleBatchFunction | null;
  append: AppendSoleBatchFunction | null;
  checkedWriteLoop: CheckedWriteLoopFunction | null;
}

function loadAddon(): { addon: LoadedAddon | null; reason: string | null } {
  const r = loadNativeAddon('crc32c', (mod) => {
    for (const name of ['crc32c', 'crc32cIsal', 'setFoldKernel']) if (typeof mod[name] !== 'function') return `exports no ${name} function`;
    for (const name of ['crc32c', 'crc32cIsal']) {
      const got = (mod[name] as Crc32cFunction)(CHECK_INPUT);
      if (got !== CHECK_VALUE) return `${name} computes 0x${got.toString(16)} for "123456789", expected 0x${CHECK_VALUE.toString(16)}`;
    }
    // The own kernel takes over from 1,536 bytes: it must agree with ISA-L there (and across its tail).
    const long = Buffer.alloc(4099, 0).map((_, i) => (i * 131 + 7) & 0xff);
    const own = (mod.crc32c as Crc32cFunction)(long, 0x1234);
    const isal = (mod.crc32cIsal as Crc32cFunction)(long, 0x1234);
    return own === isal ? null : `crc32c computes 0x${own.toString(16)} for a 4,099-byte pattern where ISA-L computes 0x${isal.toString(16)}`;
  });
  if (r.module === null) return { addon: null, reason: `${r.reason} (run node scripts/build-native.mjs; it needs a C compiler and libisal-dev)` };
  const mod = r.module;
  const isal = `ISA-L ${String(mod.isalVersion)} crc32_iscsi`;
  const kernel = typeof mod.foldKernel === 'string' ? mod.foldKernel : null;
  const nativeDetail =
    kernel === null
      ? `${isal} alone: this CPU lacks AVX-512 VPCLMULQDQ for the own kernel (N-API addon ${r.file})`
      : `${kernel} from ${Number(mod.foldMinBytes).toLocaleString('en-US')} bytes, ${isal} below (N-API addon ${r.file})`;
  return {
    addon: {
      native: { name: 'native', detail: nativeDetail, crc32c: mod.crc32c as Crc32cFunction },
      isal: { name: 'isa-l', detail: `${isal} (N-API addon ${r.file})`, crc32c: mod.crc32cIsal as Crc32cFunction },
      setFoldKernel: mod.setFoldKernel as (on: boolean) => boolean,
      framing: typeof mod.recordsFramingOk === 'function' ? (mod.recordsFramingOk as RecordsFramingFunction) : null,
      soleBatch: typeof mod.soleBatchOk === 'function' ? (mod.soleBatchOk as SoleBatchFunction) : null,
      append: typeof mod.appendSoleBatch === 'function' ? (mod.appendSoleBatch as AppendSoleBatchFunction) : null,
      checkedWriteLoop: typeof mod.checkedWriteLoop === 'function' ? (mod.checkedWriteLoop as CheckedWriteLoopFunction) : null,
    },
    reason: null,
  };
}

/** DUROLAB_CRC32C: which implementation to run (unset or native: the addon's best). */
function forcedChoice(): { name: Crc32cName; why: string } | null {
  const forced = process.env.DUROLAB_CRC32C;
  if (forced === undefined || forced === '' || forced === 'native') return null;
  if (forced === 'isa-l') return { name: 'isa-l', why: 'DUROLAB_CRC32C=isa-l asks for ISA-L alone' };
  if (forced === 'node-rs' || forced === '@node-rs/crc32') return { name: '@node-rs/crc32', why: `DUROLAB_CRC32C=${forced} asks for @node-rs/crc32` };
  throw new Error(`DUROLAB_CRC32C: expected native, isa-l or node-rs, found ${JSON.stringify(forced)}`);
}

const { addon, reason: addonReason } = loadAddon();
const forced = forcedChoice();
/** The addon runs this process's CRCs (and its framing walk, batch check and one-call append). */
const addonRuns = addon !== null && forced?.name !== '@node-rs/crc32';
// ISA-L alone: the addon's own kernel off, for its checks and appends too.
if (addon !== null && forced?.name === 'isa-l') addon.setFoldKernel(false);
const chosen: Crc32cImplementation = !addonRuns ? NODE_RS : forced?.name === 'isa-l' ? addon!.isal : addon!.native;

/** The implementation every CRC in this process goes through, and why the addon's best is not it when it is not. */
export const crc32cImplementation: Crc32cChoice = Object.freeze({
  name: chosen.name,
  detail: chosen.detail,
  // Not native: the addon did not load (whatever was asked), or DUROLAB_CRC32C asked for another.
  fallbackReason: chosen.name === 'native' ? null : addon === null ? addonReason : forced!.why,
});

/** One line for an environment record: "native: …" or "isa-l (fallback: …)" or "@node-rs/crc32 (fallback: …)". */
export function describeCrc32c(): string {
  const c = crc32cImplementation;
  return c.fallbackReason === null ? `${c.name}: ${c.detail}` : `${c.name} (fallback: ${c.fallbackReason})`;
}

/** Every implementation that runs here, the chosen one first (for `durolab engine bench --crc`). */
export function crc32cImplementations(): Crc32cImplementation[] {
  if (addon === null) return [NODE_RS];
  // Under DUROLAB_CRC32C=isa-l the addon's own kernel is off, so its crc32c is ISA-L too.
  const all = forced?.name === 'isa-l' ? [addon.isal, NODE_RS] : [addon.native, addon.isal, NODE_RS];
  return [chosen, ...all.filter((i) => i !== chosen)];
}

/** CRC-32C (Castagnoli), unsigned 32-bit; pass a previous result as `initial` to continue it. */
export const crc32c: Crc32cFunction = chosen.crc32c;

/** The addon's framing walk when the addon runs (not under DUROLAB_CRC32C=node-rs), else null. */
export const nativeRecordsFramingOk: RecordsFramingFunction | null = addonRuns ? addon!.framing : null;

/** The addon's one-call batch check when the addon runs (not under DUROLAB_CRC32C=node-rs), else null. */
export const nativeSoleBatchOk: SoleBatchFunction | null = addonRuns ? addon!.soleBatch : null;

/** The addon's one-call check + stamp + write of an append when the addon runs (not under DUROLAB_CRC32C=node-rs), else null. */
export const nativeAppendSoleBatch: AppendSoleBatchFunction | null = addonRuns ? addon!.append : null;

/** The addon's check + write loop when the addon runs (engine bench's check bound), else null. */
export const nativeCheckedWriteLoop: CheckedWriteLoopFunction | null = addonRuns ? addon!.checkedWriteLoop : null;
