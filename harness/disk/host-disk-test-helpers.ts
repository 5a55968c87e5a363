// Shared by the tests whose brokers ran on host-route fault disks (crash states of kafka, nats and
// durolab's broker): every disk's run dir named in the trial's log lines, and none of them left
// behind (no qemu-storage-daemon serving it, nothing mounted under it).
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { findProcessesMatching } from '../vm/process-registry.ts';
import { QSD_MARKER } from './host-disk.ts';

/** Expects at least `atLeast` host disks named in `logText` (their run dirs, /durolab-hd-*), each gone: no daemon, no mount. */
export function expectHostDisksGone(logText: string, atLeast: number): void {
  const runDirs = [...new Set(logText.match(/\/durolab-hd-[A-Za-z0-9]+/g) ?? [])];
  expect(runDirs.length).toBeGreaterThanOrEqual(atLeast);
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8');
  for (const d of runDirs) {
    expect(findProcessesMatching(QSD_MARKER, d)).toEqual([]);
    expect(mounts).not.toContain(d);
  }
}
