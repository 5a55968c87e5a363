// The host route's per-broker disks as a cluster sees them: a write log that passes its bound is
// named at the cut (node and log file), so a trial on a full disk is never read as a result; the
// plain disk (model file) keeps no write log unless crash states record it, so a large log (a
// preload of GiBs) is not bounded by one.
import { closeSync, existsSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_DISK_SPEC } from '../model/disk-spec.ts';
import { hostDiskPrerequisiteProblem } from '../disk/host-disk.ts';
import { missingRequirement } from '../../test/requirements.ts';
import { HostFaultDisks } from './host-fault-disks.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-host-fault-disks-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('host fault disks', () => {
  it('a write log past its bound is named at the cut, with the node and the log file', async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const disks = await HostFaultDisks.create([4], work, { spec: { ...DEFAULT_DISK_SPEC, model: 'volatile-cache', writeLogLimitBytes: 1024 * 1024 }, sizeMiB: 64, mountOptions: '' }, 1, () => undefined, 'kafka node');
    try {
      // 4 MiB through a 1 MiB write log: the disk refuses the write that would pass it (ENOSPC to ext4).
      const fd = openSync(path.join(disks.dataDirOf(4).replace(/\/broker-data$/, ''), 'big'), 'w');
      let failed = '';
      try {
        writeSync(fd, Buffer.alloc(4 * 1024 * 1024, 7));
        fdatasyncSync(fd);
      } catch (err) {
        failed = (err as NodeJS.ErrnoException).code ?? String(err);
      } finally {
        closeSync(fd);
      }
      expect(failed).toMatch(/EIO|ENOSPC/);
      const atCut = await disks.cut([4], { freeze: () => undefined, kill: async () => undefined });
      expect(atCut[4]!.writeLogFull).toMatch(/^kafka node 4: write log .*disk\.disk\.wlog: recording this request would take it to \d+ bytes, over its limit of 1048576 bytes/);
    } finally {
      await disks.close(false);
    }
  }, 60_000);

  it('the plain disk (model file) records no write log: 96 MiB written where a write log would hold 1 MiB are kept', async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const dir = path.join(work, 'plain');
    const disks = await HostFaultDisks.create([5], dir, { spec: { ...DEFAULT_DISK_SPEC, writeLogLimitBytes: 1024 * 1024 }, sizeMiB: 256, mountOptions: '' }, 1, () => undefined, 'kafka node');
    try {
      const fd = openSync(path.join(disks.dataDirOf(5).replace(/\/broker-data$/, ''), 'big'), 'w');
      try {
        writeSync(fd, Buffer.alloc(96 * 1024 * 1024, 7));
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
      expect(existsSync(path.join(dir, 'broker-5', 'disk.disk.wlog'))).toBe(false);
      const atCut = await disks.cut([5], { freeze: () => undefined, kill: async () => undefined });
      expect(atCut[5]!.writeLogFull).toBeUndefined();
    } finally {
      await disks.close(false);
    }
  }, 60_000);
});
