// Host tools the VM target needs, and the one apt-get line that installs what is missing.
import { execa } from 'execa';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';

export const APT_INSTALL = 'apt-get install -y qemu-system-x86 busybox-static e2fsprogs';

interface Tool {
  name: string;
  pkg: string;
  why: string;
}

const TOOLS: Tool[] = [
  { name: 'qemu-system-x86_64', pkg: 'qemu-system-x86', why: 'runs the guests' },
  { name: 'busybox', pkg: 'busybox-static', why: 'the guest userland and the guest->host forwarder' },
  { name: 'mkfs.ext4', pkg: 'e2fsprogs', why: 'formats data disks' },
  { name: 'e2fsck', pkg: 'e2fsprogs', why: 'replays the journal of a disk copy after a cut' },
  { name: 'debugfs', pkg: 'e2fsprogs', why: 'reads files from a disk copy' },
];

const SEARCH_PATH = (): string[] =>
  [...(process.env.PATH ?? '').split(':'), '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'].filter(Boolean);

/** Absolute path of an executable on PATH (plus the sbin dirs a non-root PATH lacks), or undefined. */
export function findExecutable(name: string, searchPath: string[] = SEARCH_PATH()): string | undefined {
  for (const dir of searchPath) {
    const p = path.join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

export function requireExecutable(name: string): string {
  const p = findExecutable(name);
  if (!p) {
    const tool = TOOLS.find((t) => t.name === name);
    throw new Error(`${name} not found on PATH${tool ? ` (${tool.why}); install it with: apt-get install -y ${tool.pkg}` : ''}`);
  }
  return p;
}

/** qboot boots ~0.3 s faster than SeaBIOS; QEMU's default firmware is used when it is absent. */
export function findQboot(): string | undefined {
  for (const p of ['/usr/share/qemu/qboot.rom', '/usr/share/qboot/bios.bin']) if (existsSync(p)) return p;
  return undefined;
}

/** A dynamically linked busybox cannot run in the initramfs (no libc there beyond node's). */
async function isStaticBinary(file: string): Promise<boolean> {
  const r = await execa('ldd', [file], { reject: false });
  return /not a dynamic executable|statically linked/.test(`${r.stdout}\n${r.stderr}`);
}

/** Throws naming every missing tool and the exact apt-get command that installs them. */
export async function checkVmPrerequisites(opts: { searchPath?: string[] } = {}): Promise<void> {
  const missing: Tool[] = TOOLS.filter((t) => !findExecutable(t.name, opts.searchPath));
  const problems = missing.map((t) => `${t.name} (package ${t.pkg}: ${t.why})`);
  const bb = findExecutable('busybox', opts.searchPath);
  if (bb && !(await isStaticBinary(bb))) {
    problems.push(`${bb} is dynamically linked (package busybox-static provides a static one)`);
    if (!missing.some((t) => t.pkg === 'busybox-static')) missing.push(TOOLS[1]!);
  }
  if (problems.length > 0) {
    const pkgs = [...new Set(missing.map((t) => t.pkg))];
    throw new Error(
      `VM prerequisites missing: ${problems.join('; ')}.\nInstall with: apt-get update && apt-get install -y ${pkgs.join(' ')}` +
        `\n(all VM tools: ${APT_INSTALL})`,
    );
  }
}
