// The lab's fault disk under host processes (the "host route"): the harness's NBD server
// (nbd-disk.ts: the disk model, its volatile cache, onCut, flush behaviour, EIO, latency and
// write log; in a process of its own, disk-server-command.ts says why) -> qemu-storage-daemon as NBD client with a FUSE export of the block device ->
// a loop device over that FUSE file (direct I/O: no second page cache under ext4; the FUSE
// connection serialised, see serialiseFuseConnection) -> ext4 mounted on the host. A broker JVM or process writes to the mount at native speed; every
// block request the kernel sends reaches the NBD server.
//
// A power cut is two steps around the caller's SIGKILL of the processes that write:
//   powerOff()  SIGKILL of qemu-storage-daemon: from here on nothing reaches the disk (the
//               kernel's dirty pages for the mount can only fail against a dead FUSE file);
//   detach()    unmount ext4 (its page cache is dropped with it), detach the loop device,
//               unmount the dead FUSE file, then the disk applies its onCut policy to what
//               its volatile cache held.
// attach() brings it back: a new daemon, loop device and mount (ext4 replays its journal).
// No daemon, loop device or mount outlives the harness: the daemon runs under
// `setpriv --pdeathsig KILL` and in the process registry, an exit hook detaches what is
// still attached, and sweepOrphanedHostDisks() (called at every create) clears what a
// SIGKILLed harness left.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { findExecutable, requireExecutable } from '../vm/prerequisites.ts';
import { sparseCopy } from '../vm/disk.ts';
import { isAlive, pdeathsigArgv, trackChildProcess, untrackChildProcess } from '../vm/process-registry.ts';
import type { DiskSpec } from '../model/disk-spec.ts';
import type { NbdDiskReport } from './nbd-disk.ts';
import type { CutOutcome } from './volatile-cache.ts';
import { DiskServerProcess } from './disk-server-client.ts';

/** The FUSE export's file name: sweeps find the lab's host disks by it. */
export const FUSE_EXPORT_NAME = 'durolab-disk.fuse';
/** A host disk's run directory (mkdtemp under the temp dir) and its mount point. */
const RUN_DIR_PREFIX = 'durolab-hd-';
const RUN_DIR_MOUNT = new RegExp(`/${RUN_DIR_PREFIX}[^/]+/mnt$`);
/** qemu-storage-daemon command lines carry this, so sweeps and tests find them. */
export const QSD_MARKER = 'durolab-host-disk';

export interface HostDiskOptions {
  /** Holds the NBD backing image (disk.img); the write log goes beside it (<dir>.disk.wlog). */
  dir: string;
  sizeMiB: number;
  spec: DiskSpec;
  seed: number;
  /** ext4 mount options ('' = the kernel's defaults). */
  mountOptions?: string;
  /** Record every request in a write log (crash-state exploration); default true. */
  writeLog?: boolean;
  /** Who uses it, for messages ("kafka node 1"). */
  name: string;
  /** Copy the fresh disk here before anything writes to it (the base image of crash states). */
  baseImage?: string;
  /** Serve this existing image (a crash state, booted) instead of a fresh disk.img in dir: no mkfs, no write log. */
  image?: string;
  log?: (line: string) => void;
}

export interface AttachTiming {
  /** Daemon spawn to its FUSE export answering, ms. */
  exportMs: number;
  /** losetup + mount (journal replay after a cut), ms. */
  mountMs: number;
}

const FUSECTL = '/sys/fs/fuse/connections';

/**
 * One FUSE request at a time to qemu-storage-daemon. Measured here (kernel 6.18, qsd 7.2): with
 * the kernel's default of 12 background requests, a direct-I/O loop device over qsd's FUSE export
 * reads back other data than was written and fdatasync'd (a 20 MiB file of 16,589-byte writes,
 * fdatasync every ~1 MB, caches dropped: ranges of 8-300 KiB held another offset's bytes, with
 * qsd's plain file driver too, no NBD server involved) and ext4's metadata with it; with
 * max_background 1 it reads back byte for byte (the disk server serves one request at a time
 * anyway). A buffered loop device was correct too but lost the disk's EIO/ENOSPC on the way to
 * fdatasync, which the fault disk must deliver. Tests: host-disk.test.ts, host-fault-disks.test.ts.
 */
async function serialiseFuseConnection(fuseFile: string, name: string): Promise<void> {
  if (!existsSync(FUSECTL) || readdirSync(FUSECTL).length === 0) {
    // fusectl is not always mounted; its connections/ directory is where the limit is set.
    const r = spawnSync(findExecutable('mount') ?? 'mount', ['-t', 'fusectl', 'none', FUSECTL], { encoding: 'utf8' });
    if (r.status !== 0 && readdirSync(FUSECTL).length === 0) throw new Error(`${name}: cannot mount fusectl on ${FUSECTL} (${String(r.stderr).trim()}): the FUSE export's requests could not be serialised`);
  }
  const dev = statSync(fuseFile).dev;
  const minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
  const knob = path.join(FUSECTL, String(minor), 'max_background');
  try {
    writeFileSync(knob, '1');
  } catch (err) {
    throw new Error(`${name}: cannot set ${knob} to 1 (${(err as NodeJS.ErrnoException).code ?? String(err)}): the FUSE export's requests could not be serialised`);
  }
}

/** What the host route's tools are, or why one is missing (the apt package that has it). */
export function hostDiskPrerequisiteProblem(): string | null {
  const missing: string[] = [];
  if (!findExecutable('qemu-storage-daemon')) missing.push('qemu-storage-daemon (package qemu-system-common, with qemu-system-x86)');
  for (const t of ['losetup', 'mount', 'umount']) if (!findExecutable(t)) missing.push(`${t} (package mount)`);
  if (!findExecutable('mkfs.ext4')) missing.push('mkfs.ext4 (package e2fsprogs)');
  if (!existsSync('/dev/fuse')) missing.push('/dev/fuse (the fuse kernel module)');
  if (!existsSync('/dev/loop-control')) missing.push('/dev/loop-control (the loop kernel module: modprobe loop)');
  if (process.getuid?.() !== 0) missing.push('root (losetup and mount)');
  return missing.length ? `the host fault disk needs ${missing.join(', ')}` : null;
}

const live = new Set<HostDisk>();
let exitHook = false;
function track(d: HostDisk): void {
  if (!exitHook) {
    exitHook = true;
    // A second Ctrl-C exits without the async cleanup: detach synchronously what is left.
    process.on('exit', () => {
      for (const disk of live) disk.detachSync();
    });
  }
  live.add(d);
}

async function run(file: string, args: string[], what: string, timeoutMs = 30_000): Promise<string> {
  const r = await execa(file, args, { reject: false, timeout: timeoutMs, all: true });
  if (r.exitCode !== 0) throw new Error(`${what}: ${file} ${args.join(' ')} failed (${r.timedOut ? `timed out after ${timeoutMs} ms` : `exit ${r.exitCode ?? r.signal}`}): ${String(r.all ?? '').trim()}`);
  return String(r.stdout ?? '').trim();
}

/** Mount points (from /proc/self/mountinfo) with their fs type and source. */
function mounts(): Array<{ point: string; fstype: string; source: string }> {
  const out: Array<{ point: string; fstype: string; source: string }> = [];
  let text = '';
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const point = left.split(' ')[4]?.replace(/\\040/g, ' ').replace(/\\134/g, '\\');
    const [fstype, source] = right.split(' ');
    if (point && fstype) out.push({ point, fstype, source: source ?? '' });
  }
  return out;
}

/** Loop devices and their backing files (/sys/block/loopN/loop/backing_file). */
function loopDevices(): Array<{ dev: string; backing: string }> {
  const out: Array<{ dev: string; backing: string }> = [];
  for (const d of existsSync('/sys/block') ? readdirSync('/sys/block') : []) {
    if (!d.startsWith('loop')) continue;
    try {
      out.push({ dev: `/dev/${d}`, backing: readFileSync(`/sys/block/${d}/loop/backing_file`, 'utf8').trim() });
    } catch {
      // not bound
    }
  }
  return out;
}

function qsdPidsServing(fuseFile: string): number[] {
  const found: number[] = [];
  for (const d of existsSync('/proc') ? readdirSync('/proc') : []) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes(QSD_MARKER) && cmd.includes(fuseFile) && isAlive(Number(d))) found.push(Number(d));
    } catch {
      // gone
    }
  }
  return found;
}

/** Unmounts, detaches and unmounts again, synchronously and forcibly: nothing waits on a dead export. */
function teardownSync(fuseFile: string, mountPoint: string | null): string[] {
  const problems: string[] = [];
  const umount = findExecutable('umount') ?? 'umount';
  const losetup = findExecutable('losetup') ?? 'losetup';
  const loops = loopDevices().filter((l) => l.backing === fuseFile);
  const loopDevs = new Set(loops.map((l) => l.dev));
  for (const m of mounts()) {
    if (m.point === mountPoint || loopDevs.has(m.source)) {
      const r = spawnSync(umount, [m.point], { timeout: 20_000 });
      // A mount already gone ("not mounted": released with the export under it) is what the teardown wanted (seen once in nats-power-cut-late).
      if (r.status !== 0 && spawnSync(umount, ['-l', m.point], { timeout: 20_000 }).status !== 0 && mounts().some((x) => x.point === m.point)) {
        problems.push(`umount ${m.point} failed: ${String(r.stderr).trim()}`);
      }
    }
  }
  for (const l of loops) {
    const r = spawnSync(losetup, ['-d', l.dev], { timeout: 20_000 });
    // A device already gone (ENXIO: the kernel released it once its last user did) is what detach wanted;
    // only one that still backs onto this disk is a problem (seen once in a frontier run: "detach failed: No such device or address").
    if (r.status !== 0 && loopDevices().some((x) => x.dev === l.dev && x.backing === fuseFile)) problems.push(`losetup -d ${l.dev} failed: ${String(r.stderr).trim()}`);
  }
  for (const pid of qsdPidsServing(fuseFile)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  if (mounts().some((m) => m.point === fuseFile)) {
    const r = spawnSync(umount, [fuseFile], { timeout: 20_000 });
    if (r.status !== 0 && spawnSync(umount, ['-l', fuseFile], { timeout: 20_000 }).status !== 0) problems.push(`umount ${fuseFile} failed: ${String(r.stderr).trim()}`);
  }
  return problems;
}

/**
 * Clears host disks whose harness is gone: a FUSE export of the lab (FUSE_EXPORT_NAME) with no
 * live qemu-storage-daemon, or one whose daemon's parent is init (its harness was SIGKILLed and
 * pdeathsig did not reach it), with the ext4 mount and loop device over it, and an unmounted
 * loop device left over a FUSE file whose mount is gone. Disks of a harness still running are
 * left alone. Returns what it cleared.
 */
export function sweepOrphanedHostDisks(): string[] {
  const cleared: string[] = [];
  const fuseFiles = new Set<string>();
  for (const m of mounts()) if (m.fstype.startsWith('fuse') && path.basename(m.point) === FUSE_EXPORT_NAME) fuseFiles.add(m.point);
  for (const l of loopDevices()) if (path.basename(l.backing.replace(/ \(deleted\)$/, '')) === FUSE_EXPORT_NAME) fuseFiles.add(l.backing.replace(/ \(deleted\)$/, ''));
  // An ext4 mount whose FUSE file is already gone (its loop device shows no backing path then).
  for (const m of mounts()) if (RUN_DIR_MOUNT.test(m.point)) fuseFiles.add(path.join(path.dirname(m.point), FUSE_EXPORT_NAME));
  for (const f of fuseFiles) {
    const owners = qsdPidsServing(f).filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== 1;
      } catch {
        return false;
      }
    });
    if (owners.length > 0) continue;
    teardownSync(f, path.join(path.dirname(f), 'mnt'));
    cleared.push(f);
  }
  // A loop device whose backing file was itself a mount point that is gone (qsd's FUSE export
  // mounts on the file): its backing path reads "/" and it can serve nothing. Seen after a test
  // run was killed mid-teardown (the export unmounted, the loop device left); detached if unmounted.
  const mountedSources = new Set(mounts().map((m) => m.source));
  for (const l of loopDevices()) {
    if (l.backing !== '/' || mountedSources.has(l.dev)) continue;
    const r = spawnSync(findExecutable('losetup') ?? 'losetup', ['-d', l.dev], { timeout: 20_000 });
    if (r.status === 0) cleared.push(`${l.dev} (its backing mount was gone)`);
  }
  return cleared;
}

export class HostDisk {
  private qsd: ResultPromise | null = null;
  private qsdPid: number | null = null;
  private qsdExited: Promise<void> = Promise.resolve();
  private loopDev: string | null = null;
  private mounted = false;
  private closed = false;
  /** What each cut did to the volatile cache. */
  readonly cuts: CutOutcome[] = [];

  private constructor(
    readonly opts: HostDiskOptions,
    readonly server: DiskServerProcess,
    /** Private short directory: the FUSE export file and the mount point (paths free of commas). */
    private readonly runDir: string,
  ) {}

  /** The FUSE file qemu-storage-daemon exports the block device as. */
  get fuseFile(): string {
    return path.join(this.runDir, FUSE_EXPORT_NAME);
  }

  /** Where the ext4 is mounted (the broker's data lives below it). */
  get mountPoint(): string {
    return path.join(this.runDir, 'mnt');
  }

  get attached(): boolean {
    return this.mounted;
  }

  /** The NBD disk's backing image (the disk's stable media). */
  get imagePath(): string {
    return this.opts.image ?? path.join(this.opts.dir, 'disk.img');
  }

  /** Who uses it ("kafka node 1"), for messages. */
  get name(): string {
    return this.opts.name;
  }

  /** The fresh disk's copy (HostDiskOptions.baseImage), or null. */
  get baseImagePath(): string | null {
    return this.opts.image ? null : (this.opts.baseImage ?? null);
  }

  /** The write log of every request, or null. */
  get writeLogPath(): string | null {
    return this.opts.writeLog === false || this.opts.image ? null : `${this.opts.dir}.disk.wlog`;
  }

  /** A fresh ext4 on a new NBD disk, exported, loop-attached and mounted. */
  static async create(opts: HostDiskOptions): Promise<HostDisk> {
    const why = hostDiskPrerequisiteProblem();
    if (why) throw new Error(`${opts.name}: ${why}`);
    for (const f of sweepOrphanedHostDisks()) opts.log?.(`host disk: cleared a disk an earlier run left attached (${f})`);
    mkdirSync(opts.dir, { recursive: true });
    // model file is served over NBD too, write-through (VolatileCacheStore volatile: false):
    // the host route always goes through the server, so every model has its counters and write log.
    const server = await DiskServerProcess.start(
      opts.image
        ? { file: opts.image, sizeMiB: opts.sizeMiB, spec: opts.spec, seed: opts.seed, writeLogPath: null, existing: true }
        : { file: path.join(opts.dir, 'disk.img'), sizeMiB: opts.sizeMiB, spec: opts.spec, seed: opts.seed, writeLogPath: opts.writeLog === false ? null : `${opts.dir}.disk.wlog` },
      opts.name,
      opts.log,
    );
    if (opts.baseImage && !opts.image) {
      try {
        await sparseCopy(path.join(opts.dir, 'disk.img'), opts.baseImage);
      } catch (err) {
        await server.close();
        throw err;
      }
    }
    const runDir = mkdtempSync(path.join(os.tmpdir(), RUN_DIR_PREFIX));
    const d = new HostDisk(opts, server, runDir);
    track(d);
    try {
      await d.attach();
    } catch (err) {
      await d.close({ clean: false }).catch(() => undefined);
      throw err;
    }
    opts.log?.(`${opts.name}: ${server.ready.describe} -> qemu-storage-daemon FUSE ${d.fuseFile} -> ${d.loopDev} -> ext4 on ${d.mountPoint}`);
    return d;
  }

  /** Starts the export, attaches the loop device and mounts (replaying the journal after a cut). */
  async attach(): Promise<AttachTiming> {
    if (this.closed) throw new Error(`${this.opts.name}: host disk is closed`);
    if (this.mounted) throw new Error(`${this.opts.name}: host disk is already attached`);
    const t0 = Date.now();
    writeFileSync(this.fuseFile, '');
    mkdirSync(this.mountPoint, { recursive: true });
    const qsdArgs = [
      '--blockdev',
      `driver=nbd,node-name=${QSD_MARKER},server.type=unix,server.path=${this.server.socketPath.replaceAll(',', ',,')},export=${this.server.ready.exportName}`,
      '--export',
      `type=fuse,id=e0,node-name=${QSD_MARKER},mountpoint=${this.fuseFile.replaceAll(',', ',,')},writable=on`,
    ];
    const [file, argv] = pdeathsigArgv(findExecutable('setpriv'), requireExecutable('qemu-storage-daemon'), qsdArgs);
    const child = execa(file, argv, { stdin: 'ignore', reject: false, all: true, cleanup: true, buffer: { all: true } });
    if (child.pid === undefined) throw new Error(`${this.opts.name}: could not spawn qemu-storage-daemon`);
    const pid = child.pid;
    trackChildProcess(pid, `qemu-storage-daemon ${this.fuseFile}`);
    this.qsd = child;
    this.qsdPid = pid;
    let exited = false;
    this.qsdExited = child.then(() => {
      exited = true;
      untrackChildProcess(pid);
    });
    const end = Date.now() + 15_000;
    while (!mounts().some((m) => m.point === this.fuseFile && m.fstype.startsWith('fuse'))) {
      if (exited) throw new Error(`${this.opts.name}: qemu-storage-daemon exited before its FUSE export was up: ${String((await child).all ?? '').trim()}`);
      if (Date.now() > end) {
        child.kill('SIGKILL');
        throw new Error(`${this.opts.name}: qemu-storage-daemon's FUSE export ${this.fuseFile} not mounted after 15 s`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    const exportMs = Date.now() - t0;
    await serialiseFuseConnection(this.fuseFile, this.opts.name);
    this.loopDev = await run(requireExecutable('losetup'), ['--find', '--show', '--direct-io=on', this.fuseFile], `${this.opts.name}: loop device over ${this.fuseFile}`);
    const mopts = this.opts.mountOptions ? ['-o', this.opts.mountOptions] : [];
    await run(requireExecutable('mount'), ['-t', 'ext4', ...mopts, this.loopDev, this.mountPoint], `${this.opts.name}: mount of ${this.loopDev}`);
    this.mounted = true;
    return { exportMs, mountMs: Date.now() - t0 - exportMs };
  }

  /**
   * The power goes: SIGKILL of the export's daemon, so no request issued from now on reaches
   * the disk. The caller SIGKILLs its writers next, then calls detach(). Resolves when the
   * daemon is gone.
   */
  async powerOff(): Promise<void> {
    if (this.qsd && this.qsdPid !== null && isAlive(this.qsdPid)) this.qsd.kill('SIGKILL');
    await this.qsdExited;
    this.qsd = null;
  }

  /** After powerOff() and the writers' death: unmount and detach (the page cache dies), then apply the onCut policy. */
  async detach(): Promise<CutOutcome> {
    if (this.qsd) throw new Error(`${this.opts.name}: detach() before powerOff()`);
    const problems = teardownSync(this.fuseFile, this.mountPoint);
    this.mounted = false;
    this.loopDev = null;
    if (problems.length) throw new Error(`${this.opts.name}: after the cut: ${problems.join('; ')}`);
    const outcome = await this.server.cut();
    this.cuts.push(outcome);
    return outcome;
  }

  /** Synchronous, forcible detach (exit hook): no async work is possible there. */
  detachSync(): void {
    if (this.closed) return;
    teardownSync(this.fuseFile, this.mountPoint);
    this.mounted = false;
    this.server.kill();
  }

  /**
   * Ends the disk. clean: unmount (ext4 writes back and flushes), stop the daemon, and the drive
   * writes back what its cache holds; otherwise as after a cut. The image is removed (handed to
   * `keepImage` first, which may move it away as evidence); the write log stays.
   */
  async close(opts: { clean: boolean; keepImage?: (image: string) => Promise<void> } = { clean: true }): Promise<void> {
    if (this.closed) return;
    const problems: string[] = [];
    try {
      if (opts.clean && this.mounted) {
        await run(requireExecutable('umount'), [this.mountPoint], `${this.opts.name}: clean unmount`).catch((e: Error) => problems.push(e.message));
        if (this.loopDev) await run(requireExecutable('losetup'), ['-d', this.loopDev], `${this.opts.name}: loop detach`).catch((e: Error) => problems.push(e.message));
        this.mounted = false;
        if (this.qsd && this.qsdPid !== null && isAlive(this.qsdPid)) this.qsd.kill('SIGTERM');
        const gone = await Promise.race([this.qsdExited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000))]);
        if (!gone) problems.push('qemu-storage-daemon did not exit 5 s after SIGTERM');
      }
      await this.powerOff();
      problems.push(...teardownSync(this.fuseFile, this.mountPoint));
      this.mounted = false;
      if (opts.clean) await this.server.cleanShutdown();
    } finally {
      this.closed = true;
      live.delete(this);
      this.lastReport = await this.server.report().catch(() => this.lastReport);
      await this.server.close();
      // A crash state's image (opts.image) is the caller's: never kept or moved from here.
      if (opts.keepImage && !this.opts.image) await opts.keepImage(this.imagePath).catch((e: Error) => problems.push(e.message));
      rmSync(this.imagePath, { force: true });
      // Never a recursive remove through a mount that is still there (it would delete its files).
      if (!mounts().some((m) => m.point.startsWith(this.runDir))) rmSync(this.runDir, { recursive: true, force: true });
    }
    if (problems.length) throw new Error(`${this.opts.name}: closing the host disk: ${problems.join('; ')}`);
  }

  private lastReport: { report: NbdDiskReport; summary: string; writeLogFull: string | null } | null = null;

  /** What the disk saw (requests, injected errors, cuts, write log); after close(), the last one. */
  async report(): Promise<{ report: NbdDiskReport; summary: string; writeLogFull: string | null }> {
    if (this.closed) {
      if (!this.lastReport) throw new Error(`${this.opts.name}: host disk closed before any report`);
      return this.lastReport;
    }
    return (this.lastReport = await this.server.report());
  }
}
