// A VM data disk served by the harness's NBD server (behind the DataDisk seam): a fresh ext4
// in a sparse backing file, exported on a unix socket, attached to QEMU as
// `-drive file=nbd+unix:///durolab?socket=S,format=raw,if=virtio,cache=writeback` (the guest
// sees a volatile write cache and issues flushes). The disk outlives the VMs of a trial: a
// power cut applies the onCut policy to the cache and the next boot reconnects.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createFileDisk, qemuEscape, type DataDisk } from '../vm/disk.ts';
import { DiskFaults } from './disk-faults.ts';
import { journalSectorRanges } from './ext4-journal.ts';
import type { DiskSpec } from '../model/disk-spec.ts';
import { NbdServer } from './nbd-server.ts';
import { VolatileCacheStore, type CutOutcome } from './volatile-cache.ts';
import { WriteLogWriter } from './write-log.ts';

export interface NbdDiskOptions {
  /** The backing raw file (created with a fresh ext4). */
  file: string;
  sizeMiB: number;
  spec: DiskSpec;
  /** The trial's seed: onCut draws and latency jitter derive from it. */
  seed: number;
  /** The write log; null: none. */
  writeLogPath: string | null;
  log?: (line: string) => void;
  /** Skip mkfs (the file exists and holds what the guest expects). */
  existing?: boolean;
  /** Serve model file too, write-through (the host route, host-disk.ts, always goes through the server). */
  overNbd?: boolean;
}

export interface NbdDiskReport {
  socketPath: string;
  counters: NbdServer['counters'];
  cuts: CutOutcome[];
  injected: DiskFaults['injected'];
  problems: string[];
  writeLog: { path: string; bytes: number; records: number } | null;
}

/** Socket directories of open NBD disks: removed at process exit too (a second Ctrl-C exits without the async cleanup). */
const liveSocketDirs = new Set<string>();
let exitHook = false;
function trackSocketDir(dir: string): void {
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const d of liveSocketDirs) rmSync(d, { recursive: true, force: true });
    });
  }
  liveSocketDirs.add(dir);
}

export class NbdDisk implements DataDisk {
  readonly kind = 'nbd';
  readonly cuts: CutOutcome[] = [];
  private closed = false;

  private constructor(
    readonly opts: NbdDiskOptions,
    readonly server: NbdServer,
    private readonly store: VolatileCacheStore,
    readonly faults: DiskFaults,
    readonly writeLog: WriteLogWriter | null,
    private readonly socketDir: string,
  ) {}

  static async create(opts: NbdDiskOptions): Promise<NbdDisk> {
    if (opts.spec.model !== 'volatile-cache' && !opts.overNbd) throw new Error(`NbdDisk ${opts.file}: model ${opts.spec.model} is not served over NBD (model: file is a FileDisk)`);
    if (!opts.existing) await createFileDisk(opts.file, opts.sizeMiB);
    // A unix socket address holds 107 bytes: keep the socket in a short private directory.
    const socketDir = mkdtempSync(path.join(os.tmpdir(), 'durolab-nbd-'));
    trackSocketDir(socketDir);
    const store = new VolatileCacheStore({ file: opts.file, onCut: opts.spec.onCut, flush: opts.spec.flush, volatile: opts.spec.model === 'volatile-cache' });
    let writeLog: WriteLogWriter | null = null;
    try {
      writeLog = opts.writeLogPath ? new WriteLogWriter(opts.writeLogPath, opts.spec.writeLogLimitBytes) : null;
      const faults = new DiskFaults(opts.spec.errors, opts.spec.latency, opts.seed);
      if (opts.spec.errors.some((r) => r.on === 'data-write')) faults.journalSectors = await journalSectorRanges(opts.file);
      const server = await NbdServer.listen({
        socketPath: path.join(socketDir, 'disk.sock'),
        store,
        faults,
        writeLog,
        ...(opts.log ? { onProblem: opts.log } : {}),
      });
      return new NbdDisk(opts, server, store, faults, writeLog, socketDir);
    } catch (err) {
      writeLog?.close();
      store.close();
      rmSync(socketDir, { recursive: true, force: true });
      liveSocketDirs.delete(socketDir);
      throw err;
    }
  }

  get imagePath(): string {
    return this.opts.file;
  }

  get socketPath(): string {
    return this.server.socketPath;
  }

  describe(): string {
    const s = this.opts.spec;
    if (s.model !== 'volatile-cache') return `NBD disk ${this.opts.file} (${this.opts.sizeMiB} MiB, model ${s.model}: write-through, no volatile cache; socket ${this.socketPath})`;
    return `NBD disk ${this.opts.file} (${this.opts.sizeMiB} MiB, volatile cache, onCut ${s.onCut}, flush ${s.flush}${s.errors.length ? `, ${s.errors.length} error rule(s)` : ''}; socket ${this.socketPath})`;
  }

  get sizeMiB(): number {
    return this.opts.sizeMiB;
  }

  /** The drive below always says writeback. */
  readonly cacheMode = 'writeback';

  qemuDriveArgs(): string[] {
    return ['-drive', `file=nbd+unix:///${this.server.exportName}?socket=${qemuEscape(this.socketPath)},format=raw,if=virtio,cache=writeback`];
  }

  /** QEMU is dead: wait for its connection to end (nothing in flight), then lose what the policy says. */
  async afterPowerCut(): Promise<CutOutcome> {
    await this.server.idle();
    const outcome = this.store.cut((this.opts.seed + 0x9e3779b9 * (this.cuts.length + 1)) >>> 0);
    this.cuts.push(outcome);
    this.opts.log?.(
      `NBD disk ${this.opts.file}: power cut, ${outcome.unflushedWrites} unflushed write(s) (${outcome.unflushedSectors} sectors) in the cache; ` +
        `onCut ${outcome.policy} persisted ${outcome.persistedSectors} sector(s)${outcome.torn ? `, tore write ${outcome.torn.seq} (${outcome.torn.keptSectors} of ${outcome.torn.ofSectors} sectors)` : ''}`,
    );
    return outcome;
  }

  async afterCleanShutdown(): Promise<void> {
    await this.server.idle();
    this.store.writeBackAll();
  }

  /** Unflushed sectors still cached (tests). */
  get cachedSectors(): number {
    return this.store.cachedSectors;
  }

  report(): NbdDiskReport {
    return {
      socketPath: this.socketPath,
      counters: { ...this.server.counters },
      cuts: [...this.cuts],
      injected: [...this.faults.injected],
      problems: [...this.server.problems],
      writeLog: this.writeLog ? { path: this.writeLog.file, bytes: this.writeLog.sizeBytes, records: this.writeLog.records } : null,
    };
  }

  /** One line for the end of a trial: what the guest sent, what was injected, the write log. */
  summaryLine(): string {
    const r = this.report();
    const c = r.counters;
    const eio = r.injected.map((e) => `${e.op} #${e.nth}${e.op === 'write' ? ` at byte ${e.offset} (+${e.length})` : ''}`);
    return (
      `NBD disk ${this.imagePath}: ${c.writes} writes (${c.fuaWrites} FUA, ${(c.bytesWritten / 1048576).toFixed(1)} MiB), ${c.flushes} flushes, ${c.trims} trims, ${c.reads} reads, ${c.connections} connection(s); ` +
      `injected EIO: ${eio.length ? eio.join(', ') : 'none'}; cuts: ${r.cuts.length}; ` +
      `${r.writeLog ? `write log ${r.writeLog.path}: ${r.writeLog.records} records, ${(r.writeLog.bytes / 1048576).toFixed(1)} MiB` : 'no write log'}` +
      `${r.problems.length ? `; problems: ${r.problems.slice(0, 3).join(' | ')}` : ''}`
    );
  }

  /** Stops the server (QEMU must be gone), leaves the cache's unflushed data out of the image, closes the write log. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.server.close();
    } finally {
      this.store.close();
      this.writeLog?.close();
      rmSync(this.socketDir, { recursive: true, force: true });
      liveSocketDirs.delete(this.socketDir);
    }
  }
}

/**
 * A VM broker's data disk in `dir`: the sparse file (model file) or the NBD disk. Its write
 * log goes beside `dir` (broker-1 -> broker-1.disk.wlog, next to the serial logs): the runner
 * removes `dir` after a trial, the log stays for crash-state exploration and post-mortems.
 */
export async function createDataDisk(dir: string, sizeMiB: number, spec: DiskSpec, seed: number, log: (line: string) => void): Promise<DataDisk> {
  if (spec.model === 'file') return createFileDisk(path.join(dir, 'disk.img'), sizeMiB);
  const disk = await NbdDisk.create({ file: path.join(dir, 'disk.img'), sizeMiB, spec, seed, writeLogPath: `${dir}.disk.wlog`, log });
  log(disk.describe());
  return disk;
}
