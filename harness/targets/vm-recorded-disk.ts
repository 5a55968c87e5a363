// A broker VM's data disk recorded for crash states (ClusterStartOptions.disks.record on the VM
// target): a fresh ext4 image, a copy of it before the guest ever saw it (the base image), and a
// write log of every request the guest sends. The recorder follows the disk model:
// `vm.disk: { model: volatile-cache }` is the lab's NBD disk, whose own write log has exact
// host-clock submit/complete stamps and marks the FLUSH/FUA a lying drive did not honour;
// `model: file` is QEMU's blklogwrites driver, whose entries a watcher thread stamps as it sees
// them (observed stamps, a few ms of uncertainty), converted into the same write log once the
// guest is gone (seal).
import path from 'node:path';
import { NbdDisk } from '../disk/nbd-disk.ts';
import type { DiskSpec } from '../model/disk-spec.ts';
import { BlkLogWritesDisk, convertDmLogWrites, LogWatcher } from '../disk/crash-states/blklogwrites.ts';
import { createFileDisk, sparseCopy } from '../vm/index.ts';
import type { DataDisk } from '../vm/disk.ts';
import type { RecordedDisk } from './host-fault-disks.ts';

export interface VmRecordingDisk {
  disk: DataDisk;
  /** The crash-state builder's inputs, once the guest's data dir is known. */
  recorded(guestDataDir: string): RecordedDisk;
  /** Ends what watches the disk (called when the cluster stops). */
  stop(): Promise<void>;
}

export async function vmRecordingDisk(o: { dir: string; sizeMiB: number; spec: DiskSpec; seed: number; log: (line: string) => void }): Promise<VmRecordingDisk> {
  const file = path.join(o.dir, 'disk.img');
  const baseImage = path.join(o.dir, 'disk.base.img');
  const writeLog = path.join(o.dir, 'disk.wlog');
  await createFileDisk(file, o.sizeMiB);
  await sparseCopy(file, baseImage);
  if (o.spec.model === 'volatile-cache') {
    const nbd = await NbdDisk.create({ file, sizeMiB: o.sizeMiB, spec: o.spec, seed: o.seed, writeLogPath: writeLog, log: o.log, existing: true });
    o.log(nbd.describe());
    return {
      disk: nbd,
      recorded: (guestDataDir) => ({
        baseImage,
        writeLog,
        dataDirOnDisk: guestDataDir,
        recorder: 'nbd',
        // The cluster's stop closed the NBD disk and its write log.
        seal: async () => {
          if (nbd.server.writeLogFull) throw nbd.server.writeLogFull;
          o.log(`write log ${writeLog}: ${nbd.writeLog?.records ?? 0} records from the NBD disk (exact host-clock stamps)`);
          return { unseen: 0 };
        },
      }),
      stop: async () => undefined,
    };
  }
  const dmLog = path.join(o.dir, 'disk.dmlog');
  const disk = new BlkLogWritesDisk(file, dmLog, o.sizeMiB);
  const watcher = new LogWatcher(dmLog);
  await watcher.ready;
  return {
    disk,
    recorded: (guestDataDir) => ({
      baseImage,
      writeLog,
      dataDirOnDisk: guestDataDir,
      recorder: 'blklogwrites',
      seal: async (endUs) => {
        await watcher.stop();
        const conv = convertDmLogWrites(dmLog, watcher.seen, writeLog, { endUs });
        o.log(`write log: ${conv.records} records (${conv.unseen} stamped at the cut: written after the watcher's last look)`);
        return { unseen: conv.unseen };
      },
    }),
    stop: () => watcher.stop(),
  };
}
