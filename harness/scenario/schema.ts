// zod schemas for each top-level section of a scenario file. Sections are checked one by
// one so a bad `workload:` does not hide a bad `matrix:`; relations between sections
// (RF <= brokers, faults vs target, ...) are checked afterwards in validate.ts.
// Leaf values go through `leaf()`, whose message is the "expected ..." text the user sees.

import * as z from 'zod';
import { SETTINGS, SETTING_NAMES, type SettingValue } from './settings.ts';
import type { FaultVictims, FaultWhen } from '../model/scenario.ts';
import { FAULTS, FAULT_KINDS, faultKindSchema, isLasting } from '../faults/registry.ts';
import { DEFAULT_TARGET, targetKindSchema } from '../targets/registry.ts';
import { DEFAULT_DRIVER, driverNameSchema } from '../drivers/registry.ts';
import { parseDuration, parseSize } from '../model/units.ts';
import { kafkaProducerSchema } from '../model/kafka-producer.ts';
import { consumersSchema } from '../model/consumer-spec.ts';
import { externalSchema } from '../model/external-spec.ts';
import { TARGET_AXIS_VALUES, targetAxisSchema } from './target-axis.ts';
import { diskSchema } from '../model/disk-spec.ts';
import { leaf } from '../model/zod-leaf.ts';
import { CLUSTER_NETWORKS, CLUSTER_NETWORK_EXPECTED, type ClusterNetwork } from '../model/kinds.ts';


function intBetween(min: number, max: number) {
  return leaf(`an integer from ${min} to ${max}`, (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : undefined,
  );
}

function seconds(expected: string, ok: (s: number) => boolean) {
  return leaf(expected, (v) => {
    const s = parseDuration(v, 1000);
    return s !== undefined && ok(s) ? s : undefined;
  });
}

const nonEmptyString = (what: string) =>
  leaf(what, (v) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined));

export function settingSchema(name: string) {
  const spec = SETTINGS[name];
  return leaf<SettingValue>(spec.expected, spec.parse);
}

const settingsShape = Object.fromEntries(SETTING_NAMES.map((n) => [n, settingSchema(n).optional()]));

export const settingsSchema = z.strictObject(settingsShape);

export const matrixSchema = z.strictObject({
  ...Object.fromEntries(SETTING_NAMES.map((n) => [n, z.array(settingSchema(n)).min(1).optional()])),
  target: targetAxisSchema.optional(),
  include: z
    .array(z.strictObject({ ...settingsShape, label: nonEmptyString('a non-empty label').optional() }))
    .min(1)
    .optional(),
  // An entry naming a target drops cells of that target only (a setting it cannot honour).
  exclude: z.array(z.strictObject({ ...settingsShape, target: z.enum(TARGET_AXIS_VALUES).optional() })).min(1).optional(),
});

export const vmSchema = z.strictObject({
  accelerator: z.enum(['auto', 'kvm', 'tcg']).default('auto'),
  memoryMiB: intBetween(128, 65536).default(1024),
  diskMiB: intBetween(64, 1048576).default(2048),
  mountOptions: leaf('ext4 mount options like commit=5,noatime', (v) =>
    typeof v === 'string' && /^(?:[a-z_][a-z0-9_]*(?:=[A-Za-z0-9_.:/-]+)?(?:,(?!$)|$))*$/.test(v) ? v : undefined,
  ).default(''),
  /** The data disk: model file (default) or volatile-cache (the NBD disk); see harness/model/disk-spec.ts and `durolab settings` (vm.disk.*). */
  disk: diskSchema.optional(),
});

export const clusterSchema = z.strictObject({
  brokers: intBetween(1, 9).default(1),
  // Kafka's legal topic names.
  topic: leaf('a topic name of letters, digits, . _ - (at most 249)', (v) =>
    typeof v === 'string' && /^[A-Za-z0-9._-]{1,249}$/.test(v) && v !== '.' && v !== '..' ? v : undefined,
  ).default('durolab'),
  partitions: intBetween(1, 100_000).default(1),
  /** Defaults to the number of brokers (see validate.ts). */
  replicationFactor: intBetween(1, 9).optional(),
  minInsyncReplicas: intBetween(1, 9).default(1),
  /** Each broker its own host (a network namespace) or all on loopback; see harness/model/cluster-network.ts. */
  network: leaf<ClusterNetwork>(CLUSTER_NETWORK_EXPECTED, (v) => ((CLUSTER_NETWORKS as readonly unknown[]).includes(v) ? (v as ClusterNetwork) : undefined)).default('loopback'),
});

export const workloadSchema = z.strictObject({
  recordBytes: leaf('a record size from 1 byte to 16MiB (bytes, or a string like 1KiB)', (v) => {
    const b = parseSize(v);
    return b !== undefined && b >= 1 && b <= 16 * 1024 ** 2 ? b : undefined;
  }).default(1024),
  recordsPerBatch: intBetween(1, 100_000).default(16),
  connections: intBetween(1, 1024).default(8),
  pipelining: intBetween(1, 256).default(1),
  rate: leaf<number | null>('closed (as fast as answers come) or batches per second > 0', (v) =>
    v === null || v === 'closed' ? null : typeof v === 'number' && v > 0 && Number.isFinite(v) ? v : undefined,
  ).default(null),
  warmup: seconds('a duration >= 0 (seconds, or a string like 500ms, 2s)', (s) => s >= 0).default(1),
  duration: seconds('a duration > 0 (seconds, or a string like 5s, 1m)', (s) => s > 0).default(5),
  repetitions: intBetween(1, 1000).default(1),
  /** Attempts a cell may add to replace trials that cannot be judged (fault did not fire, suspect); see run-cell.ts. */
  extraTrials: intBetween(0, 20).default(2),
  driver: driverNameSchema.default(DEFAULT_DRIVER),
  producer: kafkaProducerSchema.optional(),
  /** Consumers read while the producers write (harness/model/consumer-spec.ts; driver kafka). */
  consumers: consumersSchema,
});

const isIndex = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const faultTarget = leaf<FaultVictims>('a broker id (integer >= 0) | a list of them | leader | followers | one | minority | majority | all', (v) => {
  if (v === 'leader' || v === 'followers' || v === 'one' || v === 'minority' || v === 'majority' || v === 'all') return v;
  if (isIndex(v)) return { broker: v };
  if (Array.isArray(v) && v.length > 0 && v.every(isIndex) && new Set(v).size === v.length) return { brokers: v };
  return undefined;
});

const faultSeconds = seconds('a time in seconds since the load started (a number, or a string like 4500ms)', (s) => s >= 0);

export const WHEN_KEYS = ['at', 'between', 'afterAcked'] as const;

const whenSchema = z
  .strictObject({
    at: faultSeconds.optional(),
    between: z.tuple([faultSeconds, faultSeconds]).optional(),
    afterAcked: intBetween(1, Number.MAX_SAFE_INTEGER).optional(),
  })
  .transform((w, ctx): FaultWhen => {
    const given = WHEN_KEYS.filter((k) => w[k] !== undefined);
    if (given.length !== 1) {
      ctx.issues.push({
        code: 'custom',
        message: 'expected exactly one of at: S | between: [FROM, TO] | afterAcked: N',
        input: w,
        params: { found: given.length === 0 ? 'none of them' : given.join(' and ') },
      });
      return z.NEVER;
    }
    if (w.at !== undefined) return { at: w.at };
    if (w.between !== undefined) {
      if (w.between[0] >= w.between[1]) {
        ctx.issues.push({
          code: 'custom',
          message: 'expected a window [FROM, TO] with FROM < TO',
          input: w.between,
          params: { found: `[${w.between[0]}, ${w.between[1]}]` },
          path: ['between'],
        });
        return z.NEVER;
      }
      return { between: w.between };
    }
    return { afterAcked: w.afterAcked as number };
  });

/** Fields some fault kind declares beyond kind/target/when (harness/faults/registry.ts), optional here and refused on other kinds. */
const kindFields: z.ZodRawShape = Object.fromEntries(
  FAULT_KINDS.flatMap((k) => Object.entries(FAULTS[k].fields).map(([name, schema]) => [name, (schema as z.ZodType).optional()])),
);

export const faultSchema = z
  .strictObject({
    kind: faultKindSchema,
    target: faultTarget,
    when: whenSchema,
    /** Lasting kinds (a heal phase, harness/faults/registry.ts): how long the fault lasts, from its start. */
    duration: seconds('a duration > 0 (seconds, or a string like 2s, 1500ms)', (s) => s > 0).optional(),
    ...kindFields,
  })
  .superRefine((f, ctx) => {
    if (isLasting(f.kind) && f.duration === undefined && !FAULTS[f.kind].healOptional) {
      ctx.addIssue({ code: 'custom', message: `expected duration: S with a ${f.kind} fault (how long it lasts before its heal)`, path: ['duration'], input: undefined, params: { found: 'none' } });
    }
    if (!isLasting(f.kind) && f.duration !== undefined) {
      ctx.addIssue({ code: 'custom', message: `expected no duration on a ${f.kind} fault (it does not last: only ${FAULT_KINDS.filter(isLasting).join(', ')} have one)`, path: ['duration'], input: f.duration });
    }
    const own = FAULTS[f.kind].fields;
    for (const name of Object.keys(kindFields)) {
      if (!(name in own) && (f as Record<string, unknown>)[name] !== undefined) {
        ctx.addIssue({ code: 'custom', message: `expected no ${name} on a ${f.kind} fault`, path: [name], input: (f as Record<string, unknown>)[name] });
      }
    }
  });

export const faultsSchema = z.array(faultSchema).default([]);

export const expectationsSchema = z.array(nonEmptyString('an expectation like "ackedLost == 0 where flush == per-batch"')).default([]);

export const SECTION_SCHEMAS = {
  name: leaf('a name of lowercase letters, digits, . _ -', (v) =>
    typeof v === 'string' && /^[a-z0-9][a-z0-9._-]*$/.test(v) ? v : undefined,
  ).optional(),
  question: nonEmptyString('the question this scenario answers (a non-empty string; required)'),
  description: z.string().optional(),
  target: targetKindSchema.default(DEFAULT_TARGET),
  vm: vmSchema.optional(),
  external: externalSchema.optional(),
  cluster: clusterSchema.prefault({}),
  settings: settingsSchema.prefault({}),
  matrix: matrixSchema.optional(),
  workload: workloadSchema.prefault({}),
  /** Settings for one target's cells only (a setting another target of the axis has no equivalent for). */
  targetSettings: z.partialRecord(z.enum(TARGET_AXIS_VALUES), settingsSchema).optional(),
  faults: faultsSchema,
  /** Named fault schedules a cell picks with the `faults` setting (a matrix axis over fault schedules). */
  faultSets: z.record(z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'a name of lowercase letters, digits, . _ -'), z.array(faultSchema).min(1)).optional(),
  expectations: expectationsSchema,
  requiresRoot: z.boolean().optional(),
} as const;

export const TOP_LEVEL_KEYS = Object.keys(SECTION_SCHEMAS);

/** Keys allowed at a path, for "did you mean" on unknown keys. */
export function knownKeysAt(path: ReadonlyArray<PropertyKey>): readonly string[] {
  const [head, ...rest] = path;
  if (head === undefined) return TOP_LEVEL_KEYS;
  switch (head) {
    case 'vm':
      return Object.keys(vmSchema.shape);
    case 'external':
      return Object.keys(externalSchema.shape);
    case 'cluster':
      return Object.keys(clusterSchema.shape);
    case 'workload':
      return rest[0] === 'producer' ? Object.keys(kafkaProducerSchema.shape) : Object.keys(workloadSchema.shape);
    case 'settings':
      return SETTING_NAMES;
    case 'matrix':
      if (rest[0] === 'include') return [...SETTING_NAMES, 'label'];
      if (rest[0] === 'exclude') return [...SETTING_NAMES, 'target'];
      return [...SETTING_NAMES, 'target', 'include', 'exclude'];
    case 'faults':
      return rest[1] === 'when' ? WHEN_KEYS : Object.keys(faultSchema.shape);
    case 'targetSettings':
      return rest.length === 0 ? [...TARGET_AXIS_VALUES] : SETTING_NAMES;
    case 'faultSets':
      return rest.length < 2 ? [] : rest[2] === 'when' ? WHEN_KEYS : Object.keys(faultSchema.shape);
    default:
      return [];
  }
}
