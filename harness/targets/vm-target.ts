// The VM target: each broker in its own QEMU VM with its own raw ext4 data disk, the
// controller on the host (it survives the cuts, like Kafka's separate controller quorum).
// Power cut = SIGKILL of a broker's QEMU (its page cache and uncommitted ext4 transaction die);
// restart = a new VM on the same disk. Networking stays on the host's loopback (vm-network.ts).
// The cluster itself is vm-cluster.ts, its start sequence vm-cluster-start.ts.
import path from 'node:path';
import type { VmOptions as ScenarioVmOptions } from '../model/scenario.ts';
import { buildVmImage, type VmImage } from '../vm/index.ts';
import { repoRoot } from '../../engine/common/repo-root.ts';
import type { ClusterStartOptions, Target } from './types.ts';
import { capabilitiesOf } from './registry.ts';
import { diskModelId, effectiveDiskSpec } from '../model/disk-spec.ts';
export { diskVariesByCell } from '../model/disk-spec.ts';
import { startVmCluster } from './vm-cluster-start.ts';
import type { VmCluster } from './vm-cluster.ts';
export type { VmCluster, VmCutInfo, VmStartTimings, VmTargetBroker } from './vm-cluster.ts';

export interface VmTargetOptions {
  /** The scenario's `vm:` block (accelerator, memoryMiB, diskMiB, mountOptions, disk). */
  vm?: Partial<ScenarioVmOptions>;
  /** Some cell sets vm.disk.* in settings:/matrix: (the run has no single disk model). */
  diskVariesByCell?: boolean;
  /** A built image; default: buildVmImage({cliEntry: GUEST_CLI_ENTRY}) once per target (cached on disk by content hash). */
  image?: VmImage;
  /** Controller: a broker silent this long is fenced. Default 3000 (TCG stalls heartbeats). */
  sessionTimeoutMs?: number;
  /** Broker heartbeat period (broker.heartbeat.interval.ms). Default 250; its HTTP timeout is max(1 s, 5x this). */
  heartbeatIntervalMs?: number;
  /** Guest probe period. Default 500 (each probe costs the guest an HTTP round trip under TCG). */
  probeIntervalMs?: number;
  /** QEMU spawn to agent answering, per VM. Default 90 s. */
  bootTimeoutMs?: number;
  /** Broker exec to serving, per broker. Default 60 s. */
  readyTimeoutMs?: number;
  /** Under accelerator auto: silence that counts as a hung KVM guest (default: the launcher's 5 s). */
  kvmProbeMs?: number;
  /**
   * Before a fault, wait at most this long for a fresh guest reading (dirty pages, broker
   * liveness); 0 = take the last polled one and cut at once. Default 1500 (typically 10-30 ms).
   */
  probeBeforeFaultMs?: number;
  /** Extra broker `--set k=v` pairs after the cell's settings. */
  extraBrokerSets?: string[];
  log?: (line: string) => void;
}

/**
 * What the guest image bundles as its CLI: the broker command alone (see vm-guest-cli.ts).
 * Found from the repository root so it resolves from the sources and from dist/durolab.mjs alike.
 */
export const GUEST_CLI_ENTRY = path.join(repoRoot(), 'harness', 'targets', 'vm-guest-cli.ts');

const DEFAULT_VM: ScenarioVmOptions = { accelerator: 'auto', memoryMiB: 1024, diskMiB: 2048, mountOptions: '' };

export interface VmTarget extends Target {
  readonly kind: 'vm';
  /** The disk model id of the run (harness/results/disk-models.ts), 'per-cell' when cells set vm.disk.*. */
  readonly diskModel: string;
  start(opts: ClusterStartOptions): Promise<VmCluster>;
}

export function vmTarget(opts: VmTargetOptions = {}): VmTarget {
  const vmOpts: ScenarioVmOptions = { ...DEFAULT_VM, ...opts.vm };
  const log = opts.log ?? (() => {});
  let imagePromise: Promise<VmImage> | null = opts.image ? Promise.resolve(opts.image) : null;
  return {
    kind: 'vm',
    diskModel: opts.diskVariesByCell ? 'per-cell' : diskModelId(effectiveDiskSpec(vmOpts.disk, {})),
    capabilities: capabilitiesOf('vm'),
    start(o: ClusterStartOptions): Promise<VmCluster> {
      return startVmCluster(o, {
        opts,
        vmOpts,
        log,
        image: () => {
          imagePromise ??= buildVmImage({ log, cliEntry: GUEST_CLI_ENTRY });
          return imagePromise.catch((err: unknown) => {
            imagePromise = null;
            throw err;
          });
        },
      });
    },
  };
}
