// Where the guest kernel comes from: the host's own /boot/vmlinuz-* when it is readable and
// its modules are installed, else a Debian cloud kernel package fetched with apt-get download
// and unpacked with dpkg-deb (no installation, no root-owned side effects besides the cache).
import { execa } from 'execa';
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export type KernelSource = 'host' | 'debian-package';

export interface GuestKernel {
  source: KernelSource;
  /** bzImage to pass to -kernel. */
  vmlinuz: string;
  version: string;
  /** /lib/modules/<version> (host) or its extracted copy. */
  modulesDir: string;
  /** The versioned Debian package, when source is debian-package. */
  package?: string;
}

const DEBIAN_KERNEL_METAPACKAGE = 'linux-image-cloud-amd64';

const readable = (p: string): boolean => {
  try {
    accessSync(p, constants.R_OK);
    return true;
  } catch {
    return false;
  }
};

/** The host kernel, if its image is readable (Ubuntu makes it root-only) and its modules are installed. */
function findHostKernel(bootDir = '/boot', modulesRoot = '/lib/modules'): GuestKernel | undefined {
  if (!existsSync(bootDir)) return undefined;
  const versions = readdirSync(bootDir)
    .filter((f) => f.startsWith('vmlinuz-'))
    .map((f) => f.slice('vmlinuz-'.length));
  // The running kernel first: its modules are the ones known to match this machine.
  const running = os.release();
  versions.sort((a, b) => (a === running ? -1 : b === running ? 1 : b.localeCompare(a, undefined, { numeric: true })));
  for (const version of versions) {
    const vmlinuz = path.join(bootDir, `vmlinuz-${version}`);
    const modulesDir = path.join(modulesRoot, version);
    if (readable(vmlinuz) && existsSync(path.join(modulesDir, 'kernel'))) return { source: 'host', vmlinuz, version, modulesDir };
  }
  return undefined;
}

function kernelIn(pkgDir: string, pkg: string): GuestKernel | undefined {
  const boot = path.join(pkgDir, 'boot');
  if (!existsSync(boot)) return undefined;
  const img = readdirSync(boot).find((f) => f.startsWith('vmlinuz-'));
  if (!img) return undefined;
  const version = img.slice('vmlinuz-'.length);
  const modulesDir = path.join(pkgDir, 'lib/modules', version);
  if (!existsSync(modulesDir)) return undefined;
  return { source: 'debian-package', vmlinuz: path.join(boot, img), version, modulesDir, package: pkg };
}

/** `apt-cache depends linux-image-cloud-amd64` names the versioned package the metapackage points at. */
async function resolveDebianKernelPackage(meta = DEBIAN_KERNEL_METAPACKAGE): Promise<string> {
  const r = await execa('apt-cache', ['depends', meta], { reject: false });
  const dep = /Depends:\s*(linux-image-[^\s<>]+)/.exec(r.stdout ?? '');
  if (r.exitCode !== 0 || !dep) {
    throw new Error(
      `apt-cache depends ${meta} did not name a kernel package (exit ${r.exitCode}: ${(r.stderr || r.stdout || '').trim().slice(0, 300)}); ` +
        `run apt-get update first, or make a readable /boot/vmlinuz-* with /lib/modules available`,
    );
  }
  return dep[1]!;
}

/** apt-cache takes ~1.5 s here; its answer only changes when the apt lists do. */
async function resolveDebianKernelPackageCached(kernelsDir: string): Promise<string> {
  const memo = path.join(kernelsDir, 'resolved.json');
  let stamp = '';
  try {
    const st = statSync('/var/lib/apt/lists');
    stamp = `${st.mtimeMs}`;
    const prev = JSON.parse(readFileSync(memo, 'utf8')) as { meta: string; pkg: string; stamp: string };
    if (prev.meta === DEBIAN_KERNEL_METAPACKAGE && prev.stamp === stamp) return prev.pkg;
  } catch {
    // no memo yet, or no apt lists: ask apt-cache
  }
  const pkg = await resolveDebianKernelPackage();
  if (stamp) await fs.writeFile(memo, JSON.stringify({ meta: DEBIAN_KERNEL_METAPACKAGE, pkg, stamp }));
  return pkg;
}

/** Downloads (once) and unpacks a Debian kernel package under cacheDir/kernels/<package>. */
async function fetchDebianKernel(cacheDir: string, log: (s: string) => void): Promise<GuestKernel> {
  const kernelsDir = path.join(cacheDir, 'kernels');
  await fs.mkdir(kernelsDir, { recursive: true });
  let pkg: string;
  try {
    pkg = await resolveDebianKernelPackageCached(kernelsDir);
  } catch (err) {
    // Offline or no apt lists: any kernel unpacked earlier still serves.
    const cached = readdirSync(kernelsDir)
      .filter((d) => d.startsWith('linux-image-'))
      .sort((a, b) => b.localeCompare(a, undefined, { numeric: true }));
    for (const d of cached) {
      const k = kernelIn(path.join(kernelsDir, d), d);
      if (k) {
        log(`vm-image: ${(err as Error).message.split(';')[0]}; using cached ${d}`);
        return k;
      }
    }
    throw err;
  }
  const pkgDir = path.join(kernelsDir, pkg);
  const have = kernelIn(pkgDir, pkg);
  if (have) return have;

  const tmp = path.join(kernelsDir, `.download-${process.pid}-${Date.now()}`);
  await fs.mkdir(tmp, { recursive: true });
  try {
    log(`vm-image: downloading ${pkg} (apt-get download)`);
    const dl = await execa('apt-get', ['download', pkg], { cwd: tmp, reject: false });
    if (dl.exitCode !== 0) throw new Error(`apt-get download ${pkg} failed (exit ${dl.exitCode}): ${(dl.stderr || dl.stdout).trim().slice(0, 500)}`);
    const deb = readdirSync(tmp).find((f) => f.endsWith('.deb'));
    if (!deb) throw new Error(`apt-get download ${pkg} left no .deb in ${tmp}`);
    const root = path.join(tmp, 'root');
    const x = await execa('dpkg-deb', ['-x', path.join(tmp, deb), root], { reject: false });
    if (x.exitCode !== 0) throw new Error(`dpkg-deb -x ${deb} failed (exit ${x.exitCode}): ${x.stderr.trim().slice(0, 500)}`);
    if (!kernelIn(root, pkg)) throw new Error(`package ${pkg} (${deb}) holds no boot/vmlinuz-* with lib/modules`);
    try {
      await fs.rename(root, pkgDir);
    } catch (err) {
      // Another builder unpacked the same package first: theirs is as good as ours.
      if (!kernelIn(pkgDir, pkg)) throw err;
    }
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
  return kernelIn(pkgDir, pkg)!;
}

export async function resolveGuestKernel(
  cacheDir: string,
  want: 'auto' | KernelSource,
  log: (s: string) => void,
): Promise<GuestKernel> {
  if (want !== 'debian-package') {
    const host = findHostKernel();
    if (host) return host;
    if (want === 'host') throw new Error('no readable /boot/vmlinuz-* with a matching /lib/modules/<version>/kernel on this host');
  }
  return fetchDebianKernel(cacheDir, log);
}
