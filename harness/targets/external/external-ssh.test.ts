// target: external over ssh, for real: three Kafka 4.4 nodes the kafka target starts in lab
// network namespaces stand in for "your own cluster", each namespace with its own sshd (Debian's
// openssh-server) on the node's address. An external scenario points at their bootstrap
// addresses; its templates ssh in as root with a test key and pause a broker's JVM (kill -STOP /
// -CONT of the pid pgrep finds in the node's network namespace, narrowed by the node's config
// path: the namespaces share the host's pid namespace) and partition another (nft rules on the
// node dropping traffic with {from}, deleted at heal), while an acks=all load runs. Watched from
// outside while it runs: the JVM's /proc state and the node's nft tables. Afterwards nothing is
// left: no stopped JVM, no rule, no sshd, no namespace. Last, a process kill of a third broker over
// ssh, and its restart over ssh (its JVM's command line, started from the sshd's session: in the
// node's namespace), before the check. Nothing is routed outside the machine:
// every address is in the lab's 198.18.0.0/15 namespaces. The powerCut template (sysrq) is never
// run here: external-templates.test.ts renders it and shows the refusal for a host on this machine.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { compileScenario } from '../../scenario/index.ts';
import { runScenario } from '../../runner/run-scenario.ts';
import { loadTarget } from '../registry.ts';
import { scenarioWants } from '../../faults/scenario-wants.ts';
import { resolveSettings } from '../../model/settings.ts';
import { isAlive } from '../../vm/process-registry.ts';
import { stoppedProcesses } from '../../faults/pause.ts';
import { requireLabNetwork } from '../../net/net-test-helpers.ts';
import { namespacesLeft, netnsInodeOfName, netnsInodeOfPid } from '../lab-cluster-test-helpers.ts';
import { requireKafka } from '../kafka/kafka-requirements.ts';
import { startKafkaCluster } from '../kafka/kafka-target.ts';
import { requireSsh, startLabSshd } from './sshd-lab-test-helpers.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-external-ssh-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The test's nft table on a partitioned node (the lab's own is `inet durolab`). */
const TABLE = 'ext_cut';

/** Samples, every 100 ms until stopped: which broker JVMs are stopped (state T) and which nodes hold the test's nft table. */
function watch(pids: Map<number, number>, netns: Map<number, string>) {
  const stopped = new Set<number>();
  const cut = new Set<number>();
  let on = true;
  const loop = (async () => {
    while (on) {
      for (const id of stoppedProcesses([...pids.values()]).map((pid) => [...pids].find(([, p]) => p === pid)![0])) stopped.add(id);
      for (const [id, ns] of netns) {
        const r = await execa('ip', ['netns', 'exec', ns, 'nft', 'list', 'tables'], { reject: false });
        if (r.stdout.includes(`inet ${TABLE}`)) cut.add(id);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stopped,
    cut,
    stop: async () => {
      on = false;
      await loop;
    },
  };
}

describe('target: external over ssh (sshd in lab namespaces)', () => {
  it('pauses, partitions, kills and restarts brokers of a cluster it did not start through ssh templates, heals, loses nothing, leaves nothing', async (ctx) => {
    requireLabNetwork(ctx);
    requireSsh(ctx);
    const install = await requireKafka(ctx);
    const kafkaDir = path.join(work, 'kafka');
    const cluster = await startKafkaCluster(install, {
      cluster: { brokers: 3, topic: 'seed', partitions: 1, replicationFactor: 3, minInsyncReplicas: 2, network: 'namespaces' },
      settings: resolveSettings({ 'replica.lag.time.max.ms': 3000 }, 2),
      workDir: kafkaDir,
      log: (line) => console.log(line),
    });
    const net = cluster.labNetwork()!;
    const netnsNames = net.lab.nodes.map((n) => n.netns);
    const sshd = await startLabSshd(net.lab).catch(async (err: Error) => {
      await cluster.stop();
      throw err;
    });
    const pids = new Map(cluster.brokers.map((b) => [b.id, b.pid!]));
    const nodeNetns = new Map(cluster.brokers.map((b) => [b.id, net.lab.nodes[net.links[b.id]!.node]!.netns]));
    // What restart runs on node 0's host: its JVM's command line as the kafka target started it.
    const argv0 = readFileSync(`/proc/${pids.get(0)}/cmdline`, 'utf8').split('\0').filter(Boolean);
    writeFileSync(path.join(work, 'start-0.sh'), `exec ${argv0.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ')}\n`);
    const restarted = () => (existsSync(path.join(work, 'restarted-0')) ? Number(readFileSync(path.join(work, 'restarted-0'), 'utf8')) : null);
    try {
      // Remote commands run in the node's network namespace (the sshd's) and the host's pid
      // namespace: pgrep is narrowed to that network namespace and to the node's config file.
      const ssh = ['ssh', ...sshd.sshArgs, 'root@{host}'];
      const jvm = `pgrep --ns $$ --nslist net -f 'kafka[.]Kafka ${kafkaDir}/broker-{id}/server.properties'`;
      const q = (argv: string[]) => JSON.stringify(argv);
      const file = path.join(work, 'external-ssh.yaml');
      // The kill lands 5 s after the heal: a loaded CI run killed 1 s after it, while acks=all still waited on the healed broker, and the
      // lab rightly called that trial suspect (no ack in the last second before the cut), leaving the expectation NOT EVALUATED.
      const yaml = `question: Do a pause and a partition delivered over ssh to a cluster the lab did not start lose acknowledged records?
target: external
external:
  bootstrap: ${q(cluster.brokers.map((b) => b.kafka!))}
  pause: ${q([...ssh, `pid=$(${jvm}) && kill -STOP $pid && echo $pid > ${work}/paused-{id}`])}
  resume: ${q([...ssh, `kill -CONT $(${jvm})`])}
  partition: ${q([...ssh, `nft add table inet ${TABLE} && nft add chain inet ${TABLE} in '{ type filter hook input priority 0; }' && nft add chain inet ${TABLE} out '{ type filter hook output priority 0; }' && for a in {from}; do nft add rule inet ${TABLE} in ip saddr $a drop && nft add rule inet ${TABLE} out ip daddr $a drop; done && nft list table inet ${TABLE} > ${work}/partition-{id}.nft`])}
  heal: ${q([...ssh, `if nft list table inet ${TABLE} >/dev/null 2>&1; then nft delete table inet ${TABLE}; fi`])}
  kill: ${q([...ssh, `kill -KILL $(${jvm})`])}
  restart: ${q([...ssh, `nohup sh ${work}/start-{id}.sh > ${kafkaDir}/restarted-{id}.log 2>&1 < /dev/null & echo $! > ${work}/restarted-{id}`])}
  commandTimeoutSec: 20
cluster: { brokers: 3, topic: ext, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 }
settings: { acks: all, flush: never }
workload: { recordBytes: 512, recordsPerBatch: 8, connections: 2, warmup: 0s, duration: 19s }
faults:
  - { kind: pause, target: 1, when: { at: 2s }, duration: 2s }
  - { kind: partition, target: 2, from: rest, when: { at: 5s }, duration: 6s }
  - { kind: process-kill, target: 0, when: { at: 16s } }
expectations:
  - ackedLost == 0 in every trial
`;
      writeFileSync(file, yaml);
      const scenario = compileScenario(yaml, file, { defaultName: 'external-ssh' });
      const lines: string[] = [];
      const target = await loadTarget(scenario.target, { scenario, wants: scenarioWants(scenario), log: (l) => lines.push(l) });
      const watcher = watch(pids, nodeNetns);
      const t0 = Date.now();
      const out = await runScenario({ scenario, target, resultsDir: path.join(work, 'results'), allowHostSysctl: false, signal: new AbortController().signal, log: (l) => lines.push(l) }).finally(() => watcher.stop());
      console.log(`external over ssh: scenario ran in ${Date.now() - t0} ms\n${lines.join('\n')}`);
      const cell = out.run.cells[0]!;
      expect(cell.status, lines.join('\n')).toBe('ok');
      const trial = cell.trials![0]!;
      // Both entries started and healed, in order, through the templates.
      const schedule = trial.schedule!;
      expect(schedule.map((e) => [e.kind, e.targets, e.startMs !== null, typeof e.healMs === 'number'])).toEqual([
        ['pause', [1], true, true],
        ['partition', [2], true, true],
        ['process-kill', [0], true, false],
      ]);
      // The kill took broker 0's JVM down; restart started another in its node's namespace, which served the check.
      expect(isAlive(pids.get(0)!)).toBe(false);
      expect(restarted()).not.toBeNull();
      expect(isAlive(restarted()!)).toBe(true);
      expect(netnsInodeOfPid(restarted()!)).toBe(netnsInodeOfName(nodeNetns.get(0)!));
      // The pause stopped broker 1's own JVM (the pid the kafka target started), and only it.
      expect(Number(readFileSync(path.join(work, 'paused-1'), 'utf8'))).toBe(pids.get(1));
      expect([...watcher.stopped]).toEqual([1]);
      // The partition's rules on broker 2's node dropped exactly the other two nodes' addresses.
      const rules = readFileSync(path.join(work, 'partition-2.nft'), 'utf8');
      const addr = (id: number) => net.lab.nodes[net.links[id]!.node]!.address;
      for (const other of [0, 1]) {
        expect(rules).toContain(`ip saddr ${addr(other)} drop`);
        expect(rules).toContain(`ip daddr ${addr(other)} drop`);
      }
      expect(rules).not.toContain(addr(2));
      expect([...watcher.cut]).toEqual([2]);
      // The cut was real: broker 2 left partition 0's ISR (a follower past replica.lag.time.max.ms 3 s; the leader checks every 1.5 s),
      // or lost its leadership (a leader fenced past the 3 s session), or, where a loaded machine let neither happen within the cut,
      // the HW stood still for most of it (acks=all waiting on a replica it could not reach).
      const led = trial.isr!.filter((s) => s.partition === 0);
      const partition = trial.schedule!.find((e) => e.kind === 'partition')!;
      const shrankOrMoved = led.some((s) => (s.isr !== null && !s.isr.includes(2)) || (s.leader !== null && s.leader !== 2 && led[0]!.leader === 2));
      expect(shrankOrMoved || trial.hwLongestStillMs! >= 3000, `${JSON.stringify(led)}; HW still up to ${trial.hwLongestStillMs} ms; partition ${partition.startMs}-${partition.healMs} ms`).toBe(true);
      expect(trial.ledger.acked).toBeGreaterThan(1000);
      expect(trial.ledger.ackedLost).toBe(0);
      expect(out.run.expectations[0]!.state, `${out.run.expectations[0]!.detail}; trial note: ${trial.note ?? 'none'}`).toBe('pass');
      // Nothing left in force: no JVM stopped, no rule on any node.
      expect(stoppedProcesses([...pids.values(), restarted()])).toEqual([]);
      for (const ns of netnsNames) expect((await execa('ip', ['netns', 'exec', ns, 'nft', 'list', 'tables'])).stdout).not.toContain(TABLE);
    } finally {
      await sshd.stop();
      const again = restarted();
      if (again !== null && isAlive(again)) process.kill(again, 'SIGKILL');
      await cluster.stop();
    }
    expect(sshd.pids.filter(isAlive)).toEqual([]);
    expect([...pids.values(), restarted()].filter((p) => p !== null && isAlive(p))).toEqual([]);
    expect(await namespacesLeft(netnsNames)).toEqual([]);
    expect(existsSync(path.join(work, 'paused-0'))).toBe(false);
  }, 150_000);
});
