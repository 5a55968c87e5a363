// The host route of the fault disk, for real: NBD server -> qemu-storage-daemon FUSE export ->
// loop device -> ext4 on the host. What a cut keeps, that nothing written after the cut reaches
// the disk, and that no daemon, loop device or mount is left behind (a clean close, a cut, a
// SIGKILLed harness).
import { closeSync, existsSync, fdatasyncSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { hostClockUs } from '../../engine/common/clock.ts';
import { DEFAULT_DISK_SPEC, type DiskSpec } from '../model/disk-spec.ts';
import { FUSE_EXPORT_NAME, HostDisk, hostDiskPrerequisiteProblem, QSD_MARKER, sweepOrphanedHostDisks } from './host-disk.ts';
import { missingRequirement } from '../../test/requirements.ts';
import { readWriteLog } from './write-log.ts';
import { findProcessesMatching } from '../vm/process-registry.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-host-disk-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const volatile: DiskSpec = { ...DEFAULT_DISK_SPEC, model: 'volatile-cache' };

function attachedAnywhere(fuseFile: string): string[] {
  const out: string[] = [];
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8');
  if (mounts.includes(fuseFile)) out.push(`mount ${fuseFile}`);
  for (const d of readdirSync('/sys/block').filter((x) => x.startsWith('loop'))) {
    try {
      if (readFileSync(`/sys/block/${d}/loop/backing_file`, 'utf8').includes(fuseFile)) out.push(`/dev/${d}`);
    } catch {
      // unbound
    }
  }
  out.push(...findProcessesMatching(QSD_MARKER, fuseFile).map((p) => `qemu-storage-daemon ${p}`));
  return out;
}

function writeFile(file: string, bytes: number, sync: boolean): void {
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, Buffer.alloc(bytes, 0x61));
    if (sync) fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

describe('host fault disk (qemu-storage-daemon FUSE export, loop, ext4)', () => {
  it('keeps what was flushed across a cut, loses what was not, and nothing written after the cut reaches the disk', async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    // The disk server's own clock 50 ms off (clock-skew.test.ts): it stamps on the harness's anyway.
    process.env.DUROLAB_TEST_CLOCK_SKEW_US = '50000';
    const disk = await HostDisk.create({ dir: path.join(work, 'cut'), sizeMiB: 64, spec: volatile, seed: 7, name: 'test disk' }).finally(() => delete process.env.DUROLAB_TEST_CLOCK_SKEW_US);
    const fuseFile = disk.fuseFile;
    try {
      const t0 = hostClockUs();
      writeFile(path.join(disk.mountPoint, 'synced'), 64 * 1024, true);
      const t1 = hostClockUs();
      // fdatasync's FLUSH went through the kernel, the FUSE export and the disk server: its write-log stamps lie within the harness's window.
      const flushes = readWriteLog(disk.writeLogPath!).records.filter((r) => r.op === 'flush');
      expect(flushes.some((r) => r.submitUs >= t0 && r.completeUs <= t1), `FLUSH stamps ${flushes.map((r) => r.completeUs - t0).join(', ')} us after the harness's t0; the window is ${t1 - t0} us`).toBe(true);
      writeFile(path.join(disk.mountPoint, 'unsynced'), 64 * 1024, false);
      const flushesBefore = (await disk.report()).report.counters.flushes;
      expect(flushesBefore).toBeGreaterThan(0);
      await disk.powerOff();
      const bytesAtCut = (await disk.report()).report.counters.bytesWritten;
      // A writer that outlives the cut: its write lands in the page cache, its fdatasync can only fail.
      let afterCut = 'fdatasync succeeded';
      const fd = openSync(path.join(disk.mountPoint, 'after-cut'), 'w');
      try {
        writeSync(fd, Buffer.alloc(256 * 1024, 0x62));
        fdatasyncSync(fd);
      } catch (err) {
        afterCut = (err as NodeJS.ErrnoException).code ?? String(err);
      } finally {
        closeSync(fd);
      }
      expect(afterCut).not.toBe('fdatasync succeeded');
      const outcome = await disk.detach();
      expect((await disk.report()).report.counters.bytesWritten).toBe(bytesAtCut);
      expect(outcome.policy).toBe('drop-unflushed');
      expect(attachedAnywhere(fuseFile)).toEqual([]);
      const timing = await disk.attach();
      expect(timing.mountMs).toBeGreaterThanOrEqual(0);
      expect(readFileSync(path.join(disk.mountPoint, 'synced')).length).toBe(64 * 1024);
      // Delayed allocation: an unflushed new file has no blocks on the disk, and no size either.
      const unsynced = existsSync(path.join(disk.mountPoint, 'unsynced')) ? readFileSync(path.join(disk.mountPoint, 'unsynced')) : Buffer.alloc(0);
      expect(unsynced.includes(0x61)).toBe(false);
      const post = existsSync(path.join(disk.mountPoint, 'after-cut')) ? readFileSync(path.join(disk.mountPoint, 'after-cut')) : Buffer.alloc(0);
      expect(post.includes(0x62)).toBe(false);
    } finally {
      await disk.close();
    }
    expect(attachedAnywhere(fuseFile)).toEqual([]);
  });

  it('every fdatasync\'d byte reads back as written after a cut (the FUSE export serialised; in parallel it was not)', async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const disk = await HostDisk.create({ dir: path.join(work, 'bytes'), sizeMiB: 128, spec: volatile, seed: 3, name: 'test disk' });
    try {
      // A log's shape: writes that do not fill pages, the tail page rewritten, fdatasync every ~1 MB.
      const file = path.join(disk.mountPoint, 'log');
      const fd = openSync(file, 'w');
      const chunks: Buffer[] = [];
      let pos = 0;
      let since = 0;
      let synced = 0;
      for (let i = 0; i < 1250; i++) {
        const b = Buffer.alloc(16_589);
        for (let k = 0; k < b.length; k++) b[k] = (i * 7 + k) % 251;
        writeSync(fd, b, 0, b.length, pos);
        chunks.push(b);
        pos += b.length;
        since += b.length;
        if (since >= 1_000_000) {
          fdatasyncSync(fd);
          since = 0;
          synced = pos;
        }
      }
      await disk.powerOff();
      closeSync(fd);
      await disk.detach();
      await disk.attach();
      const got = readFileSync(file);
      const want = Buffer.concat(chunks).subarray(0, synced);
      expect(synced).toBeGreaterThan(19_000_000);
      expect(got.length).toBeGreaterThanOrEqual(synced);
      // Where the first differing byte is, if any (a bare equals would not say).
      const first = want.findIndex((v, i) => got[i] !== v);
      expect(first).toBe(-1);
    } finally {
      await disk.close({ clean: false });
    }
  }, 120_000);

  it('a clean close writes everything back: the image holds a file that was never fsynced', async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const disk = await HostDisk.create({ dir: path.join(work, 'clean'), sizeMiB: 64, spec: volatile, seed: 1, name: 'test disk', writeLog: false });
    const fuseFile = disk.fuseFile;
    writeFile(path.join(disk.mountPoint, 'data'), 128 * 1024, false);
    const flushes = (await disk.report()).report.counters.flushes;
    await disk.close();
    expect((await disk.report()).report.counters.flushes).toBeGreaterThan(flushes);
    expect(attachedAnywhere(fuseFile)).toEqual([]);
  });

  it('sweeps a loop device left over an export whose mount is gone (its backing file reads "/")', async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    // The state a run killed mid-teardown left here: a loop device over a file that was itself a
    // mount point (as qsd's FUSE export is), that mount gone. A bind mount on a file makes it.
    const { writeFileSync, readFileSync } = await import('node:fs');
    const image = path.join(work, 'gone.img');
    const point = path.join(work, FUSE_EXPORT_NAME);
    writeFileSync(image, Buffer.alloc(1 << 20));
    writeFileSync(point, '');
    await execa('mount', ['--bind', image, point]);
    const dev = (await execa('losetup', ['--find', '--show', point])).stdout.trim();
    await execa('umount', ['-l', point]);
    try {
      expect(readFileSync(`/sys/block/${path.basename(dev)}/loop/backing_file`, 'utf8').trim()).toBe('/');
      expect(sweepOrphanedHostDisks()).toContain(`${dev} (its backing mount was gone)`);
      expect(() => readFileSync(`/sys/block/${path.basename(dev)}/loop/backing_file`, 'utf8')).toThrow();
    } finally {
      await execa('losetup', ['-d', dev], { reject: false });
    }
  });

  it('a SIGKILLed harness leaves nothing that the next sweep does not clear', async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const script = path.join(work, 'holder.mts');
    const here = path.dirname(new URL(import.meta.url).pathname);
    await import('node:fs').then((fs) =>
      fs.writeFileSync(
        script,
        `import { HostDisk } from ${JSON.stringify(path.join(here, 'host-disk.ts'))};\n` +
          `const d = await HostDisk.create({ dir: ${JSON.stringify(path.join(work, 'orphan'))}, sizeMiB: 64, spec: { ...${JSON.stringify(volatile)} }, seed: 3, name: 'orphan', writeLog: false });\n` +
          `console.log('READY ' + d.fuseFile);\nsetInterval(() => {}, 1000);\n`,
      ),
    );
    // One process (node --import tsx), so SIGKILL reaches the harness itself.
    const child = execa(process.execPath, ['--import', 'tsx', script], { reject: false, buffer: false, cwd: path.join(here, '../..') });
    const fuseFile = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /READY (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', () => reject(new Error(`holder exited before ready: ${out}`)));
    });
    expect(path.basename(fuseFile)).toBe(FUSE_EXPORT_NAME);
    expect(attachedAnywhere(fuseFile).length).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await child;
    // pdeathsig ends the daemon with its harness; the kernel's mount and loop device stay until swept.
    const end = Date.now() + 5000;
    while (findProcessesMatching(QSD_MARKER, fuseFile).length && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(findProcessesMatching(QSD_MARKER, fuseFile)).toEqual([]);
    expect(sweepOrphanedHostDisks()).toContain(fuseFile);
    expect(attachedAnywhere(fuseFile)).toEqual([]);
  });
});
