// A scenario cell's settings as every floor is handed them: the registry's defaults
// (engine/settings) under the scenario's and the cell's values, normalized. Compiling and
// checking those values (client settings, labels, bounds) stays in harness/scenario/settings.ts.

import {
  SCENARIO_SETTINGS,
  SYSCTL_EXCLUSIVE,
  isSysctl as isSysctlSetting,
  parseFlushPolicy,
  type Acks,
  type FlushPolicy,
  type IoMode,
  type SettingValue,
  type SyncCall,
} from '../../engine/settings/index.ts';
import { defaultLogConfig, logConfigFromSettings } from '../../engine/storage/config.ts';
import type { LogConfig } from '../../engine/storage/types.ts';

const SYSCTL_NAMES: ReadonlySet<string> = new Set(SCENARIO_SETTINGS.filter((s) => isSysctlSetting(s)).map((s) => s.name));

/** Whether a setting is a kernel sysctl (vm.dirty_*): the registry's; no client setting is one. */
export function isSysctlName(name: string): boolean {
  return SYSCTL_NAMES.has(name);
}

/**
 * Engine, topic and producer defaults from the registry. Sysctls have none: the host's apply.
 * min.insync.replicas comes from the cluster; vm.disk.* from the scenario's vm.disk: block
 * (a cell's values hold them only when settings:/matrix: set them, to override the block).
 */
export const DEFAULT_SETTINGS: Readonly<Record<string, SettingValue>> = Object.fromEntries(
  SCENARIO_SETTINGS.filter((s) => s.default !== undefined && s.name !== 'min.insync.replicas' && !s.appliesTo.includes('vm-disk')).map((s) => [s.name, s.default as SettingValue]),
);

export interface ResolvedSettings {
  io: IoMode;
  flush: FlushPolicy;
  sync: SyncCall;
  acks: Acks;
  segmentBytes: number;
  segmentMs: number;
  segmentIndexBytes: number;
  indexIntervalBytes: number;
  /** message.max.bytes */
  maxBatchBytes: number;
  minInsyncReplicas: number;
  replicaLagTimeMaxMs: number;
  uncleanLeaderElectionEnable: boolean;
  /** eligible.leader.replicas (KIP-966); on Kafka the eligible.leader.replicas.version feature at format. */
  eligibleLeaderReplicas: boolean;
  /** sysctl name (vm.dirty_expire_centisecs) -> value to write; only those the scenario sets. */
  sysctls: Record<string, number>;
  /** Every scenario setting by its Kafka name, normalized, defaults and min.insync.replicas filled in. */
  values: Record<string, SettingValue>;
}

/**
 * Layers of settings, later ones overriding earlier ones. A layer that sets one of a
 * ratio/bytes sysctl pair drops the other inherited from below, as the kernel does.
 */
export function overlaySettings(...layers: Array<Record<string, SettingValue>>): Record<string, SettingValue> {
  const out: Record<string, SettingValue> = {};
  for (const layer of layers) {
    for (const [a, b] of SYSCTL_EXCLUSIVE) {
      if (a in layer) delete out[b];
      if (b in layer) delete out[a];
    }
    Object.assign(out, layer);
  }
  return out;
}

export function resolveSettings(params: Record<string, SettingValue>, minInsyncReplicas: number): ResolvedSettings {
  const p: Record<string, SettingValue> = { ...DEFAULT_SETTINGS, 'min.insync.replicas': minInsyncReplicas, ...params };
  const sysctls: Record<string, number> = {};
  for (const [name, value] of Object.entries(p)) if (isSysctlName(name)) sysctls[name] = Number(value);
  return {
    io: p.io as IoMode,
    flush: parseFlushPolicy(String(p.flush)),
    sync: p.sync as SyncCall,
    acks: p.acks as Acks,
    segmentBytes: Number(p['segment.bytes']),
    segmentMs: Number(p['segment.ms']),
    segmentIndexBytes: Number(p['segment.index.bytes']),
    indexIntervalBytes: Number(p['index.interval.bytes']),
    maxBatchBytes: Number(p['message.max.bytes']),
    minInsyncReplicas: Number(p['min.insync.replicas']),
    replicaLagTimeMaxMs: Number(p['replica.lag.time.max.ms']),
    uncleanLeaderElectionEnable: p['unclean.leader.election.enable'] === true,
    eligibleLeaderReplicas: p['eligible.leader.replicas'] === true,
    sysctls,
    values: p,
  };
}

/** The segment engine's part of resolved settings. */
export function logConfig(s: ResolvedSettings): LogConfig {
  // Kafka always validates batches; turning it off is for engine benchmarks, not scenarios.
  return { ...defaultLogConfig(), ...logConfigFromSettings(s.values), verifyBatches: true };
}
