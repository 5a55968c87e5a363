// Kernel modules the guest needs, in load order. Kernel packages extracted with dpkg-deb carry
// no modules.dep (depmod runs at install time), so dependencies come from each module's own
// .modinfo `depends=` entry.
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

/** The virtio stack: PCI transport, block disk, console, network (failover is virtio_net's dependency). */
export const GUEST_MODULES = [
  'virtio_ring',
  'virtio',
  'virtio_pci_modern_dev',
  'virtio_pci_legacy_dev',
  'virtio_pci',
  'virtio_blk',
  'virtio_console',
  'failover',
  'net_failover',
  'virtio_net',
] as const;

/** Without these the guest has no disk or no network; the rest are loaded when the kernel has them. */
const ESSENTIAL = new Set(['virtio_pci', 'virtio_blk', 'virtio_net']);

const MODULE_SUFFIX = /\.ko(\.xz|\.zst|\.gz)?$/;

const normalizeModuleName = (n: string): string => n.replaceAll('-', '_');

/** The `depends=` list in a module's .modinfo section (NUL-separated key=value strings). */
export function moduleDepends(ko: Buffer): string[] {
  const key = Buffer.from('\0depends=');
  const at = ko.indexOf(key);
  if (at < 0) return [];
  const start = at + key.length;
  const end = ko.indexOf(0, start);
  const value = ko.subarray(start, end < 0 ? ko.length : end).toString('latin1');
  return value ? value.split(',').filter(Boolean).map(normalizeModuleName) : [];
}

async function walk(dir: string, out: string[]): Promise<void> {
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (MODULE_SUFFIX.test(e.name)) out.push(p);
  }
}

/** Reads a module file, decompressing .ko.xz / .ko.zst / .ko.gz (busybox insmod takes plain .ko). */
async function readModule(file: string): Promise<Buffer> {
  if (file.endsWith('.ko')) return fs.readFile(file);
  if (file.endsWith('.gz')) return gunzipSync(await fs.readFile(file));
  const tool = file.endsWith('.xz') ? 'xz' : 'zstd';
  const r = await execa(tool, ['-dc', file], { encoding: 'buffer', reject: false });
  if (r.exitCode !== 0) throw new Error(`cannot decompress kernel module ${file} with ${tool} -dc (${r.exitCode}): install ${tool === 'xz' ? 'xz-utils' : 'zstd'}`);
  return Buffer.from(r.stdout);
}

export interface ResolvedModule {
  name: string;
  file: string;
  data: Buffer;
}

export interface ModulePlan {
  /** Modules to insmod, dependencies first. */
  load: ResolvedModule[];
  /** Wanted modules that the kernel has built in. */
  builtin: string[];
  /** Wanted (non-essential) modules this kernel has neither as a file nor built in. */
  absent: string[];
}

/** Orders `wanted` and their dependencies for insmod, from a /lib/modules/<version> directory. */
export async function planModules(modulesDir: string, wanted: readonly string[] = GUEST_MODULES): Promise<ModulePlan> {
  if (!existsSync(modulesDir)) throw new Error(`kernel modules directory ${modulesDir} does not exist`);
  const files: string[] = [];
  await walk(modulesDir, files);
  const byName = new Map<string, string>();
  for (const f of files) byName.set(normalizeModuleName(path.basename(f).replace(MODULE_SUFFIX, '')), f);
  const builtinFile = path.join(modulesDir, 'modules.builtin');
  const builtinSet = new Set<string>();
  if (existsSync(builtinFile)) {
    for (const line of (await fs.readFile(builtinFile, 'utf8')).split('\n')) {
      if (line.trim()) builtinSet.add(normalizeModuleName(path.basename(line.trim()).replace(MODULE_SUFFIX, '')));
    }
  }
  const plan: ModulePlan = { load: [], builtin: [], absent: [] };
  const done = new Set<string>();
  const visiting = new Set<string>();
  const visit = async (name: string, requiredBy: string | undefined): Promise<void> => {
    if (done.has(name)) return;
    if (visiting.has(name)) throw new Error(`kernel modules in ${modulesDir}: dependency cycle through ${name}`);
    const file = byName.get(name);
    if (!file) {
      done.add(name);
      if (builtinSet.has(name)) plan.builtin.push(name);
      else if (requiredBy) throw new Error(`kernel module ${name} (needed by ${requiredBy}) is neither in ${modulesDir} nor built in`);
      else if (ESSENTIAL.has(name)) throw new Error(`kernel module ${name} is neither in ${modulesDir} nor built in: the guest would have no ${name === 'virtio_blk' ? 'disk' : name === 'virtio_net' ? 'network' : 'virtio PCI'}`);
      else plan.absent.push(name);
      return;
    }
    visiting.add(name);
    const data = await readModule(file);
    for (const dep of moduleDepends(data)) await visit(dep, name);
    visiting.delete(name);
    done.add(name);
    plan.load.push({ name, file, data });
  };
  for (const name of wanted) await visit(normalizeModuleName(name), undefined);
  return plan;
}
