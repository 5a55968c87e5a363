// The second reader on real fault disks: a cut image is the cut's state (a record written after
// the cut is on no cut image, only on the final one), and the recount classifies records from
// the images alone: served (final image), on a disk but not served (cut image only: what a
// recovery threw away), on no disk.
import { closeSync, existsSync, fdatasyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_DISK_SPEC } from '../model/disk-spec.ts';
import { hostDiskPrerequisiteProblem } from '../disk/host-disk.ts';
import { missingRequirement } from '../../test/requirements.ts';
import { HostFaultDisks } from '../targets/host-fault-disks.ts';
import { BatchFactory } from '../history/batch-factory.ts';
import { splitBatches } from '../drivers/record-batches.ts';
import type { LedgerBatch } from '../history/ledger.ts';
import { readImagePartitions, readSegments } from './image-logs.ts';
import { classifyAcked, readLedgerFile } from './recount.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-recount-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const PID = 7000;
const factory = new BatchFactory({ recordBytes: 100, recordsPerBatch: 4 });
const read = (bytes: Buffer) => {
  const s = splitBatches(bytes);
  return { batches: s.batches, corrupt: s.corrupt };
};

/** Appends batches (base sequences) to a segment file and fdatasyncs it. */
function appendDurably(file: string, sequences: number[]): void {
  const fd = openSync(file, 'a');
  try {
    for (const seq of sequences) writeSync(fd, factory.build(PID, seq, Date.now()));
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const acked = (baseSequence: number): LedgerBatch => ({ partition: 0, producerId: PID, baseSequence, records: 4, sentMs: 0, status: 'acked', baseOffset: baseSequence, ackMs: 0, error: null });

describe('recount from kept disk images', () => {
  it('the cut image is the state the cut left: a batch written after the cut is on the final image only', async (ctx) => {
    const why = hostDiskPrerequisiteProblem();
    if (why) missingRequirement(ctx, why);
    const trialDir = path.join(work, 'trial');
    const disks = await HostFaultDisks.create([1], path.join(work, 'disks'), { spec: DEFAULT_DISK_SPEC, sizeMiB: 64, mountOptions: '' }, 1, () => undefined, 'durolab broker', {
      evidence: { trialDir, target: 'process' },
    });
    let closed = false;
    try {
      const partDir = path.join(disks.dataDirOf(1), 't-0');
      mkdirSync(partDir, { recursive: true });
      const segment = path.join(partDir, '00000000000000000000.log');
      appendDurably(segment, [0, 4]);
      // The directory entry too: ext4 commits it with the next fdatasync of the file, made above.
      const atCut = await disks.cut([1], { freeze: () => undefined, kill: async () => undefined });
      expect(atCut[1]!.image?.file).toBe(path.join('broker-1', 'cut.img'));
      expect(atCut[1]!.imageProblem).toBeUndefined();
      await disks.attach(1);
      appendDurably(segment, [8]);
      disks.keepFinalImages();
      await disks.close(true);
      closed = true;
      const kept = disks.evidenceKept();
      expect(kept.incomplete).toEqual([]);
      expect(kept.brokers).toHaveLength(1);
      expect(kept.brokers[0]).toMatchObject({ brokerId: 1, target: 'process', fileSystem: 'ext4', dataDirOnDisk: '/broker-data', finalStop: 'clean' });
      const images = (file: string) =>
        readImagePartitions({ image: path.join(trialDir, file), dataDirOnDisk: '/broker-data', topic: 't', partitions: [0], scratch: path.join(work, `scratch-${path.basename(file)}`), read });
      const cut = await images(kept.brokers[0]!.cut!.file);
      const final = await images(kept.brokers[0]!.final!.file);
      expect(cut[0]!.batches.map((b) => b.baseSequence)).toEqual([0, 4]);
      expect(final[0]!.batches.map((b) => b.baseSequence)).toEqual([0, 4, 8]);
      // Reading never writes the kept images: a second read finds the same.
      expect((await images(kept.brokers[0]!.cut!.file))[0]!.batches).toHaveLength(2);
      // As a trial would read it: 0 and 4 survived the cut; a record acknowledged only on the cut image was thrown away.
      const figures = classifyAcked([acked(0), acked(4), acked(8), acked(12)], [{ brokerId: 1, parts: final }], [{ brokerId: 1, parts: cut }], 12);
      expect(figures).toMatchObject({ acked: 16, served: 12, onDiskNotServed: 0, onNoDisk: 4, checkServed: 12, images: 2 });
      const thrownAway = classifyAcked([acked(0), acked(4), acked(8)], [{ brokerId: 1, parts: [{ ...final[0]!, batches: final[0]!.batches.slice(0, 1) }] }], [{ brokerId: 2, parts: cut }], 4);
      expect(thrownAway).toMatchObject({ served: 4, onDiskNotServed: 4, onNoDisk: 4, notServedOnBroker: { 2: 4 } });
      expect(figures.notServedOnBroker).toBeUndefined();
    } finally {
      if (!closed) await disks.close(false).catch(() => undefined);
    }
  }, 120_000);

  it('segments are decoded in base-offset order; a torn tail and never-written zeros are told apart', () => {
    const dir = path.join(work, 'segments');
    mkdirSync(dir, { recursive: true });
    appendDurably(path.join(dir, '00000000000000000100.log'), [8]);
    appendDurably(path.join(dir, '00000000000000000000.log'), [0, 4]);
    // A preallocated tail of zeros (no batch), then a segment whose last batch is cut short.
    const fd = openSync(path.join(dir, '00000000000000000000.log'), 'a');
    writeSync(fd, Buffer.alloc(4096));
    closeSync(fd);
    const torn = factory.build(PID, 12, Date.now());
    const fd2 = openSync(path.join(dir, '00000000000000000100.log'), 'a');
    writeSync(fd2, torn.subarray(0, torn.length - 10));
    closeSync(fd2);
    const p = readSegments(dir, 0, read);
    expect(p.batches.map((b) => b.baseSequence)).toEqual([0, 4, 8]);
    expect(p).toMatchObject({ segments: 2, tornTails: 1, corrupt: 0 });
    // A flipped byte inside a batch fails its CRC: corrupt, not torn.
    const file = path.join(dir, '00000000000000000100.log');
    const bytes = readFileSync(file);
    bytes[80] ^= 0xff;
    const fd3 = openSync(file, 'w');
    writeSync(fd3, bytes);
    closeSync(fd3);
    expect(readSegments(dir, 0, read)).toMatchObject({ corrupt: 1, tornTails: 1 });
    expect(existsSync(path.join(dir, 'none'))).toBe(false);
    expect(readSegments(path.join(dir, 'none'), 0, read)).toMatchObject({ batches: [], segments: 0 });
  });

  it('a ledger line that is not a batch is named by file and line', () => {
    const file = path.join(work, 'ledger.ndjson');
    const fd = openSync(file, 'w');
    writeSync(fd, `${JSON.stringify(acked(0))}\n{"partition":0,"producerId":1}\n`);
    closeSync(fd);
    expect(() => readLedgerFile(file)).toThrow(`${file}:2: field baseSequence must be a number, got undefined`);
    expect(() => readLedgerFile(path.join(work, 'missing.ndjson'))).toThrow(/no ledger \(the trial kept none\)/);
  });
});
