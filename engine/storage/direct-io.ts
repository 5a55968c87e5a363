// What io=direct needs from the platform: page-aligned memory (a Buffer over a
// WebAssembly.Memory, whose backing store is mmap'd; Buffer.alloc* gives no alignment and
// O_DIRECT then fails with EINVAL) and a filesystem on a block device whose logical block
// size divides our 4096-byte alignment.
import fs from 'node:fs';

export const DIRECT_ALIGNMENT = 4096;
const WASM_PAGE = 65536;
const TMPFS_MAGIC = 0x01021994;
const RAMFS_MAGIC = 0x858458f6;

/** The slice of the WebAssembly API used here (tsconfig's lib has no DOM/WebAssembly types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
const WasmMemoryCtor = (globalThis as unknown as { WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => WasmMemory } })
  .WebAssembly.Memory;

export interface AlignedBuffer {
  /** Kept referenced for as long as buf is used, so the backing store outlives every write from it. */
  memory: WasmMemory;
  buf: Buffer;
}

/** At least `bytes` of page-aligned memory. Never grown: growing would detach buf. */
export function allocAligned(bytes: number): AlignedBuffer {
  const pages = Math.max(1, Math.ceil(bytes / WASM_PAGE));
  const memory = new WasmMemoryCtor({ initial: pages, maximum: pages });
  return { memory, buf: Buffer.from(memory.buffer) };
}

export function alignDown(n: number): number {
  return n - (n % DIRECT_ALIGNMENT);
}

export function alignUp(n: number): number {
  return Math.ceil(n / DIRECT_ALIGNMENT) * DIRECT_ALIGNMENT;
}

/** Logical block size of the device holding path, or null when sysfs does not tell (e.g. no block device). */
function logicalBlockSize(path: string): number | null {
  const dev = fs.statSync(path).dev;
  // glibc's gnu_dev_major/minor encoding of st_dev.
  const major = ((dev >>> 8) & 0xfff) | (Math.floor(dev / 2 ** 32) & ~0xfff);
  const minor = (dev & 0xff) | ((dev >>> 12) & 0xfff00);
  for (const p of [`/sys/dev/block/${major}:${minor}/queue/logical_block_size`, `/sys/dev/block/${major}:${minor}/../queue/logical_block_size`]) {
    try {
      const n = Number(fs.readFileSync(p, 'utf8').trim());
      if (Number.isInteger(n) && n > 0) return n;
    } catch {
      // not a whole disk, or not a block device: try the next candidate
    }
  }
  return null;
}

/** Throws a clear error when io=direct cannot mean direct I/O at dir. */
export function checkDirectIoDir(dir: string): void {
  const type = fs.statfsSync(dir).type;
  if (type === TMPFS_MAGIC || type === RAMFS_MAGIC) {
    throw new Error(
      `io=direct: ${dir} is on ${type === TMPFS_MAGIC ? 'tmpfs' : 'ramfs'}, which has no block device: O_DIRECT there is refused (EINVAL) or silently goes through the page cache. Use io=buffered, or put the log on a disk filesystem (ext4, xfs)`,
    );
  }
  const lbs = logicalBlockSize(dir);
  if (lbs !== null && lbs > DIRECT_ALIGNMENT) {
    throw new Error(`io=direct: the device under ${dir} has a logical block size of ${lbs} bytes; this engine aligns O_DIRECT writes to ${DIRECT_ALIGNMENT}`);
  }
}

/** open(2) with O_DIRECT; EINVAL (the filesystem refuses it) becomes an error naming the mode and path. */
export function openDirect(path: string, flags: number): number {
  try {
    return fs.openSync(path, flags | fs.constants.O_DIRECT, 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EINVAL') {
      throw new Error(`io=direct: the filesystem refuses O_DIRECT for ${path} (open: EINVAL); use io=buffered or a filesystem that supports direct I/O (ext4, xfs)`);
    }
    throw e;
  }
}
