// The registries agree with each other and with what they load: every fault kind can be
// delivered by some target, `scenario check` refuses a kind with the target named, a loaded
// target carries the capabilities the registry declares, and a driver loads under its name.
import { describe, expect, it } from 'vitest';
import { FAULTS, FAULT_KINDS, deliverableKinds, isLasting, type FaultKind } from '../faults/registry.ts';
import { refusal } from '../faults/inject.ts';
import { DRIVERS, DRIVER_NAMES, loadDriver } from '../drivers/registry.ts';
import type { ClusterClient } from '../drivers/types.ts';
import { compileScenario, ScenarioError } from '../scenario/index.ts';
import { TARGETS, TARGET_KINDS, capabilitiesOf, loadTarget } from './registry.ts';

// target: external delivers faults through the scenario's own commands (a template for each).
const EXTERNAL = { bootstrap: ['127.0.0.1:9092'], kill: ['true'], restart: ['true'], pause: ['true'], resume: ['true'], partition: ['true'], heal: ['true'], powerCut: ['true'], commandTimeoutSec: 5 };
// A planned move needs followers to move to: 3 brokers and the leader as its target; a lasting kind its duration.
const faultScenario = (target: string, kind: string) =>
  `question: q\ntarget: ${target}\n${target === 'external' ? `external: ${JSON.stringify(EXTERNAL)}\n` : ''}${kind === 'move-leader' || kind === 'partition' ? 'cluster: { brokers: 3 }\n' : ''}faults:\n  - { kind: ${kind}, target: ${kind === 'move-leader' || kind === 'partition' ? 'leader' : 'all'}, when: { at: 2 }${kind === 'crash-states' ? ', states: 10' : ''}${kind === 'slow-link' ? ', rate: 8mbit' : ''}${kind === 'truncate-file' ? ', bytes: 1' : ''}${isLasting(kind as FaultKind) ? ', duration: 1s' : ''} }\n`;

describe('fault and target registries', () => {
  it('every fault kind is delivered by at least one target', () => {
    for (const kind of FAULT_KINDS) {
      expect(TARGET_KINDS.filter((t) => deliverableKinds(capabilitiesOf(t).faultActions).includes(kind)), kind).not.toEqual([]);
    }
  });

  it('scenario check accepts exactly the kinds a target delivers and names the target otherwise', () => {
    for (const target of TARGET_KINDS) {
      for (const kind of FAULT_KINDS) {
        const text = faultScenario(target, kind);
        const can = deliverableKinds(capabilitiesOf(target).faultActions).includes(kind);
        if (can) {
          expect(compileScenario(text, 'f.yaml', { defaultName: 'f' }).faults[0]!.kind).toBe(kind);
          expect(refusal(kind, { kind: target, capabilities: capabilitiesOf(target) })).toBeNull();
        } else {
          let err: unknown;
          try {
            compileScenario(text, 'f.yaml', { defaultName: 'f' });
          } catch (e) {
            err = e;
          }
          expect(err).toBeInstanceOf(ScenarioError);
          // Among the entry's refusals (a kind may also need what the target's driver lacks, e.g. followers the ISR read).
          const expected = (err as ScenarioError).issues.filter((i) => i.path === 'faults[0].kind').map((i) => i.expected);
          expect(expected.join(' | ')).toContain(`on target: ${target}`);
          expect(refusal(kind, { kind: target, capabilities: capabilitiesOf(target) })).toContain(`target ${target} cannot deliver fault ${kind} (it needs ${FAULTS[kind].needs})`);
        }
      }
    }
  });

  it('a loaded target carries the capabilities its registry entry declares', async () => {
    for (const kind of TARGET_KINDS) {
      const t = await loadTarget(kind, { scenario: { external: EXTERNAL }, wants: { faultDisk: false, labNetwork: false }, log: () => {} });
      expect(t.kind).toBe(kind);
      expect(t.capabilities).toBe(TARGETS[kind].capabilities);
    }
    expect(capabilitiesOf('process')).toMatchObject({ sysctls: 'host', recoveryTimeoutMs: 30_000, dataOnHost: true, guestProbes: false, watchFigures: true });
    expect(capabilitiesOf('vm')).toMatchObject({ sysctls: 'guest', recoveryTimeoutMs: 120_000, dataOnHost: false, guestProbes: true, watchFigures: false });
  });

  it('every driver in the registry loads under its name, offering exactly the methods its capabilities declare', async () => {
    // connect() opens nothing until a method is called: an unreachable address is enough to see the client's methods.
    const cluster = { brokers: [{ id: 1, url: 'http://127.0.0.1:9', dataDir: '/nonexistent', kafka: '127.0.0.1:9' }], leaderId: () => 1 };
    for (const name of DRIVER_NAMES) {
      const driver = await loadDriver(name);
      expect(driver.name).toBe(name);
      const caps = DRIVERS[name].capabilities;
      const client = driver.connect(cluster, { dataOnHost: false }) as ClusterClient;
      const offers = (m: keyof ClusterClient) => typeof client[m] === 'function';
      expect({ tail: offers('tail'), groupConsume: offers('groupMember'), replicaDigest: offers('replicaDigest'), isr: offers('inSyncReplicas'), highWatermarks: offers('highWatermarks') }, name).toEqual({
        tail: caps.tail,
        groupConsume: caps.groupConsume,
        replicaDigest: caps.replicaDigest,
        isr: caps.isr,
        highWatermarks: caps.highWatermarks,
      });
      expect(offers('readReplicaLog') && typeof driver.servedFromStored === 'function', name).toBe(caps.storedBatches);
    }
  });
});
