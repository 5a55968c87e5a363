// target: external against real Apache Kafka processes this test starts itself (start scripts
// that background a KRaft JVM and write its PID), with fault commands that kill them by PID and
// restart them: the whole bench path (check, target, kafka driver, fault, after-fault checker).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { ScenarioError, compileScenario } from '../../scenario/index.ts';
import { runScenario } from '../../runner/run-scenario.ts';
import { loadTarget } from '../registry.ts';
import { scenarioWants } from '../../faults/scenario-wants.ts';
import { isAlive } from '../../vm/process-registry.ts';
import { metadataFromAny } from '../../drivers/kafka/wire.ts';
import { resolveSettings } from '../../model/settings.ts';
import { freePort } from '../../../engine/common/free-port.ts';
import { KAFKA_JVM_MARKER, formatNode, jvmFlags, randomClusterId, writeNodeFiles, type KafkaNodeSpec } from '../kafka/kafka-node.ts';
import { kafkaBrokerConfigs } from '../kafka/settings-map.ts';
import { requireKafka } from '../kafka/kafka-requirements.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-external-'));
const pidFile = (id: number) => path.join(work, `broker-${id}.pid`);

function killAll(): void {
  for (const id of [0, 1, 2]) {
    if (!existsSync(pidFile(id))) continue;
    const pid = Number(readFileSync(pidFile(id), 'utf8'));
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
}
afterAll(() => {
  killAll();
  rmSync(work, { recursive: true, force: true });
});

describe('target: external', () => {
  it('refuses a process-kill scenario without kill/restart commands at check time', () => {
    const text = `question: q
target: external
external: { bootstrap: ["127.0.0.1:9092"] }
faults:
  - { kind: process-kill, target: leader, when: { at: 2s } }
`;
    expect(() => compileScenario(text, 'ext.yaml', { defaultName: 'ext' })).toThrow(ScenarioError);
    expect(() => compileScenario(text, 'ext.yaml', { defaultName: 'ext' })).toThrow(/faults\[0\]\.kind: expected external\.kill and external\.restart \(argv templates\) for a process-kill fault on target: external \(it runs kill, restart\), found no kill, restart template/);
    expect(() => compileScenario('question: q\ntarget: external\n', 'ext.yaml', { defaultName: 'ext' })).toThrow(/target: expected an external: block with bootstrap/);
  });

  it('runs a scenario with a process kill against Kafka processes it did not start, through kill/restart commands', async (ctx) => {
    const install = await requireKafka(ctx);
    // The "user's cluster": one KRaft JVM started by a script, as a service manager would.
    const node: KafkaNodeSpec = { id: 0, dir: path.join(work, 'node-0'), dataDir: path.join(work, 'node-0', 'data'), logPath: path.join(work, 'node-0.log'), port: await freePort(), controllerPort: await freePort() };
    const files = writeNodeFiles(node, [node], kafkaBrokerConfigs(resolveSettings({}, 1)));
    await formatNode(install, node, files.config, files.log4j, randomClusterId());
    const startScript = path.join(work, 'start-broker.sh');
    const java = [install.java, ...jvmFlags(1), `${KAFKA_JVM_MARKER}${work}`, `-Dlog4j2.configurationFile=${files.log4j}`, '-cp', `'${install.libsDir}/*'`, 'kafka.Kafka', files.config].join(' ');
    writeFileSync(startScript, `#!/bin/sh\n# started by external-target.test.ts: broker $1\nnohup ${java} >> ${node.logPath} 2>&1 &\necho $! > ${work}/broker-$1.pid\n`, { mode: 0o755 });
    await execa('sh', [startScript, '0']);
    const bootstrap = `127.0.0.1:${node.port}`;
    const end = Date.now() + 60_000;
    while (!(await metadataFromAny([bootstrap], null, 1000).catch(() => null))?.brokers.length) {
      if (Date.now() > end) throw new Error(`the test's Kafka did not come up: ${readFileSync(node.logPath, 'utf8').slice(-1500)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const firstPid = Number(readFileSync(pidFile(0), 'utf8'));

    const file = path.join(work, 'external.yaml');
    writeFileSync(
      file,
      `question: Does a process kill on a cluster the lab did not start lose acknowledged records?
target: external
external:
  bootstrap: ["${bootstrap}"]
  kill: ["sh", "-c", "kill -KILL $(cat ${work}/broker-{id}.pid)"]
  restart: ["sh", "${startScript}", "{id}"]
cluster: { brokers: 1, topic: ext, partitions: 1, replicationFactor: 1 }
settings: { acks: all, flush: never }
workload: { recordBytes: 512, recordsPerBatch: 8, connections: 2, warmup: 0s, duration: 6s }
faults:
  - { kind: process-kill, target: all, when: { afterAcked: 1000 } }
expectations:
  - ackedLost == 0 in every trial
`,
    );
    const scenario = compileScenario(readFileSync(file, 'utf8'), file, { defaultName: 'external' });
    const target = await loadTarget(scenario.target, { scenario, wants: scenarioWants(scenario), log: () => undefined });
    const lines: string[] = [];
    const out = await runScenario({ scenario, target, resultsDir: path.join(work, 'results'), allowHostSysctl: false, signal: new AbortController().signal, log: (l) => lines.push(l) });
    const cell = out.run.cells[0]!;
    expect(cell.status, lines.join('\n')).toBe('ok');
    expect(out.run.targetInfo?.engine).toBe('external Kafka cluster');
    const trial = cell.trials![0]!;
    expect(trial.fault, lines.join('\n')).toBeDefined();
    // The kill command really killed the JVM the test started, and restart started another.
    expect(isAlive(firstPid)).toBe(false);
    expect(isAlive(Number(readFileSync(pidFile(0), 'utf8')))).toBe(true);
    expect(trial.ledger.acked).toBeGreaterThanOrEqual(1000);
    expect(trial.ledger.ackedLost).toBe(0);
    expect(trial.ledger.corrupt).toBe(0);
    expect(out.run.expectations[0]!.state, out.run.expectations[0]!.detail).toBe('pass');
  }, 240_000);
});
