// `make vm-image`: everything a guest boots from, built once and cached by a hash of its
// inputs (kernel and modules, busybox, node and its libraries, the bundles, the copied
// node_modules, /init). The initramfs stays uncompressed: the kernel ignored a small archive
// appended to a compressed one, and unpacking an uncompressed one is fastest under TCG.
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildGuestBundle } from './guest-bundle.ts';
import { GUEST_MODULES, planModules } from './kernel-modules.ts';
import { resolveGuestKernel, type KernelSource } from './kernel.ts';
import { renderInitScript } from './init-script.ts';
import { repoRoot } from '../../engine/common/repo-root.ts';
import { defaultVmCacheDir } from './paths.ts';
import { checkVmPrerequisites, requireExecutable } from './prerequisites.ts';

/** Bump when the image layout changes in a way the hashed inputs do not show. */
const IMAGE_FORMAT = 'durolab-vm-image/1';
/** How many built images the cache keeps (others may still be booting from an older one). */
const KEEP_IMAGES = 3;

export interface VmImage {
  hash: string;
  dir: string;
  kernel: string;
  initrd: string;
  kernelSource: KernelSource;
  kernelVersion: string;
  kernelPackage?: string;
  nodeVersion: string;
  builtAt: string;
  initrdBytes: number;
  /** Modules /init loads, in order. */
  modules: string[];
  /** npm packages copied to /durolab/node_modules. */
  packages: string[];
  /** Whether /durolab/dist/durolab.mjs (the CLI) is in the image. */
  hasCli: boolean;
  /** True when this call found the image in the cache. */
  cached: boolean;
}

export interface BuildVmImageOptions {
  cacheDir?: string;
  force?: boolean;
  log?: (s: string) => void;
  kernel?: 'auto' | KernelSource;
  /** The CLI entry bundled as /durolab/dist/durolab.mjs (default harness/cli/main.ts); null leaves it out. */
  cliEntry?: string | null;
}

const hashMemo = new Map<string, string>();

/** sha256 of a file, memoized per process on (path, size, mtime, inode): node alone is ~100 MB. */
async function hashFile(file: string): Promise<string> {
  const st = statSync(file);
  const key = `${file}\0${st.size}\0${st.mtimeMs}\0${st.ino}`;
  const memo = hashMemo.get(key);
  if (memo) return memo;
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  const digest = h.digest('hex');
  hashMemo.set(key, digest);
  return digest;
}

const sha = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

/** Shared libraries `ldd` lists for a binary, as absolute paths (the vDSO has none). */
async function sharedLibraries(binary: string): Promise<string[]> {
  const r = await execa('ldd', [binary], { reject: false });
  if (/not a dynamic executable|statically linked/.test(`${r.stdout}${r.stderr}`)) return [];
  if (r.exitCode !== 0) throw new Error(`ldd ${binary} failed (exit ${r.exitCode}): ${r.stderr.trim()}`);
  const libs: string[] = [];
  for (const line of r.stdout.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) libs.push(m[1]!);
    else if (/not found/.test(line)) throw new Error(`ldd ${binary}: ${line.trim()}`);
  }
  return libs;
}

interface StagedFile {
  rel: string;
  src?: string;
  data?: Buffer;
  mode: number;
}

async function writeCpio(root: string, out: string, busybox: string): Promise<void> {
  const entries: string[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const e of (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      entries.push(r);
      if (e.isDirectory()) await walk(path.join(dir, e.name), r);
    }
  };
  await walk(root, '');
  // There is no cpio on a stock host; busybox's writes the newc format the kernel unpacks.
  const r = await execa(busybox, ['cpio', '-o', '-H', 'newc'], {
    cwd: root,
    input: entries.join('\n') + '\n',
    stdout: { file: out },
    buffer: { stdout: false }, // the archive is ~100 MB: to the file, not into memory
    reject: false,
  });
  if (r.exitCode !== 0) throw new Error(`busybox cpio -o -H newc in ${root} failed (exit ${r.exitCode}): ${(String(r.stderr ?? '') || (r.message ?? '')).trim().slice(0, 500)}`);
}

async function pruneImages(imagesDir: string, keep: string): Promise<void> {
  const dirs = (await fs.readdir(imagesDir, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => ({ name: e.name, mtime: statSync(path.join(imagesDir, e.name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const d of dirs.slice(KEEP_IMAGES)) {
    if (d.name !== keep) await fs.rm(path.join(imagesDir, d.name), { recursive: true, force: true });
  }
}

export async function buildVmImage(opts: BuildVmImageOptions = {}): Promise<VmImage> {
  const log = opts.log ?? (() => {});
  await checkVmPrerequisites();
  const root = repoRoot();
  const cacheDir = path.resolve(opts.cacheDir ?? defaultVmCacheDir());
  const imagesDir = path.join(cacheDir, 'images');
  await fs.mkdir(imagesDir, { recursive: true });

  const kernel = await resolveGuestKernel(cacheDir, opts.kernel ?? 'auto', log);
  const modules = await planModules(kernel.modulesDir, GUEST_MODULES);
  const busybox = requireExecutable('busybox');
  const node = process.execPath;
  const nodeLibs = await sharedLibraries(node);
  const cliEntry = opts.cliEntry === undefined ? path.join(root, 'harness/cli/main.ts') : opts.cliEntry;
  const bundle = await buildGuestBundle({ root, cliEntry });
  // The engine's addons, every dist/*.node scripts/build-native.mjs built (engine/common/native-addon.ts
  // loads them beside the bundle): guest brokers run the same CRC-32C and write path the host
  // records in run.json's environment.
  const distDir = path.join(root, 'dist');
  const addons = (existsSync(distDir) ? readdirSync(distDir) : [])
    .filter((f) => f.endsWith('.node'))
    .sort()
    .map((f) => ({ rel: `durolab/dist/${f}`, src: path.join(distDir, f) }));
  const nativeLibs = new Set<string>();
  for (const f of [...bundle.nodeModules, ...addons]) if (f.src.endsWith('.node')) for (const l of await sharedLibraries(f.src)) nativeLibs.add(l);
  const libs = [...new Set([...nodeLibs, ...nativeLibs])].sort();
  const initScript = renderInitScript(modules.load.map((m) => m.name));

  // The hash covers contents only, so the same inputs give the same image on any checkout.
  const inputs: Array<[string, string]> = [
    ['format', IMAGE_FORMAT],
    ['kernel', await hashFile(kernel.vmlinuz)],
    ...modules.load.map((m): [string, string] => [`module:${m.name}`, sha(m.data)]),
    ['busybox', await hashFile(busybox)],
    ['node', await hashFile(node)],
    ...(await Promise.all(libs.map(async (l): Promise<[string, string]> => [`lib:${l}`, await hashFile(l)]))),
    ...bundle.files.map((f): [string, string] => [`bundle:${f.rel}`, sha(f.data)]),
    ...(await Promise.all(bundle.nodeModules.map(async (f): Promise<[string, string]> => [`npm:${f.rel}`, await hashFile(f.src)]))),
    ...(await Promise.all(addons.map(async (f): Promise<[string, string]> => [`addon:${f.rel}`, await hashFile(f.src)]))),
    ['init', sha(initScript)],
  ];
  const hash = sha(inputs.map(([k, v]) => `${k}=${v}`).join('\n')).slice(0, 16);
  const dir = path.join(imagesDir, hash);
  const manifestPath = path.join(dir, 'image.json');

  if (!opts.force && existsSync(manifestPath)) {
    const image = JSON.parse(readFileSync(manifestPath, 'utf8')) as VmImage;
    if (existsSync(image.kernel) && existsSync(image.initrd)) {
      const now = new Date();
      await fs.utimes(dir, now, now).catch(() => {}); // recently used: spared by pruning
      return { ...image, cached: true };
    }
  }

  const t0 = performance.now();
  log(`vm-image: building ${hash} (kernel ${kernel.version} from ${kernel.source}, node ${process.version})`);
  const stage = path.join(imagesDir, `.stage-${hash}-${process.pid}-${Date.now()}`);
  const rootfs = path.join(stage, 'root');
  try {
    const staged: StagedFile[] = [
      { rel: 'init', data: Buffer.from(initScript), mode: 0o755 },
      { rel: 'usr/bin/busybox', src: busybox, mode: 0o755 },
      { rel: 'usr/bin/node', src: node, mode: 0o755 },
      ...libs.map((l) => ({ rel: l.slice(1), src: l, mode: 0o755 })),
      ...modules.load.map((m) => ({ rel: `durolab/modules/${m.name}.ko`, data: m.data, mode: 0o644 })),
      ...bundle.files.map((f) => ({ rel: f.rel, data: f.data, mode: 0o644 })),
      ...bundle.nodeModules.map((f) => ({ rel: f.rel, src: f.src, mode: f.src.endsWith('.node') ? 0o755 : 0o644 })),
      ...addons.map((f) => ({ rel: f.rel, src: f.src, mode: 0o755 })),
      { rel: 'etc/hosts', data: Buffer.from('127.0.0.1 localhost\n'), mode: 0o644 },
      { rel: 'etc/passwd', data: Buffer.from('root:x:0:0:root:/root:/bin/sh\n'), mode: 0o644 },
      { rel: 'etc/group', data: Buffer.from('root:x:0:\n'), mode: 0o644 },
      // napi-rs loaders (@node-rs/crc32) read /usr/bin/ldd to rule out musl; without it they
      // fall back to process.report, ~0.3 s more per start under TCG.
      { rel: 'usr/bin/ldd', data: Buffer.from('#!/bin/sh\n# glibc system (durolab guest: no ldd here)\necho "ldd: not available in the durolab guest" >&2\nexit 1\n'), mode: 0o755 },
    ];
    for (const d of ['proc', 'sys', 'dev', 'run', 'tmp', 'data', 'root', 'bin', 'sbin', 'usr/sbin']) await fs.mkdir(path.join(rootfs, d), { recursive: true });
    for (const f of staged) {
      const dest = path.join(rootfs, f.rel);
      await fs.mkdir(path.dirname(dest), { recursive: true });
      if (f.src) await fs.copyFile(f.src, dest);
      else await fs.writeFile(dest, f.data!);
      await fs.chmod(dest, f.mode);
    }
    await fs.chmod(path.join(rootfs, 'tmp'), 0o1777);
    // Busybox applets as symlinks in the archive: no `busybox --install` at every boot.
    const applets = (await execa(busybox, ['--list-full'])).stdout.split('\n').filter(Boolean);
    for (const a of applets) {
      const dest = path.join(rootfs, a);
      if (existsSync(dest)) continue;
      await fs.mkdir(path.dirname(dest), { recursive: true });
      await fs.symlink('/usr/bin/busybox', dest);
    }
    // Busybox's `sh` must exist at /bin/sh for the #! line of /init.
    if (!existsSync(path.join(rootfs, 'bin/sh'))) await fs.symlink('/usr/bin/busybox', path.join(rootfs, 'bin/sh'));

    const initrd = path.join(stage, 'initrd.cpio');
    await writeCpio(rootfs, initrd, busybox);
    await fs.rm(rootfs, { recursive: true, force: true });
    const vmlinuz = path.join(stage, 'vmlinuz');
    await fs.link(kernel.vmlinuz, vmlinuz).catch(() => fs.copyFile(kernel.vmlinuz, vmlinuz));

    const image: VmImage = {
      hash,
      dir,
      kernel: path.join(dir, 'vmlinuz'),
      initrd: path.join(dir, 'initrd.cpio'),
      kernelSource: kernel.source,
      kernelVersion: kernel.version,
      ...(kernel.package ? { kernelPackage: kernel.package } : {}),
      nodeVersion: process.version,
      builtAt: new Date().toISOString(),
      initrdBytes: statSync(initrd).size,
      modules: modules.load.map((m) => m.name),
      packages: bundle.packages,
      hasCli: bundle.files.some((f) => f.rel === 'durolab/dist/durolab.mjs'),
      cached: false,
    };
    await fs.writeFile(path.join(stage, 'image.json'), JSON.stringify({ ...image, inputs: Object.fromEntries(inputs) }, null, 2));
    if (opts.force) await fs.rm(dir, { recursive: true, force: true });
    try {
      await fs.rename(stage, dir);
    } catch (err) {
      // A concurrent build of the same inputs finished first; same hash, same content.
      if (!existsSync(manifestPath)) throw err;
    }
    log(`vm-image: built ${hash} in ${((performance.now() - t0) / 1000).toFixed(1)} s: initrd ${(image.initrdBytes / 2 ** 20).toFixed(0)} MiB, modules ${image.modules.join(' ')}`);
    await pruneImages(imagesDir, hash);
    return image;
  } finally {
    await fs.rm(stage, { recursive: true, force: true });
  }
}
