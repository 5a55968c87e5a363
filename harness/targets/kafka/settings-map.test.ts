// The kafka target's settings mapping and its refusals at `scenario check` (no JVM needed).
import { describe, expect, it } from 'vitest';
import { compileScenario } from '../../scenario/index.ts';
import { scenarioRefusal } from '../../scenario/scenario-test-helpers.ts';
import { resolveSettings } from '../../model/settings.ts';
import { kafkaBrokerConfigs, kafkaTopicConfigs } from './settings-map.ts';

const compile = (text: string) => compileScenario(text, 'k.yaml', { defaultName: 'k' });

const problems = (text: string): string => scenarioRefusal(compile, text).message;

describe('target: kafka settings', () => {
  it('maps flush policies to flush.messages / flush.ms and the registry settings to topic configs', () => {
    expect(kafkaTopicConfigs(resolveSettings({ flush: 'per-batch' }, 1))['flush.messages']).toBe('1');
    expect(kafkaTopicConfigs(resolveSettings({ flush: 'messages:1000' }, 1))['flush.messages']).toBe('1000');
    const ms = resolveSettings({ flush: 'ms:100' }, 2);
    expect(kafkaTopicConfigs(ms)['flush.ms']).toBe('100');
    expect(kafkaBrokerConfigs(ms)['log.flush.scheduler.interval.ms']).toBe('10');
    const never = kafkaTopicConfigs(resolveSettings({ flush: 'never', 'segment.bytes': 2 * 1024 * 1024, 'message.max.bytes': 4096 }, 2));
    expect(never['flush.messages']).toBeUndefined();
    expect(never['flush.ms']).toBeUndefined();
    expect(never['segment.bytes']).toBe(String(2 * 1024 * 1024));
    expect(never['max.message.bytes']).toBe('4096');
    expect(never['min.insync.replicas']).toBe('2');
    expect(kafkaBrokerConfigs(resolveSettings({ 'replica.lag.time.max.ms': 5000 }, 1))['replica.lag.time.max.ms']).toBe('5000');
  });

  it('refuses io: direct, sync: fdatasync and a segment.bytes below 1 MiB with the reason, naming the place', () => {
    const text = `question: q
target: kafka
settings:
  sync: fdatasync
matrix:
  io: [buffered, direct]
  segment.bytes: [64KiB, 1GiB]
`;
    const msg = problems(text);
    expect(msg).toMatch(/k\.yaml:4:\d+ settings\.sync: expected a setting target: kafka can honour \(sync: fdatasync has no Apache Kafka equivalent/);
    expect(msg).toMatch(/matrix\.io\[1\]: expected .*io: direct has no Apache Kafka equivalent/);
    expect(msg).toMatch(/matrix\.segment\.bytes\[0\]: expected .*below Apache Kafka 4's minimum of 1048576/);
  });

  it('picks the kafka driver on target: kafka, refuses the http driver there, and takes workload.producer', () => {
    const s = compile(`question: q
target: kafka
settings: { flush: per-batch }
workload:
  producer: { acks: all, enable.idempotence: true, max.in.flight: 1 }
`);
    expect(s.workload.driver).toBe('kafka');
    expect(s.settings.acks).toBe('all');
    expect(s.workload.producer?.['enable.idempotence']).toBe(true);
    expect(problems(`question: q\ntarget: kafka\nworkload: { driver: http }\n`)).toMatch(/workload\.driver: expected a driver target: kafka can talk to \(kafka\)/);
    expect(problems(`question: q\nworkload: { producer: { retries: 1 } }\n`)).toMatch(/workload\.producer: expected no producer: block unless workload\.driver is kafka/);
    expect(problems(`question: q\ntarget: kafka\nworkload: { producer: { linger.ms: 5 } }\n`)).toMatch(/linger\.ms.*expected 0/);
    expect(problems(`question: q\ntarget: kafka\nworkload: { recordBytes: 1KiB, recordsPerBatch: 64, producer: { batch.size: 16384 } }\n`)).toMatch(/batch\.size: expected at least \d+ bytes/);
  });
});
