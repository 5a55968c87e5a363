// One host fault disk per broker (harness/disk/host-disk.ts) for targets whose brokers run on
// this host (kafka, process): the broker's data dir lives on it, and a power cut is
//   freeze the brokers (SIGSTOP: nothing more is written or acknowledged) ->
//   power off their disks (no request reaches them from now on) ->
//   SIGKILL the brokers -> detach the disks (the page cache of their filesystems dies) ->
//   each disk applies its onCut policy to its volatile cache.
// A restart attaches the disk again (ext4 replays its journal) before the broker starts.
import type { ReadErrorRange } from '../disk/disk-faults.ts';
import { statfsSync } from 'node:fs';
import path from 'node:path';
import { diskModelId, effectiveDiskSpec, type DiskSpec } from '../model/disk-spec.ts';
import { hostDiskModelId } from '../results/disk-models.ts';
import type { VmOptions } from '../model/scenario.ts';
import { HostDisk, type AttachTiming } from '../disk/host-disk.ts';
import type { NbdDiskReport } from '../disk/nbd-disk.ts';
import type { CutOutcome } from '../disk/volatile-cache.ts';
import { cutImageName, finalImageName, keepImageCopy, keepImageMove, type BrokerDiskEvidence, type KeptImage } from '../disk/disk-evidence.ts';

export interface HostFaultDiskConfig {
  /** The cell's disk (the scenario's vm.disk: block with the cell's vm.disk.* settings). */
  spec: DiskSpec;
  sizeMiB: number;
  mountOptions: string;
}

/** The broker's data directory on its disk, from the disk's root (crash states read it there). */
export const HOST_DISK_DATA_DIR = 'broker-data';

/** The part of a scenario's vm: block a host-route fault disk reads (scenario/vm-block-checks.ts HOST_DISK_VM_KEYS). */
export type HostDiskVm = Partial<Pick<VmOptions, 'disk' | 'diskMiB' | 'mountOptions'>>;

/** The fault disk of a cell: the vm.disk: block with the cell's vm.disk.* settings over it (2 GiB sparse by default). */
export function cellFaultDisk(vm: HostDiskVm | undefined, values: Readonly<Record<string, unknown>>): HostFaultDiskConfig {
  return { spec: effectiveDiskSpec(vm?.disk, values), sizeMiB: vm?.diskMiB ?? 2048, mountOptions: vm?.mountOptions ?? '' };
}

/** The disk model id a host-route target reports for its run (harness/results/disk-models.ts). */
export function runDiskModel(vm: HostDiskVm | undefined, variesByCell: boolean): string {
  return hostDiskModelId(diskModelId(effectiveDiskSpec(vm?.disk, {})), variesByCell);
}

/** How a cluster's disks start: fresh and recorded for crash states, or on crash-state images (a state booted). */
export interface HostFaultDiskStart {
  /** Keep each fresh disk's image before its first write (<dir>.base.img) beside its write log. */
  record?: boolean;
  /** Per broker id, an existing disk image to serve as it is (no mkfs, no write log). */
  images?: Record<number, string>;
  /**
   * Keep evidence under the trial's directory (harness/disk/disk-evidence.ts): each cut disk's
   * image as the cut left it, copied before a restart touches it; the final images when asked
   * (keepFinalImages) before the cluster stops.
   */
  evidence?: { trialDir: string; target: string };
}

/** A recorded broker disk: the crash-state builder's inputs (the host route's here, a VM's in vm-recorded-disk.ts). */
export interface RecordedDisk {
  baseImage: string;
  writeLog: string;
  /** The broker's data dir as a path on the disk's filesystem (from its root; a guest path under the VM's data mount is taken as such). */
  dataDirOnDisk: string;
  /**
   * Who wrote the log: the lab's NBD disk (exact host-clock stamps; the default) or QEMU's
   * blklogwrites (a watcher's observed stamps, 5 ms of uncertainty).
   */
  recorder?: 'nbd' | 'blklogwrites';
  /**
   * Once the cluster stopped, with the cut's host-clock µs: finishes the write log (blklogwrites:
   * converted from QEMU's log; `unseen` entries were stamped at the cut) and throws when it is
   * unusable (a write log that filled up). Absent: the log is complete as it is.
   */
  seal?(endUs: number): Promise<{ unseen: number }>;
}

/** What a cut did to one broker's disk (CutInfo.diskAtCut). */
export interface HostDiskAtCut {
  route: 'host';
  cut: CutOutcome;
  /** The disk's requests up to the cut. */
  counters: NbdDiskReport['counters'];
  /** The write log passed its bound (vm.disk.writeLogLimit): from then on writes were refused (ENOSPC); the message names the log. */
  writeLogFull?: string;
  /** The image as the cut left it, kept under the trial's directory (HostFaultDiskStart.evidence). */
  image?: KeptImage;
  /** Why that image could not be kept. */
  imageProblem?: string;
  /** The disk's size and its filesystem's free space just before it lost power (statfs of the mount; null: unreadable). */
  space?: DiskSpace | null;
}

/** A fault disk's filling at the cut: free = what the brokers (same uid as the harness) could still write. */
export interface DiskSpace {
  diskMiB: number;
  fsBytes: number;
  freeBytes: number;
}

/** A filesystem's size and the bytes the brokers (same uid as the harness) can still write to it; throws when unreadable. */
export function fileSystemSpace(dir: string): { fsBytes: number; freeBytes: number } {
  const s = statfsSync(dir);
  // root writes into ext4's reserved blocks too: its free space is bfree, anyone else's bavail.
  return { fsBytes: s.blocks * s.bsize, freeBytes: (process.getuid?.() === 0 ? s.bfree : s.bavail) * s.bsize };
}

function spaceOf(mountPoint: string, diskMiB: number): DiskSpace | null {
  try {
    return { diskMiB, ...fileSystemSpace(mountPoint) };
  } catch {
    return null;
  }
}

export class HostFaultDisks {
  /** What each broker's disk left as evidence so far (HostFaultDiskStart.evidence). */
  private readonly kept = new Map<number, BrokerDiskEvidence>();
  private readonly evidenceProblems: string[] = [];
  private keepFinal = false;

  private constructor(
    private readonly disks: Map<number, HostDisk>,
    readonly config: HostFaultDiskConfig,
    private readonly evidence: HostFaultDiskStart['evidence'] | undefined,
  ) {}

  /** A fresh disk per broker id, under workDir/broker-<id>/ (image) and mounted; closed again if any fails. */
  static async create(
    ids: number[],
    workDir: string,
    config: HostFaultDiskConfig,
    seed: number,
    log: (line: string) => void,
    who: string,
    start: HostFaultDiskStart = {},
  ): Promise<HostFaultDisks> {
    const disks = new Map<number, HostDisk>();
    const made = await Promise.allSettled(
      ids.map(async (id, i) => {
        const dir = path.join(workDir, `broker-${id}`, 'disk');
        const image = start.images?.[id];
        const d = await HostDisk.create({
          dir,
          ...(image !== undefined ? { image } : {}),
          ...(start.record && image === undefined ? { baseImage: `${dir}.base.img` } : {}),
          // The plain disk (model file: no writeLogLimit either) keeps no write log unless crash states record it.
          writeLog: start.record === true || config.spec.model !== 'file',
          sizeMiB: config.sizeMiB,
          spec: config.spec,
          // Each broker's disk draws its own onCut choices.
          seed: (seed + 0x9e3779b9 * (i + 1)) >>> 0,
          mountOptions: config.mountOptions,
          name: `${who} ${id}`,
          log,
        });
        disks.set(id, d);
      }),
    );
    const failed = made.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await Promise.all([...disks.values()].map((d) => d.close({ clean: false }).catch(() => undefined)));
      throw failed.reason;
    }
    return new HostFaultDisks(disks, config, start.images ? undefined : start.evidence);
  }

  private disk(id: number): HostDisk {
    const d = this.disks.get(id);
    if (!d) throw new Error(`host fault disks: no disk for broker ${id}`);
    return d;
  }

  /** Broker `id`'s recorded disk (its base image and write log), or null when it keeps none. */
  recordedDisk(id: number): RecordedDisk | null {
    const d = this.disk(id);
    const base = d.baseImagePath;
    const writeLog = d.writeLogPath;
    return base && writeLog ? { baseImage: base, writeLog, dataDirOnDisk: `/${HOST_DISK_DATA_DIR}` } : null;
  }

  /** Where broker `id`'s data lives (a directory on its mounted disk). */
  dataDirOf(id: number): string {
    return path.join(this.rootOf(id), HOST_DISK_DATA_DIR);
  }

  /** Arms read errors over byte ranges of broker `id`'s disk ([] disarms them): fault kind read-error. */
  setReadErrors(id: number, ranges: ReadonlyArray<Pick<ReadErrorRange, 'from' | 'to' | 'mode'>>): Promise<ReadErrorRange[]> {
    return this.disk(id).server.setReadErrors(ranges);
  }

  /** Broker `id`'s armed read-error ranges and the reads that hit them. */
  readErrorHits(id: number): Promise<ReadErrorRange[]> {
    return this.disk(id).server.readErrorHits();
  }

  /** The root of broker `id`'s disk where it is mounted (its data dir is below it). */
  rootOf(id: number): string {
    return this.disk(id).mountPoint;
  }

  /**
   * The cut: `freeze` stops the brokers at once (SIGSTOP), the disks lose power, `kill` ends the
   * brokers, the disks detach and apply their onCut policy. Returns each disk's outcome.
   */
  async cut(ids: number[], brokers: { freeze: () => void; kill: () => Promise<void> }): Promise<Record<number, HostDiskAtCut>> {
    brokers.freeze();
    const space = new Map(ids.map((id) => [id, spaceOf(this.disk(id).mountPoint, this.config.sizeMiB)]));
    await Promise.all(ids.map((id) => this.disk(id).powerOff()));
    await brokers.kill();
    const out: Record<number, HostDiskAtCut> = {};
    await Promise.all(
      ids.map(async (id) => {
        const cut = await this.disk(id).detach();
        const r = await this.disk(id).report();
        out[id] = { route: 'host', cut, counters: r.report.counters, space: space.get(id) ?? null, ...(r.writeLogFull ? { writeLogFull: `${this.disk(id).name}: ${r.writeLogFull}` } : {}) };
        Object.assign(out[id], await this.keepCutImage(id));
      }),
    );
    return out;
  }

  /** The image as the cut (and the disk's onCut policy) left it, copied before anything attaches it again. */
  private async keepCutImage(id: number): Promise<Pick<HostDiskAtCut, 'image' | 'imageProblem'>> {
    if (!this.evidence) return {};
    const entry = this.evidenceOf(id);
    const kept = await keepImageCopy(this.disk(id).imagePath, this.evidence.trialDir, cutImageName(id));
    if ('problem' in kept) {
      this.evidenceProblems.push(`broker ${id}: ${kept.problem}`);
      return { imageProblem: kept.problem };
    }
    entry.cut = kept;
    return { image: kept };
  }

  private evidenceOf(id: number): BrokerDiskEvidence {
    let e = this.kept.get(id);
    if (!e) {
      e = {
        brokerId: id,
        target: this.evidence?.target ?? '',
        fileSystem: 'ext4',
        dataDirOnDisk: `/${HOST_DISK_DATA_DIR}`,
        diskModel: hostDiskModelId(diskModelId(this.config.spec), false),
        sizeMiB: this.config.sizeMiB,
        mountOptions: this.config.mountOptions,
      };
      this.kept.set(id, e);
    }
    return e;
  }

  /** Keep every disk's final image when the cluster stops (evidence only; the stop's cleanliness is recorded). */
  keepFinalImages(): void {
    if (this.evidence) this.keepFinal = true;
  }

  /** Whether the final images will be kept at close (a cluster stops its brokers gracefully then). */
  get keepsFinalImages(): boolean {
    return this.keepFinal;
  }

  /** The evidence kept so far: per broker, its images; the copies that could not be made. */
  evidenceKept(): { brokers: BrokerDiskEvidence[]; incomplete: string[] } {
    return { brokers: [...this.kept.values()].sort((a, b) => a.brokerId - b.brokerId), incomplete: [...this.evidenceProblems] };
  }

  /** Attaches a cut broker's disk again (journal replay); a disk still attached is left as it is. */
  async attach(id: number): Promise<AttachTiming | null> {
    const d = this.disk(id);
    return d.attached ? null : d.attach();
  }

  /** The write log's fill or failure, per disk, for an error that names its node. */
  async problems(): Promise<string[]> {
    const out: string[] = [];
    for (const [id, d] of this.disks) {
      const r = await d.report().catch((e: Error) => ({ report: null, summary: e.message, writeLogFull: null }));
      if (r.writeLogFull) out.push(`broker ${id}: ${r.writeLogFull}`);
      if (r.report?.problems.length) out.push(`broker ${id}'s disk: ${r.report.problems.slice(0, 3).join(' | ')}`);
    }
    return out;
  }

  async summaries(): Promise<string[]> {
    return Promise.all([...this.disks].map(async ([id, d]) => `broker ${id}: ${(await d.report()).summary}`));
  }

  /** Ends every disk: clean (unmount, the drives write back) after a clean stop of the brokers. */
  async close(clean: boolean): Promise<void> {
    const r = await Promise.allSettled([...this.disks].map(([id, d]) => d.close({ clean, ...(this.keepFinal ? { keepImage: (image: string) => this.keepFinalImage(id, image, clean) } : {}) })));
    const failed = r.find((x): x is PromiseRejectedResult => x.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async keepFinalImage(id: number, image: string, clean: boolean): Promise<void> {
    const entry = this.evidenceOf(id);
    entry.finalStop = clean ? 'clean' : 'killed';
    const kept = await keepImageMove(image, this.evidence!.trialDir, finalImageName(id));
    if ('problem' in kept) this.evidenceProblems.push(`broker ${id}: ${kept.problem}`);
    else entry.final = kept;
  }
}
