// One truth for bounds: every value of a registry setting that `durolab scenario check`
// accepts is accepted by the broker's config, the controller's and the log's, at both bounds;
// one step past a bound is refused by both. And a real Log opens with every log setting at
// its lowest and at its highest bound.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SCENARIO_SETTINGS, isServerSetting, type Setting, type SettingValue } from '../../engine/settings/index.ts';
import { applySetFlags, brokerSettings, controllerSettings } from '../../engine/server/config.ts';
import { Log, resolveLogConfig } from '../../engine/storage/index.ts';
import { brokerSetFlags } from '../targets/types.ts';
import { ScenarioError, cellSettings, compileScenario, logConfig } from './index.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-settings-bounds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The largest cluster a scenario may ask for: min.insync.replicas above it is refused by a cross-field rule (at most the replication factor), not by its bound. */
const BROKERS = 9;

/** The scenario text `durolab scenario check` reads, with one base setting. */
function scenarioWith(settings: Record<string, SettingValue>): string {
  const lines = Object.entries(settings).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`);
  return `question: q\ncluster: { brokers: ${BROKERS}, replicationFactor: ${BROKERS}, minInsyncReplicas: 1 }\nsettings:\n${lines.join('\n')}\n`;
}

/** Settings refused only because they exceed another field (min.insync.replicas > replicationFactor). */
let crossFieldRefusals = 0;

function scenarioAccepts(settings: Record<string, SettingValue>) {
  try {
    const s = compileScenario(scenarioWith(settings), 'bounds.yaml', { defaultName: 'bounds' });
    return cellSettings(s, s.matrix[0]);
  } catch (e) {
    if (!(e instanceof ScenarioError)) throw e;
    if (e.issues.every((i) => /at most the replication factor/.test(i.expected))) crossFieldRefusals++;
    return null;
  }
}

/** What the broker and the controller make of a cell's settings; throws what a broker would print at start. */
function startServer(settings: Record<string, SettingValue>) {
  const resolved = scenarioAccepts(settings);
  if (!resolved) return null;
  const raw = applySetFlags(brokerSetFlags(resolved));
  return { resolved, broker: brokerSettings(raw), controller: controllerSettings(raw), log: resolveLogConfig(logConfig(resolved)) };
}

function edges(s: Setting): { inside: SettingValue[]; outside: SettingValue[] } {
  const b = s.type.bounds;
  if (b) return { inside: [b.min, b.max], outside: [b.min - 1, b.max + 1].filter((n) => n >= 0 && Number.isSafeInteger(n)) };
  return { inside: [...(s.type.choices ?? [])], outside: [] };
}

const serverScenarioSettings = SCENARIO_SETTINGS.filter(isServerSetting);

describe('settings registry bounds', () => {
  it('covers every scenario setting a broker reads', () => {
    expect(serverScenarioSettings.map((s) => s.name)).toEqual(
      expect.arrayContaining(['io', 'flush', 'sync', 'segment.bytes', 'segment.ms', 'segment.index.bytes', 'index.interval.bytes', 'message.max.bytes', 'min.insync.replicas', 'replica.lag.time.max.ms', 'unclean.leader.election.enable']),
    );
    for (const s of serverScenarioSettings) expect(edges(s).inside.length, s.name).toBeGreaterThan(0);
  });

  it.each(serverScenarioSettings.map((s) => [s.name, s] as const))('%s: both bounds pass scenario check and broker start; one past them fails both', (name, s) => {
    const { inside, outside } = edges(s);
    for (const v of inside) {
      const before = crossFieldRefusals;
      const started = startServer({ [name]: v });
      if (started === null && crossFieldRefusals > before && v !== inside[0]) continue;
      expect(started, `${name}=${String(v)} refused by scenario check`).not.toBeNull();
      expect(started?.resolved.values[name]).toBe(s.type.parse(v));
    }
    for (const v of outside) {
      expect(scenarioAccepts({ [name]: v }), `${name}=${v} accepted by scenario check`).toBeNull();
      expect(() => brokerSettings(applySetFlags([`${name}=${v}`])), `${name}=${v} accepted by the broker`).toThrow(new RegExp(`--set ${name.replaceAll('.', '\\.')}=${v}: expected`));
    }
  });

  it('all settings at their lowest, then at their highest bound, together: the broker starts and a real Log opens', () => {
    for (const end of ['min', 'max'] as const) {
      const values = Object.fromEntries(serverScenarioSettings.map((s) => [s.name, s.type.bounds ? s.type.bounds[end] : (s.type.choices as SettingValue[])[0]]));
      values['min.insync.replicas'] = end === 'min' ? 1 : BROKERS;
      const started = startServer(values);
      expect(started, `scenario check refused the ${end} bounds`).not.toBeNull();
      if (!started) continue;
      expect(started.broker.log.segmentBytes).toBe(values['segment.bytes']);
      expect(started.broker.messageMaxBytes).toBe(values['message.max.bytes']);
      const log = Log.open(path.join(dir, end), started.log);
      expect(log.logEndOffset).toBe(0);
      log.close();
    }
  });
});
