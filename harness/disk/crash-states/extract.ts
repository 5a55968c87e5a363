// Copying a partition directory out of an ext4 image without mounting it, keeping sparse files
// sparse. `debugfs rdump` writes every file in full: the broker's active index files are
// preallocated to segment.index.bytes (10 MiB of holes each), so rdump writes ~20 MiB of
// zeroes per partition per crash state. Here debugfs only lists the directory and each file's
// extents (two debugfs runs for all partitions), and the data blocks are read from the image
// with pread at their physical place and written at their logical place; holes and unwritten
// (Uninit) extents stay holes, which read back as zeroes, as in the guest.
import { execa } from 'execa';
import { closeSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import path from 'node:path';
import { pathOnDisk } from '../../vm/inspect.ts';
import { requireExecutable } from '../../vm/prerequisites.ts';

export interface ExtractedFile {
  name: string;
  size: number;
}

/** The file system's block size, from the ext4 super block (byte 1024, s_log_block_size at +24). */
export function ext4BlockSize(fd: number, image: string): number {
  const sb = Buffer.alloc(1024);
  if (readSync(fd, sb, 0, 1024, 1024) < 1024) throw new Error(`${image}: too short for an ext4 super block`);
  if (sb.readUInt16LE(56) !== 0xef53) throw new Error(`${image} at byte 1080: no ext4 magic 0xef53 (found 0x${sb.readUInt16LE(56).toString(16)})`);
  return 1024 << sb.readUInt32LE(24);
}

async function debugfsScript(image: string, commands: string[]): Promise<string> {
  const r = await execa(requireExecutable('debugfs'), ['-f', '-', image], { input: commands.join('\n') + '\n', reject: false });
  if (r.exitCode !== 0) throw new Error(`debugfs on ${image} failed (exit ${r.exitCode}): ${r.stderr.trim().slice(0, 300)}`);
  // debugfs echoes each command as "debugfs: <command>" on stdout; errors go to stderr in order.
  return r.stdout;
}

/** Splits debugfs -f output into the output of each echoed command. */
function sections(stdout: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let cur: string[] | null = null;
  for (const line of stdout.split('\n')) {
    const m = /^debugfs: (.*)$/.exec(line);
    if (m) out.set(m[1]!.trim(), (cur = []));
    else cur?.push(line);
  }
  return out;
}

const quote = (p: string) => {
  if (/["\n\r]/.test(p)) throw new Error(`disk path ${JSON.stringify(p)}: quotes and newlines are not supported`);
  return `"${p}"`;
};

/**
 * Copies the regular files of each directory (guest paths, e.g. /data/broker-1/t-0) into
 * `dest/<basename>`; returns per directory its files, or null when the directory is absent.
 */
export async function extractDirs(image: string, guestDirs: string[], dest: string): Promise<Map<string, ExtractedFile[] | null>> {
  const dirs = guestDirs.map((d) => pathOnDisk(d));
  const listing = sections(await debugfsScript(image, dirs.map((d) => `ls -p ${quote(d)}`)));
  const result = new Map<string, ExtractedFile[] | null>();
  const files: Array<{ dir: string; guestDir: string; name: string; size: number }> = [];
  dirs.forEach((d, i) => {
    const lines = listing.get(`ls -p ${quote(d)}`) ?? [];
    const entries: ExtractedFile[] = [];
    let any = false;
    for (const line of lines) {
      const m = /^\/(\d+)\/(\d+)\/\d+\/\d+\/(.*)\/(\d*)\/$/.exec(line.trim());
      if (!m) continue;
      any = true;
      if (m[1] === '0' || m[3] === '.' || m[3] === '..') continue;
      if ((parseInt(m[2]!, 8) & 0o170000) !== 0o100000) continue; // regular files only
      entries.push({ name: m[3]!, size: Number(m[4] || 0) });
    }
    result.set(guestDirs[i]!, any ? entries : null);
    for (const e of entries) files.push({ dir: d, guestDir: guestDirs[i]!, name: e.name, size: e.size });
  });
  if (files.length === 0) return result;
  const exCmd = (f: { dir: string; name: string }) => `ex ${quote(`${f.dir}/${f.name}`)}`;
  const extents = sections(await debugfsScript(image, files.map(exCmd)));
  const fd = openSync(image, 'r');
  try {
    const bs = ext4BlockSize(fd, image);
    const buf = Buffer.allocUnsafe(1 << 20);
    for (const f of files) {
      const outDir = path.join(dest, path.basename(f.dir));
      mkdirSync(outDir, { recursive: true });
      const lines = extents.get(exCmd(f));
      if (!lines) throw new Error(`debugfs ex ${f.dir}/${f.name} on ${image}: no answer`);
      if (lines.some((l) => /does not use extents/i.test(l))) throw new Error(`${f.dir}/${f.name} on ${image}: block-mapped (not extent) file; expected an ext4 file system with extents`);
      const leaves = parseLeafExtents(lines);
      const out = openSync(path.join(outDir, f.name), 'w');
      try {
        ftruncateSync(out, f.size);
        for (const e of leaves) {
          if (e.uninit) continue;
          const startByte = e.logical * bs;
          const endByte = Math.min(f.size, (e.logical + e.length) * bs);
          for (let pos = startByte; pos < endByte; ) {
            const n = Math.min(buf.length, endByte - pos);
            const got = readSync(fd, buf, 0, n, e.physical * bs + (pos - startByte));
            if (got < n) throw new Error(`${image}: short read of ${f.dir}/${f.name} at physical block ${e.physical} (${got} of ${n} bytes)`);
            let done = 0;
            while (done < n) done += writeSync(out, buf, done, n - done, pos + done);
            pos += n;
          }
        }
      } finally {
        closeSync(out);
      }
    }
  } finally {
    closeSync(fd);
  }
  return result;
}

export interface LeafExtent {
  logical: number;
  physical: number;
  length: number;
  uninit: boolean;
}

/** The leaf extents of `debugfs ex` output (index levels above the leaves are skipped). */
export function parseLeafExtents(lines: string[]): LeafExtent[] {
  const rows: Array<LeafExtent & { level: number; depth: number }> = [];
  for (const line of lines) {
    // " 0/ 0   1/  3     0 -  1023   8993 -  10016   1024 Uninit"
    const m = /^\s*(\d+)\/\s*(\d+)\s+\d+\/\s*\d+\s+(\d+)\s*-\s*(\d+)\s+(\d+)\s*-\s*(\d+)\s+(\d+)\s*(.*)$/.exec(line);
    if (m) {
      rows.push({ level: Number(m[1]), depth: Number(m[2]), logical: Number(m[3]), physical: Number(m[5]), length: Number(m[7]), uninit: /Uninit/i.test(m[8]!) });
      continue;
    }
    // A single-block extent prints without ranges: " 0/ 0   1/  1     0 -     0  10241 -  10241      1" is covered above;
    // debugfs also prints "logical physical length" without '-' for one block in some versions.
    const one = /^\s*(\d+)\/\s*(\d+)\s+\d+\/\s*\d+\s+(\d+)\s+(\d+)\s+(\d+)\s*(.*)$/.exec(line);
    if (one) rows.push({ level: Number(one[1]), depth: Number(one[2]), logical: Number(one[3]), physical: Number(one[4]), length: Number(one[5]), uninit: /Uninit/i.test(one[6]!) });
  }
  return rows.filter((r) => r.level === r.depth).map(({ logical, physical, length, uninit }) => ({ logical, physical, length, uninit }));
}
