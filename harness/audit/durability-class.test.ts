// The audit's judgement without a cluster: a topic's settings to its durability class and
// risks, Kafka's flush configs to a flush policy, and the lab cells that speak for a class
// (fixture runs: a seam beside audit-durolab.test.ts and audit-kafka.test.ts, which read real
// clusters).
import { describe, expect, it } from 'vitest';
import { powerCutRun } from '../report/test-fixtures.ts';
import { classify, flushPolicyOf, type ProducerFacts, type TopicFacts } from './durability-class.ts';
import { differences, findEvidence, scenariosToRun, type CellFacts } from './lab-evidence.ts';
import { listScenarios, loadScenario } from '../scenario/loader.ts';
import { releaseOfMetadataVersion } from './metadata-version.ts';

const LONG_MAX = '9223372036854775807';

function topic(over: Partial<TopicFacts> = {}): TopicFacts {
  return {
    topic: 't',
    replicationFactor: 3,
    partitions: 1,
    minInsyncReplicas: 2,
    uncleanLeaderElection: false,
    flush: { kind: 'never' },
    underReplicated: [],
    offline: [],
    eligibleLeaderReplicas: true,
    replicaLagTimeMaxMs: 30_000,
    ...over,
  };
}
const producer: ProducerFacts = { acks: 'all', idempotence: true, given: true };
const risks = (t: TopicFacts, p = producer) => classify(t, p).findings.filter((f) => f.severity === 'loss').map((f) => f.text.split(':')[0]);

describe('durability class', () => {
  it('reads flush.messages and flush.ms as Kafka gives them', () => {
    expect(flushPolicyOf(LONG_MAX, LONG_MAX)).toEqual({ kind: 'never' });
    expect(flushPolicyOf('1', LONG_MAX)).toEqual({ kind: 'per-batch' });
    expect(flushPolicyOf('1000', LONG_MAX)).toEqual({ kind: 'messages', every: 1000 });
    expect(flushPolicyOf(LONG_MAX, '250')).toEqual({ kind: 'ms', every: 250 });
    expect(flushPolicyOf(null, LONG_MAX)).toBeNull();
    expect(flushPolicyOf('ten', LONG_MAX)).toBeNull();
  });

  it('names what acks=all means with min ISR 1 vs 2, and the page cache', () => {
    expect(risks(topic({ minInsyncReplicas: 1 }))).toEqual(['min.insync.replicas 1', 'no flush']);
    expect(classify(topic({ minInsyncReplicas: 1 }), producer).guarantee).toContain('at least 1 broker');
    expect(risks(topic())).toEqual(['no flush']);
    expect(classify(topic(), producer).guarantee).toContain('at least 2 brokers');
    expect(risks(topic({ flush: { kind: 'per-batch' } }))).toEqual([]);
    expect(classify(topic({ flush: { kind: 'per-batch' } }), producer).guarantee).toContain('fsynced before the answer');
    expect(classify(topic(), producer).id).toBe('acks=all RF3 minISR2 flush=never unclean=off');
  });

  it('flags RF 1, acks=1 (KAFKA-20554), unclean election and a flush interval', () => {
    expect(risks(topic({ replicationFactor: 1, minInsyncReplicas: 1 }))).toContain('RF 1');
    expect(risks(topic(), { ...producer, acks: 1 })).toContain('acks=1');
    expect(classify(topic(), { ...producer, acks: 1 }).findings.find((f) => f.text.startsWith('acks=1'))!.text).toContain('KAFKA-20554');
    expect(risks(topic({ uncleanLeaderElection: true }))).toContain('unclean.leader.election.enable=true');
    expect(risks(topic({ flush: { kind: 'messages', every: 1000 } }))).toEqual(['flush.messages=1000']);
    expect(risks(topic({ flush: { kind: 'ms', every: 200 } }))).toEqual(['flush.ms=200']);
  });

  it('says what stops writes, what is wrong now, and what it assumed', () => {
    const avail = (t: TopicFacts) => classify(t, producer).findings.filter((f) => f.severity === 'availability').map((f) => f.text);
    expect(avail(topic({ minInsyncReplicas: 3 }))[0]).toMatch(/= RF 3: one broker down stops every acks=all produce/);
    expect(avail(topic({ minInsyncReplicas: 4 }))[0]).toMatch(/> RF 3: every acks=all produce fails/);
    expect(avail(topic({ underReplicated: [{ partition: 0, isr: [1], replicas: [1, 2, 3] }] }))[0]).toMatch(/under-replicated partition\(s\) 0 \(ISR \[1\] of \[1,2,3\]\); 1 below min.insync.replicas/);
    expect(avail(topic({ offline: [2] }))[0]).toBe('now: partition(s) 2 have no leader');
    const assumed = classify(topic(), { acks: 'all', idempotence: true, given: false }).findings.map((f) => f.text);
    expect(assumed.some((t) => t.startsWith('producer settings not given'))).toBe(true);
    const elr = (v: boolean | null) => classify(topic({ eligibleLeaderReplicas: v }), producer).findings.filter((f) => f.text.startsWith('ELR')).length;
    expect([elr(true), elr(false), elr(null)]).toEqual([1, 1, 0]);
  });

  it('maps metadata.version levels to releases', () => {
    expect(releaseOfMetadataVersion(33)).toBe('4.4-IV2');
    expect(releaseOfMetadataVersion(7)).toBe('3.3-IV3');
    expect(releaseOfMetadataVersion(99)).toMatch(/^level 99 \(newer than/);
  });
});

describe('lab evidence for a class', () => {
  const key = { acks: 1 as const, replicationFactor: 1, minInsyncReplicas: 1, flush: { kind: 'never' as const }, unclean: false };
  const cell = (over: Partial<CellFacts> = {}): CellFacts => ({
    system: 'durolab',
    acks: 1,
    replicationFactor: 1,
    minInsyncReplicas: 1,
    flush: { kind: 'never' },
    unclean: false,
    fault: { kind: 'power-cut', target: 'all' },
    lyingDisk: false,
    ...over,
  });

  it('matches on acks, the flush kind and replication; names every other difference; drops lying disks', () => {
    expect(differences(key, cell())).toEqual([]);
    expect(differences(key, cell({ acks: 'all' }))).toBeNull();
    expect(differences(key, cell({ flush: { kind: 'per-batch' } }))).toBeNull();
    expect(differences(key, cell({ replicationFactor: 3 }))).toBeNull();
    expect(differences({ ...key, replicationFactor: 3 }, cell({ replicationFactor: 5, minInsyncReplicas: 2, unclean: true }))).toEqual(['RF 5 there', 'min ISR 2 there', 'unclean election on there']);
    expect(differences({ ...key, flush: { kind: 'messages', every: 10 } }, cell({ flush: { kind: 'messages', every: 1000 } }))).toEqual(['flush messages:1000 there']);
    expect(differences(key, cell({ lyingDisk: true }))).toBeNull();
  });

  it('finds the loss per trial of the matching cell of a run, with its run file', () => {
    const run = powerCutRun();
    run.scenario.raw = { cluster: { brokers: 1, replicationFactor: 1 }, settings: { io: 'buffered' }, faults: [{ kind: 'power-cut', target: 'leader' }] };
    const found = findEvidence(key, [{ run, file: 'power-cut/20250102T090000Z-c3d4/run.json' }]);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ scenario: 'power-cut', cell: 'vm buffered acks=1', system: 'durolab', fault: { kind: 'power-cut', target: 'leader' }, differs: [] });
    // Trials lost 3,100, 2,800 and 0 of 40,000 / 41,000 / 39,500.
    expect(found[0].lost).toEqual({ min: 0, median: 2800, max: 3100, count: 3, unit: 'trial' });
    expect(found[0].acked).toBe(40_000);
    expect(findEvidence({ ...key, flush: { kind: 'per-batch' } }, [{ run, file: 'x' }]).map((e) => e.cell)).toEqual(['vm fdatasync acks=1']);
  });

  it('points at shipped scenarios with a matching fault cell', () => {
    const scenarios = listScenarios().map((s) => loadScenario(s.file));
    const toRun = scenariosToRun({ acks: 'all', replicationFactor: 3, minInsyncReplicas: 2, flush: { kind: 'never' }, unclean: false }, scenarios).map((s) => s.scenario);
    expect(toRun).toContain('power-cut-all');
    expect(toRun).toContain('peer-power-cut-all');
  });
});
