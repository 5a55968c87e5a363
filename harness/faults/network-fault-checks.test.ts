// `scenario check` on the network fault kinds (partition, slow-link): a scenario with one runs
// its cells in namespaces; bad entries are refused naming the entry and the field: sides that
// overlap or are empty, the harness as a victim, unknown links, a link narrowing that leaves a
// group nothing, `delay:` (with the host's reason), rate/loss out of range, a target without a
// lab network, a file that asks loopback. The refusals are read as `scenario check` prints them.
import { describe, expect, it } from 'vitest';
import { compileScenario } from '../scenario/index.ts';
import { ScenarioError } from '../scenario/errors.ts';
import { linkDelayProblem } from '../net/slow-link.ts';

const HEAD = `question: q?
cluster: { brokers: 3, partitions: 1, replicationFactor: 3 }
workload: { duration: 10s, warmup: 0s }
`;

function problems(text: string): string[] {
  try {
    compileScenario(HEAD + text, 'net.yaml', { defaultName: 'net' });
  } catch (err) {
    if (err instanceof ScenarioError) return err.issues.map((i) => `${i.path}: expected ${i.expected}, found ${i.found}`);
    throw err;
  }
  return [];
}

const entry = (fields: string) => `faults: [{ ${fields}, when: { at: 1s }, duration: 2s }]\n`;

describe('scenario check of partition and slow-link entries', () => {
  it('a partition or slow-link runs the cells in namespaces, on process and kafka', () => {
    const s = compileScenario(`${HEAD}matrix: { target: [durolab, kafka] }\n${entry('kind: partition, target: leader, from: [controller, followers]')}`, 'ok.yaml', { defaultName: 'ok' });
    expect(s.cluster.network).toBe('namespaces');
    expect(s.faults[0]).toMatchObject({ kind: 'partition', from: ['controller', 'followers'], duration: 2 });
    const slow = compileScenario(`${HEAD}${entry('kind: slow-link, target: 1, rate: 8mbit, loss: 2%')}`, 'ok.yaml', { defaultName: 'ok' });
    expect(slow.cluster.network).toBe('namespaces');
    expect(slow.faults[0]).toMatchObject({ kind: 'slow-link', target: { broker: 1 }, rate: 8, loss: 2 });
  });

  it.each([
    ['from naming the victim, and a group twice', 'kind: partition, target: 1, from: [1, rest, rest]', ['faults[0].from: expected each group or broker once, found rest twice', 'faults[0].from: expected a side without the victim (target: 1 is cut from it; the sides may not overlap), found broker 1 on both sides']],
    ['overlapping sides: followers from followers', 'kind: partition, target: followers, from: followers', ['faults[0].from: expected a side without the victims (target: followers; the sides may not overlap), found followers on both sides']],
    ['an empty side: every broker a victim', 'kind: partition, target: all, from: rest', [/^faults\[0\]\.from: expected clients with target: all .*the other side would be empty, found rest$/]],
    ['an empty from', 'kind: partition, target: leader, from: []', [/^faults\[0\]\.from: expected rest \| followers \| controller \| clients \| a broker index N, or a list of them .*, found an empty list$/]],
    ['a broker the cluster lacks', 'kind: partition, target: leader, from: 5', ['faults[0].from: expected broker indexes from 0 to 2 (or rest, followers, controller, clients), found 5']],
    ['an unknown link', 'kind: partition, target: leader, links: [replication, gossip]', [/^faults\[0\]\.links: expected replication \| controller \| clients, or a list of them, found /]],
    ['a link narrowing that leaves the controller nothing', 'kind: partition, target: leader, from: controller, links: replication', ['faults[0].links: expected links that include controller with from: controller (its traffic is on the controller link only), found replication']],
    ['the harness as a victim (a partition of the harness from itself)', 'kind: partition, target: clients, from: clients', ["faults[0].target: expected a broker id (integer >= 0) | a list of them | leader | followers | one | minority | majority | all, found 'clients'"]],
    ['a partition without duration', 'kind: partition, target: leader, duration: null', [/^faults\[0\]\.duration: expected a duration > 0/]],
    ['a slow link with neither rate nor loss', 'kind: slow-link, target: leader', [/^faults\[0\]: expected rate: .* and\/or loss: .* on a slow-link fault, found neither$/]],
    ['rate and loss out of range', 'kind: slow-link, target: leader, rate: 8 mb, loss: 200', [/^faults\[0\]\.rate: expected a bandwidth like 8mbit/, /^faults\[0\]\.loss: expected a packet loss in per cent, 0-100/]],
    ['from and links on a slow link', 'kind: slow-link, target: leader, rate: 1mbit, from: rest', [/^faults\[0\]\.from: expected no from on a slow-link fault/]],
  ])('refuses %s', (_name, fields, expected) => {
    const got = problems(entry(fields).replace(', duration: 2s }]', fields.includes('duration:') ? ' }]' : ', duration: 2s }]'));
    expect(got).toHaveLength(expected.length);
    expected.forEach((e, i) => expect(got[i]).toMatch(e));
  });

  it("refuses delay: with this host's reason", () => {
    const got = problems(entry('kind: slow-link, target: leader, rate: 8mbit, delay: 10ms'));
    const why = linkDelayProblem() ?? 'the lab network applies no delay (its slow links take rate and loss only)';
    expect(got).toEqual([`faults[0].delay: expected no delay: ${why}, found "10ms"`]);
    // This machine's kernel has tbf but no netem: the reason says so (or, without root, that it could not be probed).
    expect(why).toMatch(/no netem qdisc|cannot be probed/);
  });

  it('refuses a network fault on targets without a lab network, and a file that asks loopback', () => {
    const vm = problems(`target: vm\n${entry('kind: slow-link, target: leader, rate: 8mbit')}`);
    expect(vm).toEqual([expect.stringMatching(/^faults\[0\]\.kind: expected power-cut \| process-kill \| crash-states on target: vm \(slow-link needs target: process \| kafka \| nats; target vm has no lab network: its brokers are QEMU guests/)]);
    // Target external delivers a partition through its command templates (external/external-faults.ts): without them it is refused, naming them; a slow link it cannot deliver at all.
    const external = problems(`target: external\nexternal: { bootstrap: ["127.0.0.1:9092"], kill: ["true"], restart: ["true"] }\n${entry('kind: partition, target: leader')}`);
    expect(external.join('\n')).toMatch(/faults\[0\]\.kind: expected external\.partition and external\.heal \(argv templates\) for a partition fault on target: external/);
    const slow = problems(`target: external\nexternal: { bootstrap: ["127.0.0.1:9092"], kill: ["true"], restart: ["true"] }\n${entry('kind: slow-link, target: leader, rate: 8mbit')}`);
    expect(slow.join('\n')).toMatch(/faults\[0\]\.kind: expected .* on target: external \(slow-link needs target: process \| kafka \| nats; target external has no lab network: its brokers run on hosts the lab did not start/);
    expect(problems(`settings: { network: loopback }\n${entry('kind: partition, target: leader')}`)).toEqual([
      'settings.network: expected namespaces, or no network at all, with a partition fault (each broker its own host: the fault acts on the lab network), found loopback',
    ]);
  });
});
