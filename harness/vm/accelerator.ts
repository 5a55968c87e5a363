// Which accelerator a VM start tries: KVM when /dev/kvm is usable and no KVM guest hung earlier
// in this process, else TCG (here KVM guests hang: every VM runs under TCG).
import { accessSync, constants } from 'node:fs';
import type { Accel } from './qemu-args.ts';

export type AccelChoice = 'auto' | Accel;

/** Set once KVM failed in this process, so later VMs go straight to TCG. */
let kvmVerdict: { reason: string } | undefined;

export function markKvmUnusable(reason: string): void {
  kvmVerdict = { reason };
}

function kvmDeviceUsable(): boolean {
  try {
    accessSync('/dev/kvm', constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The accelerators a start tries, in order, and why KVM is skipped when it is. Default: $DUROLAB_VM_ACCEL or auto. */
export function acceleratorCandidates(accel: AccelChoice | undefined): { candidates: Accel[]; fallback?: string } {
  const want = accel ?? (process.env.DUROLAB_VM_ACCEL as AccelChoice | undefined) ?? 'auto';
  if (want !== 'auto') return { candidates: [want] };
  if (!kvmDeviceUsable()) return { candidates: ['tcg'], fallback: 'kvm: /dev/kvm missing or not accessible' };
  if (kvmVerdict) return { candidates: ['tcg'], fallback: `kvm (earlier in this process): ${kvmVerdict.reason}` };
  return { candidates: ['kvm', 'tcg'] };
}
