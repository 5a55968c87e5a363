// `durolab bench-broker`: produce throughput and latency of one broker over HTTP for acks
// 0/1/all at RF 1 and RF 3, next to a null node:http server (reads the body, answers a small
// JSON) measured the same way in the same run: the ratio to it is the number to read, since
// the load generator and the brokers share this machine's cores.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { execa } from 'execa';
import * as hdr from 'hdr-histogram-js';
import { summarizeLatency } from '../common/latency.ts';
import { repoRoot } from '../common/repo-root.ts';
import { encodeBatch } from '../records/index.ts';
import { checkOutFile, intFlag, parseCommandFlags } from '../common/flags.ts';
import { prepareDataDir } from './broker-command.ts';
import { applySetFlags, brokerSettings } from './config.ts';
import { dirtyKiB, dropFromPageCache, leaderSnapshot, ResponseTimeline, waitReplicated, writeBack, type LeaderSnapshot } from './bench-broker-probe.ts';
import { fmt, goals, loadAvg1, machineTailLine, medianRow, runLine, table, throughputRatio, THROUGHPUT_GOAL, type Row } from './bench-broker-report.ts';
import { startCluster, type Cluster } from './cluster.ts';
import { RECORD_BATCH_TYPE } from './http-util.ts';

const HELP = `usage: durolab bench-broker [options]

Drives one broker with autocannon (binary RecordBatch bodies) for acks 0/1/all at RF 1 and
RF 3, and a null node:http server the same way (also with 1 connection: the machine's own
single-connection tail, beside the broker's 1-connection rows), then prints req/s, records/s,
MB/s and latency p50/p99/p99.9 in microseconds and writes the table as JSON.

options:
  --duration S        seconds per measured run (default 3; each run has a 1 s warm-up, and one
                      unrecorded null-server run warms the load generator up first)
  --rounds N          runs per broker configuration, interleaved; the table shows medians
                      (default 3). Each acks=1 RF 1 run has a null-server run back to back
                      (before it in even rounds, after it in odd ones): the throughput goal is
                      the median of these pairs' ratios, since the host's speed drifts
  --connections N     concurrent connections (default 32); acks=1/all also run with 1
                      connection to show the latency acks=all adds without queueing
  --record-bytes B    value size per record (default 1024)
  --batch N           records per batch / request (default 16)
  --dir D             broker data root (default: a temporary directory, removed afterwards)
  --out FILE          JSON results (default results/broker/latest.json)
  --set KEY=VALUE     broker setting for every broker (repeatable), e.g. --set flush=per-batch
  --no-settle         start each run at once: without waiting until the previous run's records
                      are replicated (its followers' catch-up then lands in the next run's tail)
                      and without writing back the page cache's dirty pages first (sync -f on
                      the data directory's filesystem; otherwise earlier runs' GBs cross the
                      kernel's background threshold and their writeback competes with later
                      runs for the cores, so rows would measure their place in the run), and
                      without dropping each finished run's partition files from the page cache
                      (written back first; no run reads them again): on a VM that hands freed
                      memory back to its host, as this lab's does, fresh pages cost ~15-25 µs
                      each to fault in, so a page cache that only grows slows every later run
`;

interface LoadOptions {
  url: string;
  body: Buffer;
  connections: number;
  durationS: number;
  recordsPerRequest: number;
  /** Broker runs: the leader to probe, and whether to wait for replication before warm-up and run. */
  leader?: { url: string; topic: string; settle: boolean };
  /** Write back this directory's filesystem right before the measured part (null: --no-settle). */
  writeBackDir: string | null;
}

async function load(name: string, target: Row['target'], rf: number | null, acks: string | null, o: LoadOptions): Promise<Row> {
  const common = {
    url: o.url,
    method: 'POST' as const,
    connections: o.connections,
    headers: { 'content-type': RECORD_BATCH_TYPE },
    body: o.body,
    timeout: 30,
  };
  const lead = o.leader;
  let settleMs = 0;
  if (lead?.settle) settleMs += await waitReplicated(lead.url, lead.topic, 0);
  await autocannon({ ...common, duration: 1 }); // warm-up: JIT, connection setup, page cache
  if (lead?.settle) settleMs += await waitReplicated(lead.url, lead.topic, 0);
  const writeBackMs = o.writeBackDir === null ? null : await writeBack(o.writeBackDir);
  const dirtyAtStart = dirtyKiB();
  const before: LeaderSnapshot | null = lead ? await leaderSnapshot(lead.url, lead.topic, 0, true) : null;
  const timeline = new ResponseTimeline();
  const hist = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
  // Without a callback autocannon returns its instance, which is both an EventEmitter and thenable.
  const instance = autocannon({ ...common, duration: o.durationS }) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
  let ok = 0;
  const t0 = performance.now();
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTimeMs: number) => {
    const us = Math.max(1, Math.round(responseTimeMs * 1000));
    hist.recordValue(us);
    timeline.add(performance.now() - t0, us);
    if (statusCode >= 200 && statusCode < 300) ok++;
  });
  const r = await instance;
  const dirtyAtEnd = dirtyKiB();
  const after: LeaderSnapshot | null = lead ? await leaderSnapshot(lead.url, lead.topic, 0) : null;
  const seconds = r.duration;
  const row: Row = {
    name,
    target,
    connections: o.connections,
    rf,
    acks,
    durationS: Math.round(seconds * 100) / 100,
    requests: ok,
    reqPerSec: Math.round(ok / seconds),
    recordsPerSec: Math.round((ok * o.recordsPerRequest) / seconds),
    mbPerSec: Math.round(((ok * o.body.length) / seconds / 1e6) * 10) / 10,
    latencyUs: summarizeLatency(hist),
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    loadAvg1: loadAvg1(),
    writeBackMs,
    dirtyKiB: dirtyAtStart === null || dirtyAtEnd === null ? null : { start: dirtyAtStart, end: dirtyAtEnd },
  };
  row.slow = timeline.slow(5 * row.latencyUs.p99);
  if (before && after) {
    row.settleMs = settleMs;
    row.leader = {
      eventLoopMaxUs: after.eventLoopDelay.maxUs,
      eventLoopP99Us: after.eventLoopDelay.p99Us,
      rolls: after.rolls - before.rolls,
      rollMaxUs: after.rollMaxUs,
      flushes: after.flushes - before.flushes,
    };
  }
  hist.destroy();
  return row;
}

const NULL_SERVER = `
import http from 'node:http';
const server = http.createServer({ keepAliveTimeout: 30000 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const text = JSON.stringify({ baseOffset: 0, lastOffset: 15, logAppendTimeMs: Date.now(), hw: body.length });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ event: 'ready', url: 'http://127.0.0.1:' + server.address().port })));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

async function withNullServer<T>(fn: (url: string) => Promise<T>): Promise<T> {
  const proc = execa(process.execPath, ['--input-type=module', '-e', NULL_SERVER], { stdin: 'ignore', stderr: 'inherit', buffer: false, reject: false, cleanup: true, forceKillAfterDelay: 2000 });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let buf = '';
      proc.stdout!.on('data', (c: Buffer) => {
        buf += c.toString();
        const m = /"url":"([^"]+)"/.exec(buf);
        if (m) resolve(m[1]);
      });
      void proc.then(() => reject(new Error('null server exited before it was ready')));
    });
    return await fn(url);
  } finally {
    proc.kill('SIGTERM');
    await proc;
  }
}

export async function main(argv: string[]): Promise<number> {
  const values = parseCommandFlags(
    'bench-broker',
    argv,
    {
      duration: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      'record-bytes': { type: 'string' },
      batch: { type: 'string' },
      dir: { type: 'string' },
      out: { type: 'string' },
      set: { type: 'string', multiple: true, default: [] },
      'no-settle': { type: 'boolean', default: false },
    },
    HELP,
  )?.values;
  if (!values) return 0;
  const durationS = intFlag('--duration', values.duration, 3, 1, 3600);
  const rounds = intFlag('--rounds', values.rounds, 3, 1, 100);
  const connections = intFlag('--connections', values.connections, 32, 1, 10_000);
  const recordBytes = intFlag('--record-bytes', values['record-bytes'], 1024, 1, 1 << 20);
  const perBatch = intFlag('--batch', values.batch, 16, 1, 10_000);
  const out = checkOutFile('--out', values.out ?? path.join(repoRoot(), 'results', 'broker', 'latest.json'));
  // Checked now, as the brokers would check them: not after the first runs.
  brokerSettings(applySetFlags(values.set!));
  const settle = !values['no-settle'];
  const ownDir = !values.dir;
  const root = values.dir ? prepareDataDir(values.dir, '--dir') : mkdtempSync(path.join(os.tmpdir(), 'durolab-bench-broker-'));

  const value = Buffer.alloc(recordBytes, 0x61);
  const body = encodeBatch({ records: Array.from({ length: perBatch }, (_, i) => ({ key: Buffer.from(`k${i}`), value })) });
  const lo = { body, connections, durationS, recordsPerRequest: perBatch, writeBackDir: settle ? root : null };
  const runs: Row[] = [];
  const loadStart = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const say = (m: string): void => void process.stderr.write(`[bench-broker] ${m}\n`);
  say(`${perBatch} x ${recordBytes} B records per request (${body.length} B bodies), ${connections} connections, ${durationS} s per run (+1 s warm-up), ${rounds} rounds`);

  // Runs are interleaved (acks 0/1/all, then again) and the null server is measured before,
  // between and after the clusters, so drift from other load on the machine spreads evenly;
  // the table shows the median of each configuration.
  try {
    await withNullServer(async (nullUrl) => {
      // Each time at full load and with one connection: the single-connection broker rows'
      // tail is judged beside the null server's own single-connection tail (the load generator
      // and the machine add one to anything).
      const nullRun = async (when: string): Promise<void> => {
        for (const conns of [connections, 1]) {
          const row = await load(`null server${conns === connections ? '' : ', 1 connection'} (${when})`, 'null', null, null, { ...lo, connections: conns, url: nullUrl });
          runs.push(row);
          say(`${row.name}: ${runLine(row)}`);
        }
      };
      // One unrecorded run first: the first measured run of a process otherwise also measures
      // autocannon's own JIT warm-up (the "before" null run came out 2-2.5x below the later
      // ones in three runs alone on this machine), which lowered the null median and flattered
      // the broker's ratio.
      const warm = await load('warm-up (not recorded)', 'null', null, null, { ...lo, url: nullUrl });
      say(`${warm.name}: ${runLine(warm)}`);
      await nullRun('before');
      for (const rf of [1, 3]) {
        const dir = path.join(root, `rf${rf}`);
        mkdirSync(dir, { recursive: true });
        let cluster: Cluster | null = null;
        try {
          const c = (cluster = await startCluster({ brokers: rf, dir, port: 0, set: values.set }));
          // Each run produces to a partition of its own, so every run starts from the same
          // state (an empty log, no followers behind) and none inherits a segment roll
          // (1 GiB by default) from the bytes its predecessors wrote.
          let topics = 0;
          const runOn = async (acks: string, conns: number): Promise<Row> => {
            const topic = `bench-${++topics}`;
            await c.createTopic({ name: topic, partitions: 1, replicationFactor: rf });
            await c.waitForLeaders();
            const leader = c.leaderOf(topic, 0);
            if (!leader) throw new Error(`bench-broker: topic ${topic} has no leader at RF ${rf}`);
            const url = `${leader.url}/v1/topics/${topic}/partitions/0/records?acks=${acks}`;
            const name = `broker RF ${rf} acks=${acks}${conns === connections ? '' : `, ${conns} connection${conns === 1 ? '' : 's'}`}`;
            const row = await load(name, 'broker', rf, acks, { ...lo, connections: conns, url, leader: { url: leader.url, topic, settle } });
            if (settle) {
              await waitReplicated(leader.url, topic, 0);
              row.droppedMs = await dropFromPageCache(c.brokers.map((b) => path.join(b.dataDir, `${topic}-0`)));
            }
            return row;
          };
          for (let round = 1; round <= rounds; round++) {
            for (const acks of ['0', '1', 'all']) {
              // The throughput goal's runs get a null-server run back to back, before and after
              // in turn: the pair shares the host's speed of that minute.
              const paired = rf === 1 && acks === '1';
              const pairedNull = async (): Promise<number> => {
                const n = await load(`null server (paired with RF 1 acks=1, round ${round})`, 'null', null, null, { ...lo, url: nullUrl });
                runs.push(n);
                say(`${n.name}: ${runLine(n)}`);
                return n.reqPerSec;
              };
              const nullBefore = paired && round % 2 === 0 ? await pairedNull() : null;
              const row = await runOn(acks, connections);
              runs.push(row);
              if (paired) row.pairedNullReqPerSec = nullBefore ?? (await pairedNull());
              say(`${row.name} (round ${round}): ${runLine(row)}${paired ? `; paired null server ${fmt(row.pairedNullReqPerSec!)} req/s` : ''}`);
            }
          }
          // Saturated, latency is mostly queueing (connections / throughput); one connection
          // shows what acks=all itself adds: the followers' fetch round trips.
          for (const acks of ['1', 'all']) {
            const row = await runOn(acks, 1);
            runs.push(row);
            say(`${row.name}: ${runLine(row)}`);
          }
        } finally {
          await cluster?.stop();
          rmSync(dir, { recursive: true, force: true });
        }
        await nullRun(rf === 1 ? 'between' : 'after');
      }
    });
  } finally {
    if (ownDir) rmSync(root, { recursive: true, force: true });
  }
  const rows: Row[] = [medianRow('null server', runs.filter((r) => r.target === 'null' && r.connections === connections))];
  const nullOne = medianRow('null server, 1 connection', runs.filter((r) => r.target === 'null' && r.connections === 1));
  for (const rf of [1, 3]) {
    for (const acks of ['0', '1', 'all']) {
      rows.push(medianRow(`broker RF ${rf} acks=${acks}`, runs.filter((r) => r.rf === rf && r.acks === acks && r.connections === connections)));
    }
  }
  rows.push(nullOne);
  for (const rf of [1, 3]) {
    for (const acks of ['1', 'all']) rows.push(medianRow(`broker RF ${rf} acks=${acks}, 1 connection`, runs.filter((r) => r.rf === rf && r.acks === acks && r.connections === 1)));
  }

  const find = (rf: number, acks: string, conns = connections): Row => rows.find((r) => r.rf === rf && r.acks === acks && r.connections === conns)!;
  const nullReq = rows[0].reqPerSec;
  const a1 = find(1, '1');
  const a1rf3 = find(3, '1');
  const allRf3 = find(3, 'all');
  const a1rf3one = find(3, '1', 1);
  const allRf3one = find(3, 'all', 1);
  const a1rf1one = find(1, '1', 1);
  const round = (x: number): number => Math.round(x * 1000) / 1000;
  const overhead = (x: Row, base: Row) => ({
    p50Us: x.latencyUs.p50 - base.latencyUs.p50,
    p99Us: x.latencyUs.p99 - base.latencyUs.p99,
    p50Ratio: round(x.latencyUs.p50 / base.latencyUs.p50),
    p99Ratio: round(x.latencyUs.p99 / base.latencyUs.p99),
  });
  const a1Runs = runs.filter((r) => r.rf === 1 && r.acks === '1' && r.connections === connections);
  const a1Ratio = throughputRatio(a1Runs, a1, nullReq).ratio;
  const summary = {
    nullReqPerSec: Math.round(nullReq),
    /** The median of the back-to-back pairs' ratios. */
    acks1Rf1VsNull: round(a1Ratio),
    target: `acks=1 RF 1 >= ${THROUGHPUT_GOAL} x null server req/s`,
    targetMet: a1Ratio >= THROUGHPUT_GOAL,
    /** Issue 14 goals, judged on this run's median rows (throughput: on the back-to-back pairs). */
    goals: goals(rows, nullReq, a1Runs),
    /** One connection: the latency acks=all adds (follower fetch round trips), without queueing. */
    acksAllRf3OverAcks1Rf3: overhead(allRf3one, a1rf3one),
    acksAllRf3OverAcks1Rf1: overhead(allRf3one, a1rf1one),
    /** At full load (the configured connections): queueing dominates both. */
    saturatedAcksAllRf3OverAcks1Rf3: overhead(allRf3, a1rf3),
    saturatedAcksAllRf3OverAcks1Rf1: overhead(allRf3, a1),
  };
  const report = {
    kind: 'durolab.bench-broker',
    generatedAt: new Date().toISOString(),
    environment: {
      node: process.version,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      note: 'load generator, brokers and null server share these cores; compare ratios within one run',
      /** 1/5/15-minute load averages: other work on the machine shows here. */
      loadAverage: { start: loadStart, end: os.loadavg().map((x) => Math.round(x * 100) / 100) },
    },
    params: { durationS, rounds, connections, recordBytes, recordsPerRequest: perBatch, bodyBytes: body.length, settings: values.set },
    /** Median of the runs of each configuration. */
    rows,
    runs,
    summary,
  };
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(table(rows));
  const signed = (n: number): string => (n >= 0 ? `+${fmt(n)}` : `-${fmt(-n)}`);
  const over = (o: typeof summary.acksAllRf3OverAcks1Rf3): string => `p50 ${signed(o.p50Us)} µs (x${o.p50Ratio}), p99 ${signed(o.p99Us)} µs (x${o.p99Ratio})`;
  console.log(
    `\nnull server runs: ${runs.filter((r) => r.target === 'null' && r.connections === connections).map((r) => fmt(r.reqPerSec)).join(', ')} req/s; load average ${report.environment.loadAverage.start.join(' ')} -> ${report.environment.loadAverage.end.join(' ')}` +
      `\n\ngoals (this run, medians; load average now ${loadAvg1()}):\n${summary.goals.map((g) => `  ${g.pass ? 'PASS' : 'FAIL'}  ${g.what}: ${g.figure} (goal ${g.goal})`).join('\n')}\n  ${machineTailLine(rows[0])}\n  ${machineTailLine(nullOne)}\n` +
      `\nacks=all RF 3 over acks=1 RF 3, 1 connection: ${over(summary.acksAllRf3OverAcks1Rf3)}` +
      `\nacks=all RF 3 over acks=1 RF 1, 1 connection: ${over(summary.acksAllRf3OverAcks1Rf1)}` +
      `\nacks=all RF 3 over acks=1 RF 3, ${connections} connections: ${over(summary.saturatedAcksAllRf3OverAcks1Rf3)}` +
      `\nwritten to ${out}`,
  );
  return 0;
}
