// A partition's heal always runs, on real durolab brokers each in its own network namespace: at
// once when a later entry of the schedule throws while the partition lasts (the trial fails
// mid-partition), and at the attempt's release for a cut still in force (a start that failed
// halfway, a heal that failed). What is in force is read from the kernel: the partition's nft
// chains in the leader's namespace (`nft list table inet durolab`), not the harness's own books.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { compileScenario, cellSettings } from '../scenario/index.ts';
import { processTarget } from '../targets/process-target.ts';
import type { FaultableCluster } from '../targets/types.ts';
import { loadDriver } from '../drivers/registry.ts';
import { AckLedger } from '../history/ledger.ts';
import { driveSchedule } from './fault-schedule.ts';
import { TrialResources } from './trial-resources.ts';
import { TrialEvidence } from './trial-evidence.ts';
import { labNetworkPrerequisiteProblem } from '../net/net-tools.ts';
import { missingRequirement } from '../../test/requirements.ts';
import { leftOnHost } from '../net/net-test-helpers.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-partition-heal-test-'));
const scenario = compileScenario(
  'question: q\ntarget: process\ncluster: { brokers: 3, topic: ph, partitions: 1, replicationFactor: 3 }\nfaults: [{ kind: partition, target: leader, from: followers, when: { at: 1s }, duration: 1s }]\n',
  's.yaml',
  { defaultName: 's' },
);
let cluster: FaultableCluster | null = null;

/** The partition chains (p<id>_in / p<id>_out) in force in every broker's namespace. */
async function chainsInForce(c: FaultableCluster): Promise<string[]> {
  const net = c.labNetwork!()!;
  const out: string[] = [];
  for (const n of net.lab.nodes) {
    const r = await execa('ip', ['netns', 'exec', n.netns, 'nft', 'list', 'table', 'inet', 'durolab'], { reject: false });
    for (const m of r.stdout.matchAll(/chain (p\d+_(?:in|out))/g)) out.push(`node ${n.index}: ${m[1]}`);
  }
  return out;
}

beforeAll(async () => {
  if (labNetworkPrerequisiteProblem()) return;
  // The partition implied namespaces: each broker its own host.
  expect(scenario.cluster.network).toBe('namespaces');
  cluster = (await processTarget().start({ cluster: scenario.cluster, settings: cellSettings(scenario, scenario.matrix[0]!), workDir: work })) as FaultableCluster;
  await cluster.leaders('ph');
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('partition heal on durolab brokers in namespaces', () => {
  it('heals a partition at once when a later entry throws while it lasts', async (ctx) => {
    const why = labNetworkPrerequisiteProblem();
    if (why) return missingRequirement(ctx, why);
    const c = cluster!;
    const client = (await loadDriver('http')).connect(c, { dataOnHost: true });
    const inForce: string[][] = [];
    const t0 = Date.now();
    const run = driveSchedule({
      faults: [
        { kind: 'partition', target: 'leader', when: { at: 0.1 }, duration: 30, ...({ from: ['followers'], links: ['replication'] } as object) },
        // Every broker index: one of them is the leader, a victim of the entry (scenario check cannot know which): the start throws.
        { kind: 'partition', target: 'leader', when: { at: 0.8 }, duration: 1, ...({ from: [{ broker: 0 }, { broker: 1 }, { broker: 2 }] } as object) },
      ],
      seed: 1,
      cluster: c,
      topic: 'ph',
      ledger: new AckLedger({ recordsPerBatch: 1, producerIdBase: 1000, partitions: [0] }),
      loadStartMs: Date.now(),
      loadDone: new Promise(() => {}),
      stopLoad: () => undefined,
      signal: new AbortController().signal,
      client,
      onLasting: () => void chainsInForce(c).then((x) => inForce.push(x)),
    });
    await expect(run).rejects.toThrow(/fault partition: from broker \d \(id \d\) is a victim of the entry at this moment/);
    // The first entry's 30 s cut was in force (the leader's chains, each follower's), and is healed already.
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(inForce).toHaveLength(1);
    expect(inForce[0]!.length).toBe(6);
    expect(await chainsInForce(c)).toEqual([]);
    expect(c.labNetwork!()!.lab.activeFaults).toEqual([]);
  });

  it("the attempt's release heals a cut still in force before it stops the cluster, and nothing of the lab is left", async (ctx) => {
    const why = labNetworkPrerequisiteProblem();
    if (why) return missingRequirement(ctx, why);
    const c = cluster!;
    const net = c.labNetwork!()!;
    const lab = net.lab;
    // As a heal that failed would leave it: broker 0's node cut from the others, nobody to heal it but the release.
    await lab.partition({ a: [0], b: [1, 2] });
    expect(await chainsInForce(c)).toHaveLength(6);
    const res = new TrialResources();
    res.cluster = c;
    const lines: string[] = [];
    await res.release(new TrialEvidence(work, { cell: 'base', trial: 0, topic: 'ph', driver: 'http' }, true), null, true, (l) => lines.push(l));
    cluster = null;
    expect(lines.join('\n')).toMatch(/lab network fault\(s\) still in force at the trial's end, healed: partition \d+: \[node 0\] cut from \[node 1, node 2\]/);
    expect(lab.activeFaults).toEqual([]);
    // The cluster's stop closed its lab network: no namespace, veth, bridge or table of it remains.
    expect(leftOnHost(lab)).toEqual([]);
  });
});
