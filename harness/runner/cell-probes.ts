// Where a cell's probe series comes from: host samplers over the data dirs' device, or the
// guest's own probes on a VM target.
import { ProbeSampler, type ProbeSeries } from '../probes/index.ts';
import type { RunningCluster } from '../targets/types.ts';
import type { TargetCapabilities } from '../targets/registry.ts';

export function guestSeries(c: RunningCluster, brokerId: number, log: (line: string) => void): ProbeSeries | null {
  if (!c.guestProbes) return null;
  try {
    return c.guestProbes(brokerId);
  } catch (err) {
    log(`no guest probes: ${(err as Error).message}`);
    return null;
  }
}

/** Host probes watch the device under the first broker's data dir; where data dirs are not on this host (a VM's disk image), they are best effort. */
export async function startSampler(cluster: RunningCluster, caps: TargetCapabilities, log: (line: string) => void): Promise<ProbeSampler | null> {
  const sampler = new ProbeSampler({ dataDir: cluster.brokers[0].dataDir });
  try {
    await sampler.start();
    return sampler;
  } catch (err) {
    if (caps.dataOnHost) throw err;
    log(`host probes off for this cell: ${(err as Error).message}`);
    return null;
  }
}
