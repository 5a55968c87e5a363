// Where the VM cache lives.
import path from 'node:path';
import { repoRoot } from '../../engine/common/repo-root.ts';

/** vm/.cache/ at the repository root (git-ignored), or $DUROLAB_VM_CACHE. */
export function defaultVmCacheDir(): string {
  return process.env.DUROLAB_VM_CACHE || path.join(repoRoot(), 'vm', '.cache');
}
