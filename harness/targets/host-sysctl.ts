// vm.dirty_* on the process target are the HOST's global settings. They are changed only with
// an explicit opt-in, and every original value is put back at the end, on failure and on
// Ctrl-C. Writing a *_bytes setting zeroes its *_ratio twin (and the reverse), so the pair is
// restored by writing whichever of the two was in force.
import { readFileSync, writeFileSync } from 'node:fs';

const PAIRS: Record<string, string> = {
  'vm.dirty_background_bytes': 'vm.dirty_background_ratio',
  'vm.dirty_background_ratio': 'vm.dirty_background_bytes',
  'vm.dirty_bytes': 'vm.dirty_ratio',
  'vm.dirty_ratio': 'vm.dirty_bytes',
};

export const DIRTY_SYSCTLS = [
  'vm.dirty_expire_centisecs',
  'vm.dirty_writeback_centisecs',
  'vm.dirty_background_ratio',
  'vm.dirty_background_bytes',
  'vm.dirty_ratio',
  'vm.dirty_bytes',
] as const;

function procPath(name: string): string {
  if (!/^vm\.dirty_[a-z_]+$/.test(name)) throw new Error(`sysctl '${name}': only vm.dirty_* settings can be changed`);
  return `/proc/sys/${name.replace(/\./g, '/')}`;
}

export function readSysctl(name: string): number {
  return Number(readFileSync(procPath(name), 'utf8').trim());
}

export class HostSysctls {
  private readonly saved = new Map<string, number>();
  private readonly onSignal = () => this.restore();

  constructor() {
    process.once('exit', this.onSignal);
  }

  /** Applies the values; throws naming the setting when the kernel refuses (not root, EINVAL). */
  apply(values: Record<string, number>): void {
    for (const [name, value] of Object.entries(values)) {
      for (const n of [name, PAIRS[name]].filter(Boolean)) {
        if (!this.saved.has(n)) this.saved.set(n, readSysctl(n));
      }
      try {
        writeFileSync(procPath(name), `${value}\n`);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const why = code === 'EACCES' || code === 'EPERM' ? 'needs root' : code === 'EINVAL' ? 'the kernel rejected the value' : String(err);
        throw new Error(`cannot set host sysctl ${name}=${value}: ${why} (${procPath(name)})`);
      }
    }
  }

  current(): Record<string, number> {
    return Object.fromEntries(DIRTY_SYSCTLS.map((n) => [n, readSysctl(n)]));
  }

  /**
   * Puts every changed setting back; safe to call more than once. One refused write does not
   * stop the others; what could not be restored is thrown at the end, naming each setting.
   */
  restore(): void {
    const done = new Set<string>();
    const failed: string[] = [];
    const write = (name: string, value: number) => {
      try {
        writeFileSync(procPath(name), `${value}\n`);
      } catch (err) {
        failed.push(`${name}=${value} (${(err as Error).message})`);
      }
    };
    for (const [name, value] of this.saved) {
      if (done.has(name)) continue;
      const twin = PAIRS[name];
      if (twin && this.saved.has(twin)) {
        // Of a bytes/ratio pair exactly one is non-zero; writing it restores both.
        const inForce = value !== 0 ? name : twin;
        write(inForce, this.saved.get(inForce)!);
        done.add(name).add(twin);
      } else {
        write(name, value);
        done.add(name);
      }
    }
    if (failed.length) throw new Error(`could not restore host sysctls: ${failed.join('; ')}`);
    this.saved.clear();
  }

  dispose(): void {
    this.restore();
    process.removeListener('exit', this.onSignal);
  }
}
