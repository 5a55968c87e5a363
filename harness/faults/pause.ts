// Fault kind pause: SIGSTOP of the victims' broker processes (durolab's broker child, Kafka's
// JVM) for the entry's duration, then SIGCONT, as a long GC pause or a stalled VM does. Nothing
// is lost from memory; the broker's peers and clients see it stop answering. The heal always
// runs (harness/runner/fault-schedule.ts); stoppedProcesses() finds a process left stopped.
import { readFileSync } from 'node:fs';
import type { CutInfo, FaultableCluster } from '../targets/types.ts';

export async function pauseBrokers(cluster: FaultableCluster, ids: number[]): Promise<CutInfo> {
  if (!cluster.pause) throw new Error('fault pause: this cluster cannot pause a broker (its target does not offer pause-broker-process)');
  return cluster.pause(ids);
}

export async function resumeBrokers(cluster: FaultableCluster, ids: number[]): Promise<void> {
  if (!cluster.resume) throw new Error('fault pause: this cluster cannot resume a broker (its target does not offer pause-broker-process)');
  await cluster.resume(ids);
}

/** Of these pids, those the kernel reports stopped (state T in /proc/<pid>/stat, as `ps` shows it). */
export function stoppedProcesses(pids: ReadonlyArray<number | null>): number[] {
  const out: number[] = [];
  for (const pid of pids) {
    if (pid === null || pid <= 0) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone
    }
    // pid (comm) state ...: comm may hold spaces and parentheses, the state follows the last ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'T') out.push(pid);
  }
  return out;
}

/** SIGCONT to every stopped process of these pids; returns the pids it woke. */
export function wakeStopped(pids: ReadonlyArray<number | null>): number[] {
  const stopped = stoppedProcesses(pids);
  for (const pid of stopped) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone meanwhile
    }
  }
  return stopped;
}
