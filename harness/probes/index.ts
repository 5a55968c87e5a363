// Probes of the kernel's dirty-page and disk figures, and the run environment.
export { parseVmstat, type VmstatSample } from './vmstat.ts';
export { parseDiskstats, diskstatsDevices, type DiskCounters } from './diskstats.ts';
export { iostatBetween, interpolateCounters, type IostatFigures } from './iostat.ts';
export {
  deviceForPath,
  nearestExisting,
  parseMountinfo,
  mountForPath,
  splitDev,
  type DeviceInfo,
  type MountEntry,
} from '../../engine/common/device.ts';
export {
  ProbeSampler,
  ProbeSeriesBuilder,
  probeNow,
  describeProbeCost,
  PROBE_CPU_GOAL_PCT,
  type ProbeCost,
  type ProbeSample,
  type ProbeSeries,
  type ProbeSamplerOptions,
} from './sampler.ts';
export { perSecond, deviceFlushesBetween, type ProbePoint, type PerSecondOptions } from './per-second.ts';
export { collectEnvironment } from '../../engine/common/environment.ts';
