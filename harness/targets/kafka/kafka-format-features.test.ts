// eligible.leader.replicas on Apache Kafka: the setting becomes the eligible.leader.replicas.version
// feature of `kafka-storage format --feature` (settings-map.ts kafkaFeatureLevels), checked here
// on what Kafka's own format tool writes into the node's bootstrap metadata. (The controller's
// behaviour under each level is Kafka's; the isr-shrink-power-cut scenario measures it.)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveSettings } from '../../model/settings.ts';
import { formatNode, randomClusterId, writeNodeFiles, type KafkaNodeSpec } from './kafka-node.ts';
import { requireKafka } from './kafka-requirements.ts';
import { externalSettingRefusal, kafkaBrokerConfigs, kafkaFeatureLevels } from './settings-map.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-kafka-features-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('target: kafka, eligible.leader.replicas', () => {
  it('maps to eligible.leader.replicas.version 1 (the default, as Kafka 4.4 formats) or 0; an external cluster refuses it', () => {
    expect(kafkaFeatureLevels(resolveSettings({}, 2))).toEqual({ 'eligible.leader.replicas.version': 1 });
    expect(kafkaFeatureLevels(resolveSettings({ 'eligible.leader.replicas': false }, 2))).toEqual({ 'eligible.leader.replicas.version': 0 });
    expect(externalSettingRefusal('eligible.leader.replicas', false)).toMatch(/eligible.leader.replicas.version feature .* which the lab does not change/);
  });

  it("kafka-storage format writes the level the setting asks (level 0: no record, Kafka's off)", async (ctx) => {
    const install = await requireKafka(ctx);
    for (const elr of [true, false]) {
      const settings = resolveSettings({ 'eligible.leader.replicas': elr }, 2);
      const dir = path.join(work, `elr-${elr}`);
      const node: KafkaNodeSpec = { id: 1, dir, dataDir: path.join(dir, 'data'), logPath: path.join(dir, 'node.log'), port: 1, controllerPort: 2 };
      const files = writeNodeFiles(node, [node], kafkaBrokerConfigs(settings));
      const written = await formatNode(install, node, files.config, files.log4j, randomClusterId(), kafkaFeatureLevels(settings));
      expect(written['metadata.version']).toBeGreaterThan(0);
      expect(written['eligible.leader.replicas.version'] ?? 0).toBe(elr ? 1 : 0);
    }
  });
});
