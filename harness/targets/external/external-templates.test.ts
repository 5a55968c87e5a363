// target external's command templates without a cluster: how each placeholder renders, what
// `scenario check` refuses (a fault with no template for it, naming the entry and the template;
// bad placeholders, unpaired templates, partitions it cannot express), a partition's other side,
// how a failing template is reported (exit, stdout, stderr, timeout), and the powerCut template:
// rendered here, never run — a host on this machine (loopback, the lab's 198.18.0.0/15, an address
// of this host) is refused before anything starts, so an OS crash can never hit the harness's own.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileScenario, ScenarioError } from '../../scenario/index.ts';
import type { Fault } from '../../model/scenario.ts';
import { externalSchema, fillArgv, type ExternalSpec } from '../../model/external-spec.ts';
import { EXTERNAL_FAULTS, externalFaultActions, linkPorts, partitionSide, templatesOf } from './external-faults.ts';
import { refusePowerCutHere, runTemplate } from './external-commands.ts';
import { ExternalCluster } from './external-target.ts';
import { capabilitiesOf } from '../registry.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-ext-templates-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const SSH = ['ssh', '-i', '/keys/lab', 'root@{host}'];
const spec = (over: Partial<ExternalSpec> = {}): ExternalSpec => externalSchema.parse({ bootstrap: ['10.0.0.1:9092'], ...over }) as ExternalSpec;

/** The issues `scenario check` finds in an external scenario, as `path: expected, found` lines. */
function issues(external: string, faults: string, cluster = '{ brokers: 3 }'): string[] {
  const text = `question: q\ntarget: external\nexternal: ${external}\ncluster: ${cluster}\nworkload: { duration: 20s }\nfaults:\n${faults}`;
  try {
    compileScenario(text, 'ext.yaml', { defaultName: 'ext' });
    return [];
  } catch (err) {
    if (!(err instanceof ScenarioError)) throw err;
    return err.issues.map((i) => `${i.path}: ${i.expected}, found ${i.found}`);
  }
}

describe('target external: command templates', () => {
  it('renders every placeholder: {id}, {host}, {port}; {from} and {ports} space-separated in partition and heal', () => {
    const partition = [...SSH, 'for a in {from}; do nft add rule inet cut in ip saddr $a tcp dport { {ports} } drop; done # broker {id} port {port}'];
    expect(fillArgv(partition, { id: 2, host: '10.0.0.3', port: 9092, from: '10.0.0.1 10.0.0.2', ports: '9093 9094' })).toEqual([
      'ssh',
      '-i',
      '/keys/lab',
      'root@10.0.0.3',
      'for a in 10.0.0.1 10.0.0.2; do nft add rule inet cut in ip saddr $a tcp dport { 9093 9094 } drop; done # broker 2 port 9092',
    ]);
    // nft's and the shell's own braces are text, not placeholders: the schema takes them.
    expect(externalSchema.safeParse({ bootstrap: ['h:1'], partition: [...SSH, "nft add chain inet cut in '{ type filter hook input priority 0; }' {from}"], heal: ['true'] }).success).toBe(true);
  });

  it('renders the powerCut template (an OS crash without sync) and never runs it against a host on this machine', async () => {
    const s = spec({ powerCut: [...SSH, 'echo b > /proc/sysrq-trigger'], restart: [...SSH, 'systemctl start kafka'] });
    expect(fillArgv(s.powerCut!, { id: 0, host: '10.20.30.40', port: 9092 })).toEqual(['ssh', '-i', '/keys/lab', 'root@10.20.30.40', 'echo b > /proc/sysrq-trigger']);
    // A template that would leave a mark if it ran: refused for each kind of local host, the mark never made.
    const marker = path.join(work, 'power-cut-ran');
    const local = spec({ powerCut: ['touch', marker], restart: ['true'] });
    const ownAddress = Object.values(os.networkInterfaces()).flatMap((a) => a ?? []).find((a) => a.family === 'IPv4' && !a.internal)?.address;
    for (const host of ['127.0.0.1', 'localhost', '198.18.7.10', '198.19.200.11', ...(ownAddress ? [ownAddress] : [])]) {
      await expect(runTemplate(local, 'powerCut', { id: 0, host, port: 9092 })).rejects.toThrow(/external\.powerCut for host .*: refused, .* is (a loopback address|in the lab network's 198\.18\.0\.0\/15|an address of this host)/);
    }
    expect(existsSync(marker)).toBe(false);
    await expect(refusePowerCutHere('203.0.113.9')).resolves.toBeUndefined();
  });

  it('reports a failing template with its argv, exit code, stdout and stderr, and a timeout as such', async () => {
    const s = spec({ pause: ['sh', '-c', 'echo out-{id}; echo err-{host} >&2; exit 3'], resume: ['true'], commandTimeoutSec: 1 });
    await expect(runTemplate(s, 'pause', { id: 4, host: 'h4', port: 1 })).rejects.toThrow(
      'external.pause for broker 4 (["sh","-c","echo out-4; echo err-h4 >&2; exit 3"]) exited 3; stdout: out-4; stderr: err-h4',
    );
    await expect(runTemplate({ ...s, pause: ['sleep', '5'] }, 'pause', { id: 4, host: 'h4', port: 1 })).rejects.toThrow(/external\.pause for broker 4 .* timed out after 1 s \(external\.commandTimeoutSec\)/);
    await expect(runTemplate({ ...s, pause: ['/nonexistent/ssh'] }, 'pause', { id: 4, host: 'h4', port: 1 })).rejects.toThrow(/external\.pause for broker 4 .*(could not run|exited)/);
    expect((await runTemplate({ ...s, pause: ['echo', '{id}@{host}:{port}'] }, 'pause', { id: 4, host: 'h4', port: 9 })).stdout).toBe('4@h4:9');
  });

  it('maps every kind to its templates, and offers the actions of the kinds it can deliver', () => {
    expect(Object.fromEntries(Object.keys(EXTERNAL_FAULTS).map((k) => [k, templatesOf(k as keyof typeof EXTERNAL_FAULTS)]))).toEqual({
      'process-kill': ['kill', 'restart'],
      'power-cut': ['powerCut', 'restart'],
      pause: ['pause', 'resume'],
      partition: ['partition', 'heal'],
      'move-leader': [],
      'crash-states': [],
      'slow-link': [],
      'disk-full': [],
      'corrupt-file': [],
      'truncate-file': [],
      'lost-write': [],
      'read-error': [],
    });
    expect([...capabilitiesOf('external').faultActions].sort()).toEqual(externalFaultActions().sort());
    expect(capabilitiesOf('external').faultActions).not.toContain('record-write-log');
  });

  it('refuses at scenario check a fault with no template for it, naming the entry and the missing template', () => {
    const kill = '{ bootstrap: ["10.0.0.1:9092"], kill: ["true"], restart: ["true"] }';
    expect(issues(kill, '  - { kind: process-kill, target: 0, when: { at: 2s } }\n')).toEqual([]);
    const all = '{ bootstrap: ["10.0.0.1:9092"], kill: ["true"], restart: ["true"], pause: ["true"], resume: ["true"], partition: ["true"], heal: ["true"], powerCut: ["true"] }';
    expect(issues(all, '  - { kind: pause, target: 1, when: { at: 1s }, duration: 2s }\n  - { kind: partition, target: 2, when: { at: 4s }, duration: 2s }\n  - { kind: power-cut, target: leader, when: { at: 8s } }\n')).toEqual([]);
    expect(issues(kill, '  - { kind: pause, target: 1, when: { at: 2s }, duration: 2s }\n')).toEqual([
      'faults[0].kind: external.pause and external.resume (argv templates) for a pause fault on target: external (it runs pause, resume), found no pause, resume template',
    ]);
    expect(issues(kill, '  - { kind: partition, target: 1, when: { at: 2s }, duration: 2s }\n')).toEqual([
      'faults[0].kind: external.partition and external.heal (argv templates) for a partition fault on target: external (it runs partition, heal), found no partition, heal template',
    ]);
    const noRestart = '{ bootstrap: ["10.0.0.1:9092"], pause: ["true"], resume: ["true"] }';
    expect(issues(noRestart, '  - { kind: pause, target: 1, when: { at: 2s }, duration: 2s }\n  - { kind: power-cut, target: leader, when: { at: 5s } }\n')).toEqual([
      'faults[1].kind: external.powerCut and external.restart (argv templates) for a power-cut fault on target: external (it runs powerCut, restart), found no powerCut, restart template',
    ]);
  });

  it('refuses bad templates in the external: block: unknown placeholders, {from} outside partition/heal, unpaired templates', () => {
    const base = '{ bootstrap: ["10.0.0.1:9092"]';
    const one = (extra: string) => issues(`${base}, ${extra} }`, '  []\n'.replace('  []\n', '  - { kind: move-leader, target: leader, when: { at: 2s } }\n'));
    expect(one('pause: ["ssh", "{hots}", "kill -STOP 1"], resume: ["true"]')).toEqual([expect.stringMatching(/^external\.pause\[1\]: placeholders among \{id\}, \{host\}, \{port\} in pause, found \{hots\}/)]);
    expect(one('pause: ["echo", "{from}"], resume: ["true"]')).toEqual([expect.stringMatching(/^external\.pause\[1\]: placeholders among \{id\}, \{host\}, \{port\} in pause, found \{from\}/)]);
    expect(one('partition: ["true"]')).toEqual([expect.stringMatching(/^external\.heal: partition and heal together \(a partition is always healed\)/)]);
    expect(one('resume: ["true"]')).toEqual([expect.stringMatching(/^external\.pause: pause and resume together/)]);
    expect(one('powerCut: ["true"]')).toEqual([expect.stringMatching(/^external\.restart: a restart command with powerCut/)]);
    expect(one('kill: ["true"]')).toEqual([expect.stringMatching(/^external\.restart: a restart command with kill/)]);
    expect(one('restart: ["true"]')).toEqual([expect.stringMatching(/^external\.restart: restart beside kill or powerCut/)]);
    expect(one('partition: "nft flush ruleset"')).toEqual([expect.stringMatching(/^external\.partition: the partition command as an argv list of strings/)]);
  });

  it('refuses partitions target external cannot express: from controller or clients, links without ports or without {ports}', () => {
    const ext = (extra = '') => `{ bootstrap: ["10.0.0.1:9092"], partition: ["sh", "-c", "cut {from}"], heal: ["true"]${extra} }`;
    expect(issues(ext(), '  - { kind: partition, target: leader, from: controller, when: { at: 2s }, duration: 2s }\n')).toEqual([
      "faults[0].from: rest | followers | broker indexes on target: external (the KRaft quorum's addresses as the brokers see them are not in Metadata), found controller",
    ]);
    expect(issues(ext(), '  - { kind: partition, target: leader, from: [0, 7], when: { at: 2s }, duration: 2s }\n')).toEqual(['faults[0].from: broker indexes from 0 to 2 (or rest, followers, controller, clients), found 7']);
    expect(issues(ext(), '  - { kind: partition, target: leader, links: replication, when: { at: 2s }, duration: 2s }\n')).toEqual([
      'faults[0].links: external.links.replication: the ports of those listeners, for {ports} (one of clients, replication, controller), found no ports for them',
      'faults[0].links: a partition template that uses {ports} to narrow the cut to these links, found external.partition without {ports}: ["sh","-c","cut {from}"]',
    ]);
    const narrow = '{ bootstrap: ["10.0.0.1:9092"], partition: ["sh", "-c", "cut {from} {ports}"], heal: ["true"], links: { replication: [9093], controller: [9094] } }';
    expect(issues(narrow, '  - { kind: partition, target: leader, from: followers, links: [replication, controller], when: { at: 2s }, duration: 2s }\n')).toEqual([]);
    const f = { kind: 'partition', target: 'leader', when: { at: 2 }, links: ['replication', 'controller'] } as unknown as Fault;
    expect(linkPorts(f, spec({ links: { replication: [9093], controller: [9094, 9093] } }))).toBe('9093 9094');
    expect(linkPorts({ ...f, links: undefined } as unknown as Fault, spec())).toBe('');
  });

  it("fills {from} with the other side's hosts: rest, followers, broker indexes; refuses an empty side or a shared host", () => {
    const brokers = [0, 1, 2].map((id) => ({ id, host: `10.0.0.${id + 1}`, port: 9092 }));
    const at = (from: unknown) => ({ kind: 'partition', target: 0, when: { at: 1 }, ...(from === undefined ? {} : { from }) }) as unknown as Fault;
    const hosts = (bs: Array<{ host: string }>) => bs.map((b) => b.host);
    expect(hosts(partitionSide(at(undefined), [0], brokers, null))).toEqual(['10.0.0.2', '10.0.0.3']);
    expect(hosts(partitionSide(at('followers'), [1], brokers, { leader: 0, isr: [0, 1, 2] }))).toEqual(['10.0.0.3']);
    expect(hosts(partitionSide(at('followers'), [0], brokers, { leader: 0, isr: [0, 2] }))).toEqual(['10.0.0.3']);
    expect(hosts(partitionSide(at([2]), [0], brokers, null))).toEqual(['10.0.0.3']);
    expect(() => partitionSide(at([0]), [0], brokers, null)).toThrow('partition of broker(s) 0 from broker 0: the other side is empty');
    expect(() => partitionSide(at('followers'), [1], brokers, null)).toThrow(/partition 0 has no leader/);
    const shared = brokers.map((b) => ({ ...b, host: '127.0.0.1' }));
    expect(() => partitionSide(at('rest'), [0], shared, null)).toThrow('partition: brokers 0 and 1 share host 127.0.0.1; a cut by address cannot separate them');
  });
});

describe('target external: the cluster runs the templates', () => {
  const md = (isr: number[]) => ({
    brokers: [0, 1, 2].map((id) => ({ id, host: `10.9.0.${id + 1}`, port: 9092 })),
    controllerId: 0,
    partitions: [{ topic: 't', partition: 0, error: null, leader: 0, leaderEpoch: 1, replicas: [0, 1, 2], isr }],
    topicErrors: {},
  });
  const log = (name: string) => path.join(work, name);
  /** A template that appends "<what> <id>" (and {from} for partition/heal) to a log file, and fails for broker `failFor`. */
  const note = (what: string, failFor = -1, from = '') => ['sh', '-c', `echo "${what} {id}${from}" >> ${log('runs')}; [ {id} != ${failFor} ]`];
  const lines = () => (existsSync(log('runs')) ? readFileSync(log('runs'), 'utf8').trim().split('\n').sort() : []);

  it('heals every victim when a lasting fault fails to start on one, and names the failure', async () => {
    rmSync(log('runs'), { force: true });
    const c = new ExternalCluster(spec({ pause: note('pause', 1), resume: note('resume') }), 't', md([0, 1, 2]), work, () => undefined);
    const own = c.ownDelivery('pause')!;
    await expect(own.deliver([0, 1], { kind: 'pause', target: 'all', when: { at: 1 }, duration: 1 }, { topic: 't' })).rejects.toThrow(/external cluster: pause of broker\(s\) 0, 1: external\.pause for broker 1 .* exited 1/);
    expect(lines()).toEqual(['pause 0', 'pause 1', 'resume 0', 'resume 1']);
    // Nothing left in force: stop() has nothing to heal.
    await c.stop();
    expect(lines()).toHaveLength(4);
    expect(c.ownDelivery('move-leader')).toBeNull();
  });

  it('heals a partition still in force at stop(), with the {from} its start used although the ISR changed since', async () => {
    rmSync(log('runs'), { force: true });
    const c = new ExternalCluster(spec({ partition: note('cut', -1, ' {from}'), heal: note('heal', -1, ' {from}') }), 't', md([0, 1, 2]), work, () => undefined);
    const fault = { kind: 'partition', target: 'leader', when: { at: 1 }, duration: 5, from: 'followers' } as unknown as Fault;
    const cut = await c.ownDelivery('partition')!.deliver([0], fault, { topic: 't' });
    expect(cut.brokerIds).toEqual([0]);
    // The followers left the ISR (the cut's effect): a {from} resolved now would be empty.
    (c as unknown as { md: unknown }).md = md([0]);
    await c.stop();
    expect(lines()).toEqual(['cut 0 10.9.0.2 10.9.0.3', 'heal 0 10.9.0.2 10.9.0.3']);
    // A second heal (the schedule's, after stop's) runs again and is the template's to make idempotent.
    await c.ownDelivery('partition')!.heal!([0], fault, { topic: 't' });
    expect(lines()).toHaveLength(3);
  });
});
