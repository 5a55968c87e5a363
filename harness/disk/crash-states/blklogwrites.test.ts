// QEMU's blklogwrites driver as a write-log recorder, against QEMU's own client: qemu-io writes,
// flushes, a FUA write and a discard through the driver while the watcher stamps the entries; the
// converted write log holds every request in order, with its data and host-clock
// interval (seen empty <= seen), and the disk image holds what was written.
import { execa } from 'execa';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostClockUs } from '../../../engine/common/clock.ts';
import { missingRequirement } from '../../../test/requirements.ts';
import { findExecutable } from '../../vm/prerequisites.ts';
import { readWriteLog, requireComplete } from '../write-log.ts';
import { BlkLogWritesDisk, convertDmLogWrites, LogWatcher, readDmLogWrites } from './blklogwrites.ts';

let work: string;
beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'durolab-blklogwrites-'));
});
afterAll(async () => {
  if (work) await fs.rm(work, { recursive: true, force: true });
});

describe('blklogwrites recorder', () => {
  it('records qemu-io writes, flushes, FUA and discards in order, stamped on the host clock', async (ctx) => {
    if (!findExecutable('qemu-io')) missingRequirement(ctx, 'qemu-io (apt-get install -y qemu-utils)');
    const image = path.join(work, 'disk.img');
    writeFileSync(image, '');
    truncateSync(image, 16 * 1024 * 1024);
    const disk = new BlkLogWritesDisk(image, path.join(work, 'disk.dmlog'), 16);
    expect(disk.qemuDriveArgs()[1]).toContain('driver=blklogwrites');
    const watcher = new LogWatcher(disk.logPath);
    await watcher.ready;
    const t0 = hostClockUs();
    const opts = `driver=blklogwrites,file.driver=file,file.filename=${image},log.driver=file,log.filename=${disk.logPath},log-sector-size=512`;
    const r = await execa('qemu-io', ['--image-opts', opts, '-c', 'write -P 0xab 0 4k', '-c', 'flush', '-c', 'write -f -P 0xcd 8192 1k', '-c', 'discard 65536 4096', '-c', 'write -P 0xef 1M 64k'], { reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    const t1 = hostClockUs();
    await watcher.stop();
    const t2 = hostClockUs();
    const out = path.join(work, 'disk.wlog');
    const conv = convertDmLogWrites(disk.logPath, watcher.seen, out, { endUs: t1 });
    expect(conv.unseen).toBe(0);
    const recs = requireComplete(readWriteLog(out));
    // QEMU 7.2 does not pass FUA through this driver (the block layer emulates it with a flush),
    // and qemu-io flushes when it closes the image: flushes beyond the one asked for, no FUA entry.
    expect(recs.filter((x) => x.op !== 'flush').map((x) => `${x.op}@${x.offset}:${x.length}`)).toEqual(['write@0:4096', 'write@8192:1024', 'trim@65536:4096', 'write@1048576:65536']);
    expect(recs[1]!.op).toBe('flush');
    expect(recs[recs.length - 1]!.op).toBe('flush');
    expect(recs.filter((x) => x.op === 'flush').length).toBeGreaterThanOrEqual(2);
    expect(recs[0]!.data!.every((b) => b === 0xab)).toBe(true);
    expect(recs.find((x) => x.offset === 1024 * 1024)!.data!.every((b) => b === 0xef)).toBe(true);
    for (const [i, x] of recs.entries()) {
      expect(x.submitUs).toBeLessThanOrEqual(x.completeUs);
      expect(x.completeUs).toBeGreaterThanOrEqual(t0 - 1000);
      // Written while qemu-io ran: the last instant it was seen absent is before qemu-io ended; seen at the latest by the final scan.
      expect(x.submitUs, `record ${i} ${x.op} submit-t1=${x.submitUs - t1} complete-t1=${x.completeUs - t1} t1-t0=${t1 - t0}`).toBeLessThanOrEqual(t1);
      expect(x.completeUs).toBeLessThanOrEqual(t2);
      if (i > 0) expect(x.completeUs).toBeGreaterThanOrEqual(recs[i - 1]!.completeUs);
    }
    expect(readDmLogWrites(disk.logPath).entries).toHaveLength(recs.length);
    const img = readFileSync(image);
    expect(img[8192]).toBe(0xcd);
    expect(img[1024 * 1024 + 100]).toBe(0xef);
  }, 30_000);

  it('refuses a file that is not a dm-log-writes log, naming it and what was expected', () => {
    const f = path.join(work, 'not.dmlog');
    writeFileSync(f, Buffer.alloc(512, 1));
    expect(() => readDmLogWrites(f)).toThrow(/not\.dmlog at byte 0: expected magic 0x6a736677736872/);
  });
});
