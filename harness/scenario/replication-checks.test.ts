// The replication.factor setting: a cell's RF over cluster.replicationFactor (cell-cluster.ts),
// checked against cluster.brokers and the cell's min.insync.replicas where the target takes it.
import { describe, expect, it } from 'vitest';
import { compileScenario } from './index.ts';
import { scenarioRefusal } from './scenario-test-helpers.ts';
import { cellCluster } from './cell-cluster.ts';
import { cellSettings } from './loader.ts';

const compile = (text: string) => compileScenario(text, 'rf.yaml', { defaultName: 'rf' });
const issues = (text: string) => scenarioRefusal(compile, text).issues;

describe('replication.factor', () => {
  it('is a matrix axis whose cells run their own RF over cluster.replicationFactor', () => {
    const s = compile('question: q\ntarget: nats\nmatrix:\n  replication.factor: [1, 3]\ncluster: { brokers: 3, replicationFactor: 3, minInsyncReplicas: 2 }\n');
    expect(s.matrix.map((c) => c.label)).toEqual(['RF 1', 'RF 3']);
    const [r1, r3] = s.matrix;
    expect(cellCluster(s.cluster, cellSettings(s, r1!).values)).toMatchObject({ brokers: 3, replicationFactor: 1, partitions: 1 });
    expect(cellCluster(s.cluster, cellSettings(s, r3!).values).replicationFactor).toBe(3);
    // Without the setting the cluster's stands.
    expect(cellCluster({ brokers: 3, partitions: 2, replicationFactor: 2 }, {})).toEqual({ brokers: 3, partitions: 2, replicationFactor: 2 });
  });

  it('refuses an RF above the brokers, and one below min.insync.replicas where the target takes that setting, naming the cell', () => {
    expect(issues('question: q\nmatrix: { replication.factor: [1, 5] }\ncluster: { brokers: 3, minInsyncReplicas: 1 }\n')).toEqual([
      expect.objectContaining({ path: 'matrix.replication.factor', expected: 'at most cluster.brokers (3)', found: '5' }),
    ]);
    const below = issues('question: q\ntarget: kafka\nmatrix: { replication.factor: [1, 3] }\ncluster: { brokers: 3, minInsyncReplicas: 2 }\n');
    expect(below).toHaveLength(1);
    expect(below[0]!.expected).toContain("at least the cell's min.insync.replicas (2) on target kafka (cell replication.factor=1");
    // A cell that lowers min.insync.replicas with it is fine; so is NATS, which has no such setting.
    expect(() => compile('question: q\ntarget: kafka\nmatrix:\n  include:\n    - { replication.factor: 1, min.insync.replicas: 1 }\ncluster: { brokers: 3, minInsyncReplicas: 2 }\n')).not.toThrow();
    expect(() => compile('question: q\ntarget: nats\nmatrix: { replication.factor: [1, 3] }\ncluster: { brokers: 3, minInsyncReplicas: 2 }\n')).not.toThrow();
    expect(issues('question: q\nmatrix: { replication.factor: [0] }\ncluster: { brokers: 3 }\n')[0]!.expected).toContain('an integer from 1 to 64');
  });

  it("a fault's demand on replicas holds in every cell: followers is refused when some cell runs at RF 1", () => {
    const text = (rfs: string) =>
      `question: q\ntarget: nats\nmatrix: { replication.factor: ${rfs} }\ncluster: { brokers: 3 }\nworkload: { duration: 5s }\nfaults:\n  - { kind: pause, target: followers, when: { at: 1s }, duration: 1s }\n`;
    expect(issues(text('[1, 3]'))).toEqual([expect.objectContaining({ path: 'faults[0].target', found: 'followers', expected: 'leader | all | a broker id with replicationFactor 1 (followers: the leader has none)' })]);
    expect(() => compile(text('[2, 3]'))).not.toThrow();
  });
});
