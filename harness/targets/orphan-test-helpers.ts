// For the tests that signal a running bench and then look for what it left (kafka-orphans,
// nats-orphans): whether every process of a list has exited within a time.
import { isAlive } from '../vm/process-registry.ts';

/** True once none of `pids` is alive, false if some still is after `ms`. */
export async function goneWithin(pids: number[], ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (pids.some(isAlive)) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}
