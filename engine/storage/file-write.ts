// The write step of an append: a whole byte range at a file position. Two implementations:
//   native        dist/pwrite.node (engine/native/pwrite/pwrite.c): pwrite(2) straight from N-API,
//                 built by scripts/build-native.mjs;
//   fs.writeSync  Node's own, the fallback where the addon was not built or does not load.
// Which one runs is decided once, at load, and recorded in every result's environment (as the
// CRC-32C implementation is). DUROLAB_PWRITE=fs forces the fallback (to compare the two in the
// same build). Errors are Node's errno errors either way: code, errno, syscall 'write'.
import fs from 'node:fs';
import { errnoException } from '../common/errno.ts';
import { loadNativeAddon } from '../common/native-addon.ts';

export type PwriteName = 'native' | 'fs.writeSync';

export interface PwriteChoice {
  name: PwriteName;
  detail: string;
  /** Why the addon is not the one running (null when it is). */
  fallbackReason: string | null;
}

type NativePwrite = (fd: number, buf: Uint8Array, offset: number, length: number, position: number) => number;

/** The errno error fs.writeSync would throw for this negative errno. */
export function writeError(negErrno: number): NodeJS.ErrnoException {
  return errnoException(negErrno, 'write');
}

function fsWriteFully(fd: number, buf: Uint8Array, offset: number, length: number, position: number): void {
  let done = 0;
  while (done < length) done += fs.writeSync(fd, buf, offset + done, length - done, position + done);
}

function loadAddon(): { fn: NativePwrite | null; detail: string; reason: string | null } {
  const r = loadNativeAddon('pwrite', (mod) => (typeof mod.pwriteFully === 'function' ? null : 'exports no pwriteFully function'));
  if (r.module === null) return { fn: null, detail: '', reason: `${r.reason} (run node scripts/build-native.mjs; it needs a C compiler)` };
  return { fn: r.module.pwriteFully as NativePwrite, detail: `pwrite(2) from N-API (${r.file})`, reason: null };
}

function forcedFallback(): string | null {
  const forced = process.env.DUROLAB_PWRITE;
  if (forced === undefined || forced === '' || forced === 'native') return null;
  if (forced === 'fs') return 'DUROLAB_PWRITE=fs asks for fs.writeSync';
  throw new Error(`DUROLAB_PWRITE: expected native or fs, found ${JSON.stringify(forced)}`);
}

const loaded = loadAddon();
const forced = forcedFallback();
const native = forced === null ? loaded.fn : null;

/** The implementation every segment write in this process goes through, and why the addon is not it when it is not. */
export const pwriteImplementation: PwriteChoice = Object.freeze(
  native !== null
    ? { name: 'native' as const, detail: loaded.detail, fallbackReason: null }
    : { name: 'fs.writeSync' as const, detail: "Node's fs.writeSync", fallbackReason: forced ?? loaded.reason },
);

/** One line for an environment record: "native: pwrite(2) …" or "fs.writeSync (fallback: …)". */
export function describePwrite(): string {
  const c = pwriteImplementation;
  return c.fallbackReason === null ? `${c.name}: ${c.detail}` : `${c.name} (fallback: ${c.fallbackReason})`;
}

/**
 * Writes buf[offset, offset + length) at `position`, all of it (short writes are continued).
 * Throws the errno error of write(2); bytes of a partial write may then be in the file.
 */
export const writeFully: (fd: number, buf: Uint8Array, offset: number, length: number, position: number) => void =
  native === null
    ? fsWriteFully
    : (fd, buf, offset, length, position) => {
        const r = native(fd, buf, offset, length, position);
        if (r < 0) throw writeError(r);
      };
