// Claims rules on fixture runs: supported, contradicted, depends and not measured yet are
// computed from the cells, and a malformed claims file is refused with the claim and field.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRun, powerCutRun, processRun } from '../report/test-fixtures.ts';
import { CLAIMS_FILE, evaluateClaim, evaluateClaims, loadClaims, parseClaims, type Claim } from './claims.ts';
import { claimsText, renderClaimsPage } from './claims-page.ts';

const REPO = path.resolve(import.meta.dirname, '../..');

function claim(rule: string, scenario = 'io-modes'): Claim {
  return parseClaims(`- id: c1\n  claim: A claim that is long enough.\n  source: "000"\n  scenario: ${scenario}\n  rule: ${rule}\n`, 'test.yaml')[0];
}

describe('claims rules', () => {
  const run = processRun(); // buffered 120k rec/s, per-batch 9k, O_DIRECT 30k, O_DSYNC skipped

  it('a ratio that holds is supported, with the figures that support it', () => {
    const o = evaluateClaim(claim('{ kind: ratio, figure: recordsPerSec, of: { flush: never, io: buffered }, to: { flush: per-batch }, op: ">=", value: 10 }'), run);
    expect(o.verdict).toBe('supported');
    expect(o.detail).toMatch(/^buffered, flush never 13x the records\/s of fdatasync per batch \(120,000 vs 9,000; rule: ratio >= 10\)$/);
    expect(o.run).toBe(run);
  });

  it('a ratio that does not hold is contradicted', () => {
    const o = evaluateClaim(claim('{ kind: ratio, figure: recordsPerSec, of: { io: direct }, to: { io: buffered, flush: never }, op: ">=", value: 1 }'), run);
    expect(o.verdict).toBe('contradicted');
    expect(o.detail).toContain('O_DIRECT 0.25x the records/s of buffered, flush never');
  });

  it('a skipped cell, a missing cell and a missing run are not measured yet', () => {
    expect(evaluateClaim(claim('{ kind: ratio, figure: recordsPerSec, of: { io: dsync }, to: { io: buffered, flush: never }, op: ">=", value: 1 }'), run)).toMatchObject({
      verdict: 'not measured yet',
      detail: 'O_DSYNC not measured',
    });
    expect(evaluateClaim(claim('{ kind: value, figure: ackedLost, where: { acks: all }, op: "==", value: 0 }'), run)).toMatchObject({
      verdict: 'not measured yet',
      detail: 'no cell where acks=all',
    });
    expect(evaluateClaim(claim('{ kind: value, figure: acked, where: { acks: 0 }, op: "==", value: 0 }', 'acks-all'), undefined)).toMatchObject({
      verdict: 'not measured yet',
      detail: 'no run of acks-all yet (durolab bench acks-all)',
    });
  });

  it('loss over trials: max and min aggregates, and "depends" when cases differ', () => {
    const pc = powerCutRun(); // buffered trials lose 3,100 / 2,800 / 0; per-batch trials lose 0
    const lossCases = claim(`
    kind: cases
    cases:
      - when: flush=never
        rule: { kind: value, figure: ackedLost, aggregate: max, where: { flush: never }, op: ">", value: 0 }
      - when: flush=per-batch
        rule: { kind: value, figure: ackedLost, aggregate: max, where: { flush: per-batch, acks: 1 }, op: ">", value: 0 }`, 'power-cut');
    const o = evaluateClaim(lossCases, pc);
    expect(o.verdict).toBe('depends');
    expect(o.condition).toBe('holds for flush=never; not for flush=per-batch');
    expect(o.detail).toContain('vm buffered acks=1: max acked lost 3,100');
    const min = evaluateClaim(claim('{ kind: value, figure: ackedLost, aggregate: min, where: { flush: never }, op: ">", value: 0 }', 'power-cut'), pc);
    expect(min.verdict).toBe('contradicted');
    const window = evaluateClaim(claim('{ kind: value, figure: lossWindowSec, aggregate: max, where: { flush: never }, op: "<=", value: 5 }', 'power-cut'), pc);
    expect(window).toMatchObject({ verdict: 'supported' });
    expect(window.detail).toContain('max loss window s 4.20');
  });

  it('a loss figure that holds over the checked trials is not measured while some trial left the cluster unavailable; one that fails still fails', () => {
    const pc = powerCutRun();
    const perBatch = pc.cells.find((c) => c.params.flush === 'per-batch')!;
    perBatch.unavailableTrials = [{ index: 3, fault: 'power-cut', targets: [1], cutAtSec: 3, acked: 900, ackedBeforeCut: 900, recoveryTimeoutMs: 60_000, failed: 'no leader', evidence: '/r' }];
    const safe = evaluateClaim(claim(`{ kind: value, figure: ackedLost, aggregate: max, where: { flush: per-batch }, op: "==", value: 0 }`, 'power-cut'), pc);
    expect(safe.verdict).toBe('not measured yet');
    expect(safe.detail).toContain(`but ${perBatch.id}: 1 trial(s) unavailable after the fault, not checked`);
    const never = pc.cells.find((c) => c.params.flush === 'never')!;
    never.unavailableTrials = perBatch.unavailableTrials;
    expect(evaluateClaim(claim('{ kind: value, figure: ackedLost, aggregate: max, where: { flush: never }, op: "==", value: 0 }', 'power-cut'), pc).verdict).toBe('contradicted');
    // Throughput is measured whatever the check did.
    expect(evaluateClaim(claim('{ kind: value, figure: recordsPerSec, where: { flush: per-batch }, op: ">", value: 0 }', 'power-cut'), pc).verdict).toBe('supported');
  });

  it('settings match by value, whatever their spelling (30s == 3000 centiseconds, 256KiB == 262144)', () => {
    const r = makeRun([
      { id: 'short', params: { 'vm.dirty_expire_centisecs': 100, 'segment.bytes': 262144 }, recordsPerSec: 1000, latency: { medianUs: 100, sigma: 0.1, count: 100 } },
      { id: 'default', params: { 'vm.dirty_expire_centisecs': 3000, 'segment.bytes': 1073741824 }, recordsPerSec: 500, latency: { medianUs: 100, sigma: 0.1, count: 100 } },
    ]);
    const o = evaluateClaim(claim('{ kind: ratio, figure: recordsPerSec, of: { vm.dirty_expire_centisecs: 1s, segment.bytes: 256KiB }, to: { vm.dirty_expire_centisecs: 30s }, op: "==", value: 2 }'), r);
    expect(o.verdict).toBe('supported');
  });

  it('judges the newest run of the scenario that measured something', () => {
    const older = processRun();
    const newer = { ...processRun(), runId: 'newer', cells: processRun().cells.map((c) => ({ ...c, status: 'skipped' as const })) };
    const [o] = evaluateClaims([claim('{ kind: value, figure: recordsPerSec, where: { io: direct }, op: ">", value: 0 }')], [newer, older]);
    expect(o.run).toBe(older);
  });

  it('judges a claim on Apache Kafka over the target=kafka cells of its peer scenario only', () => {
    const peer = makeRun(
      [
        { id: 'target=durolab,flush=never', params: { target: 'durolab', flush: 'never' }, recordsPerSec: 90_000, latency: { medianUs: 100, sigma: 0.1, count: 100 } },
        { id: 'target=kafka,flush=never', params: { target: 'kafka', flush: 'never' }, recordsPerSec: 40_000, latency: { medianUs: 100, sigma: 0.1, count: 100 } },
        { id: 'target=durolab,flush=messages:1', params: { target: 'durolab', flush: 'messages:1' }, recordsPerSec: 3_000, latency: { medianUs: 100, sigma: 0.1, count: 100 } },
        { id: 'target=kafka,flush=messages:1', params: { target: 'kafka', flush: 'messages:1' }, recordsPerSec: 20_000, latency: { medianUs: 100, sigma: 0.1, count: 100 } },
      ],
      { scenario: { name: 'peer-fsync-intervals', file: 'scenarios/peer-fsync-intervals.yaml', question: 'q', raw: {} } },
    );
    const c = parseClaims(
      '- id: c1\n  claim: A claim that is long enough.\n  source: "000"\n  scenario: fsync-intervals\n' +
        '  rule: { kind: ratio, figure: recordsPerSec, of: { flush: "messages:1" }, to: { flush: never }, op: "<=", value: 0.1 }\n  peers: { kafka: { scenario: peer-fsync-intervals } }\n',
      'test.yaml',
    );
    const [o] = evaluateClaims(c, [peer]);
    // durolab's own scenario has no run; Kafka's verdict comes from its cells (20k / 40k = 0.5: not a tenth).
    expect(o!.verdict).toBe('not measured yet');
    expect(o!.peers.kafka).toMatchObject({ verdict: 'contradicted', run: peer });
    expect(o!.peers.kafka!.detail).toMatch(/^target=kafka,flush=messages:1 0\.5x the records\/s of target=kafka,flush=never/);
    const html = renderClaimsPage([o!]);
    expect(html).toContain('data-kafka-verdict="contradicted"');
    // The peer column comes from the peers: map, headed by the system's name in the registry.
    expect(html).toContain('<th>Apache Kafka: scenario, verdict and figures</th>');
    expect(claimsText([o!])).toMatch(/on Apache Kafka \(peer-fsync-intervals\/20250101T120000Z-a1b2\): CONTRADICTED/);
    // A run with no kafka cells leaves Kafka unmeasured; a claim without peers: has no peer outcome (and the page no peer column).
    const durolabOnly = { ...peer, cells: peer.cells.filter((x) => x.params.target === 'durolab') };
    expect(evaluateClaims(c, [durolabOnly])[0]!.peers.kafka).toMatchObject({ verdict: 'not measured yet', detail: expect.stringMatching(/no run of peer-fsync-intervals with target=kafka cells/) });
    const alone = evaluateClaims([claim('{ kind: value, figure: acked, where: {}, op: ">", value: 1 }')], [peer]);
    expect(alone[0]!.peers).toEqual({});
    expect(renderClaimsPage(alone)).not.toContain('Apache Kafka: scenario');
  });

  it('judges a claim on NATS JetStream over a run of target nats (no target axis: the target of the run names the system)', () => {
    const cell = (flush: string, lost: number[]) => ({
      id: `flush=${flush}`,
      params: { flush },
      recordsPerSec: 9_000,
      latency: { medianUs: 100, sigma: 0.1, count: 100 },
      trials: lost.map((l, index) => ({ index, ledger: { acked: 120_000, ackedLost: l, duplicates: 0, outOfOrder: 0, corrupt: 0 } })),
    });
    const nats = makeRun([cell('never', [120_000, 111_000]), cell('ms:10000', [40_000, 0]), cell('per-batch', [0, 0])], {
      target: 'nats',
      scenario: { name: 'nats-power-cut-all', file: 'scenarios/nats-power-cut-all.yaml', question: 'q', raw: {} },
    });
    const c = parseClaims(
      '- id: c1\n  claim: A claim that is long enough.\n  source: "000"\n  scenario: power-cut-all\n' +
        '  rule: { kind: value, figure: ackedLost, aggregate: max, where: { flush: per-batch }, op: "==", value: 0 }\n  peers: { nats: { scenario: nats-power-cut-all } }\n',
      'test.yaml',
    );
    const [o] = evaluateClaims(c, [nats]);
    expect(o!.peers.nats).toMatchObject({ verdict: 'supported', run: nats });
    expect(o!.peers.nats!.detail).toBe('flush=per-batch: max acked lost 0 (rule: == 0)');
    expect(o!.peers.kafka).toBeUndefined();
    expect(renderClaimsPage([o!])).toContain('<th>NATS JetStream: scenario, verdict and figures</th>');
  });

  it('renders every outcome in the terminal and on a page with its verdict', () => {
    const outcomes = evaluateClaims(loadClaims(), [processRun()]);
    const text = claimsText(outcomes);
    for (const o of outcomes) expect(text).toContain(o.claim.id);
    const html = renderClaimsPage(outcomes, { home: 'index.html', runHref: (r) => `runs/${r.scenario.name}/${r.runId}/index.html` });
    expect(html.match(/<tr data-claim=/g)).toHaveLength(outcomes.length);
    expect(html).toContain('href="runs/io-modes/20250101T120000Z-a1b2/index.html"');
  });
});

describe('the claims file', () => {
  it('lists the claims issue 13 asks for, each naming a shipped scenario', () => {
    const claims = loadClaims(path.join(REPO, CLAIMS_FILE));
    const shipped = readdirSync(path.join(REPO, 'scenarios')).map((f) => f.replace(/\.yaml$/, ''));
    for (const c of claims) expect(shipped, c.id).toContain(c.scenario);
    // The Kafka column: each peers.kafka scenario is a shipped peer scenario (target axis with kafka).
    const withKafka = claims.filter((c) => c.peers?.kafka);
    expect(withKafka.length).toBeGreaterThanOrEqual(5);
    for (const c of withKafka) {
      expect(shipped, c.id).toContain(c.peers!.kafka!.scenario);
      expect(readFileSync(path.join(REPO, 'scenarios', `${c.peers!.kafka!.scenario}.yaml`), 'utf8'), c.id).toMatch(/target: \[durolab, kafka\]/);
    }
    // The NATS column: each peers.nats scenario is shipped and runs NATS (target nats, or a target axis with nats).
    const withNats = claims.filter((c) => c.peers?.nats);
    expect(withNats.map((c) => c.id)).toEqual(['fsync-every-write', 'unflushed-lost-on-power-cut', 'acks-all-page-cache-only', 'loss-within-predicted-window']);
    for (const c of withNats) {
      expect(shipped, c.id).toContain(c.peers!.nats!.scenario);
      expect(readFileSync(path.join(REPO, 'scenarios', `${c.peers!.nats!.scenario}.yaml`), 'utf8'), c.id).toMatch(/^target: nats$|^  target: \[.*\bnats\b.*\]$/m);
    }
    const scenarios = new Set(claims.map((c) => c.scenario));
    for (const s of ['io-modes', 'fsync-intervals', 'power-cut-io-modes', 'power-cut-all', 'power-cut-acks', 'segment-roll', 'dirty-writeback', 'power-cut-expiry', 'acks-all']) {
      expect(scenarios, s).toContain(s);
    }
  });

  it('refuses a malformed claim naming the file, the claim and the field', () => {
    expect(() => parseClaims('- id: x\n  claim: A claim that is long enough.\n  source: s\n  scenario: io-modes\n  rule: { kind: ratio, figure: speed, of: {}, to: {}, op: ">", value: 1 }\n', 'bad.yaml')).toThrow(
      /^bad\.yaml: claim 1 \(x\): rule\.figure: /,
    );
    expect(() => parseClaims('{ id: x }', 'bad.yaml')).toThrow('bad.yaml: expected a list of claims, found object');
    const one = '- id: x\n  claim: A claim that is long enough.\n  source: s\n  scenario: io-modes\n  rule: { kind: value, figure: acked, where: {}, op: ">", value: 1 }\n';
    expect(() => parseClaims(one + one, 'dup.yaml')).toThrow("dup.yaml: claim 2: id 'x' is used twice");
    // A peer is a system of the target registry besides durolab's own.
    expect(() => parseClaims(`${one}  peers: { durolab: { scenario: io-modes } }\n`, 'peer.yaml')).toThrow(/^peer\.yaml: claim 1 \(x\): peers\.durolab: .*a peer system: kafka/);
  });
});
