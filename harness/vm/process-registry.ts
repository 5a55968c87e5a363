// No QEMU outlives the process that started it. Three layers: QEMU runs under
// `setpriv --pdeathsig KILL` (the kernel kills it if its parent dies, even by SIGKILL);
// execa's cleanup kills it on Ctrl-C and signals; an 'exit' handler SIGKILLs whatever this
// registry still tracks. ensureNoOrphans() is the explicit sweep for tests and runners.
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Every QEMU command line the launcher builds carries this in its -name, so sweeps can find them. */
export const QEMU_MARKER = 'durolab-vm';

interface Tracked {
  name: string;
  serialLogPath: string;
}

const live = new Map<number, Tracked>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pid of live.keys()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

export function trackQemu(pid: number, info: Tracked): void {
  installExitHook();
  live.set(pid, info);
}

export function untrackQemu(pid: number): void {
  live.delete(pid);
}

/**
 * Any other child that must not outlive us (target: kafka's broker JVMs): the same exit hook
 * and ensureNoOrphans() sweep as QEMU. Start it under `setpriv --pdeathsig KILL` (pdeathsigArgv).
 */
export function trackChildProcess(pid: number, name: string): void {
  trackQemu(pid, { name, serialLogPath: '' });
}

export function untrackChildProcess(pid: number): void {
  live.delete(pid);
}

/** [file, argv] that exec `file argv` with PR_SET_PDEATHSIG=SIGKILL when setpriv(1) is present. */
export function pdeathsigArgv(setpriv: string | undefined, file: string, argv: string[]): [string, string[]] {
  return setpriv ? [setpriv, ['--pdeathsig', 'KILL', '--', file, ...argv]] : [file, argv];
}

/** Live processes whose command line contains every one of `needles` (e.g. a JVM's marker and a test's work dir). */
export function findProcessesMatching(...needles: string[]): number[] {
  const found: number[] = [];
  for (const d of existsSync('/proc') ? readdirSync('/proc') : []) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (needles.every((n) => cmdline.includes(n)) && isAlive(Number(d))) found.push(Number(d));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

export function trackedQemuPids(): number[] {
  return [...live.keys()];
}

/** True while the process exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function ppidOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** QEMU processes carrying the marker (optionally also `contains`) whose parent is gone (reparented to 1). */
function findOrphanedQemus(contains?: string): number[] {
  if (!existsSync('/proc')) return [];
  const found: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const pid = Number(d);
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${d}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmdline.includes('qemu-system') || !cmdline.includes(QEMU_MARKER)) continue;
    if (contains && !cmdline.includes(contains)) continue;
    if (ppidOf(pid) === 1 && isAlive(pid)) found.push(pid);
  }
  return found;
}

/** QEMU processes whose command line contains `needle` (e.g. a test's work directory). */
export function findQemusMatching(needle: string): number[] {
  const found: number[] = [];
  for (const d of existsSync('/proc') ? readdirSync('/proc') : []) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmdline = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmdline.includes('qemu-system') && cmdline.includes(needle) && isAlive(Number(d))) found.push(Number(d));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/**
 * Kills every QEMU this process started that is still running, and orphaned durolab QEMUs
 * left by a crashed earlier run; waits until they are gone. Returns the PIDs it killed.
 */
export async function ensureNoOrphans(opts: { timeoutMs?: number } = {}): Promise<number[]> {
  const targets = [...new Set([...live.keys(), ...findOrphanedQemus()])].filter(isAlive);
  for (const pid of targets) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  const end = Date.now() + (opts.timeoutMs ?? 5000);
  while (targets.some(isAlive)) {
    if (Date.now() > end) throw new Error(`ensureNoOrphans: QEMU pids ${targets.filter(isAlive).join(', ')} still alive after SIGKILL`);
    await new Promise((r) => setTimeout(r, 20));
  }
  for (const pid of targets) live.delete(pid);
  return targets;
}
