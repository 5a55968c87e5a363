// Settings parsing: files, flags, and errors that name the file, line and key.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseListen } from './broker-command.ts';
import { applySetFlags, brokerSettings, controllerSettings, loadRawSettings, parseJsonSettings, parseProperties, parseTopicSpec } from './config.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('broker settings', () => {
  it('reads Kafka-style .properties, then --set overrides, into log and broker settings', () => {
    const file = path.join(dir, 'broker.properties');
    writeFileSync(file, ['# comment', 'io=dsync', 'flush = messages:100', 'segment.bytes=1048576', '! other comment', '', 'min.insync.replicas: 2', 'unclean.leader.election.enable=true'].join('\n'));
    const raw = loadRawSettings(file, ['flush=per-batch', 'replica.lag.time.max.ms=1000']);
    const b = brokerSettings(raw);
    expect(b.log).toEqual({ io: 'dsync', flush: { kind: 'per-batch' }, segmentBytes: 1048576, maxBatchBytes: 1048588 });
    expect(b.minInsyncReplicas).toBe(2);
    expect(b.replicaLagTimeMaxMs).toBe(1000);
    expect(b.replicaFetchWaitMaxMs).toBe(500);
    expect(b.heartbeatIntervalMs).toBe(100);
    expect(controllerSettings(raw)).toMatchObject({ uncleanLeaderElection: true, sessionTimeoutMs: 1500 });
  });

  it('reads flat or nested JSON', () => {
    const raw = parseJsonSettings(JSON.stringify({ message: { max: { bytes: 65536 } }, 'flush.ms': 50, sync: 'fsync' }), 'b.json');
    const b = brokerSettings(raw);
    expect(b.messageMaxBytes).toBe(65536);
    expect(b.log).toMatchObject({ maxBatchBytes: 65536, flush: { kind: 'ms', every: 50 }, sync: 'fsync' });
  });

  it('names the file, line and key of a bad setting', () => {
    expect(() => parseProperties('io=buffered\nsegmnt.bytes=5', 'x.properties')).toThrow(/x\.properties:2 \(segmnt\.bytes\): unknown setting 'segmnt\.bytes'/);
    expect(() => brokerSettings(parseProperties('min.insync.replicas=two', 'y.properties'))).toThrow(/y\.properties:1 \(min\.insync\.replicas\): expected an integer/);
    expect(() => brokerSettings(applySetFlags(['io=mmap']))).toThrow(/--set io=mmap: expected buffered\|direct\|dsync, got 'mmap'/);
    expect(() => brokerSettings(applySetFlags(['flush=sometimes']))).toThrow(/--set flush=sometimes: .*per-batch/);
    expect(() => applySetFlags(['noequals'])).toThrow(/--set noequals: expected key=value/);
    expect(() => parseProperties('just words', 'z.properties')).toThrow(/z\.properties:1: expected key=value/);
    expect(() => loadRawSettings(path.join(dir, 'missing.properties'), [])).toThrow(/--config .*missing\.properties: cannot read/);
  });

  it('fetch.max.bytes and max.connections: Kafka names, documented defaults, bounds named in errors', () => {
    const defaults = brokerSettings(applySetFlags([]));
    expect(defaults.fetchMaxBytes).toBe(52_428_800);
    expect(defaults.maxConnections).toBe(1000);
    const b = brokerSettings(applySetFlags(['fetch.max.bytes=65536', 'max.connections=20']));
    expect([b.fetchMaxBytes, b.maxConnections]).toEqual([65536, 20]);
    expect(() => brokerSettings(applySetFlags(['fetch.max.bytes=100']))).toThrow(/--set fetch\.max\.bytes=100: expected a size from 1KiB to 1GiB .*got '100'/);
    expect(() => brokerSettings(applySetFlags(['max.connections=0']))).toThrow(/--set max\.connections=0: expected an integer from 1 to 1000000, got '0'/);
    expect(() => brokerSettings(parseProperties('max.connections=many', 'c.properties'))).toThrow(/c\.properties:1 \(max\.connections\): expected an integer/);
  });

  it('a negative integer setting parses from text where its range allows one (kafka.port=-1: no Kafka listener)', () => {
    expect(brokerSettings(applySetFlags(['kafka.port=-1'])).kafkaPort).toBe(-1);
    expect(brokerSettings(parseProperties('kafka.port = -1', 'c.properties')).kafkaPort).toBe(-1);
    expect(() => brokerSettings(applySetFlags(['kafka.port=-2']))).toThrow(/--set kafka\.port=-2: expected an integer from -1 to 65535, got '-2'/);
    expect(() => brokerSettings(applySetFlags(['max.connections=-5']))).toThrow(/--set max\.connections=-5: expected an integer from 1 to 1000000, got '-5'/);
  });

  it('parses --topic and --listen', () => {
    expect(parseTopicSpec('orders:3', false)).toEqual({ name: 'orders', partitions: 3, replicationFactor: 1 });
    expect(parseTopicSpec('orders:3:2', true)).toEqual({ name: 'orders', partitions: 3, replicationFactor: 2 });
    expect(() => parseTopicSpec('orders:3:2', false)).toThrow(/expected NAME:PARTITIONS/);
    expect(() => parseTopicSpec('bad/name:1', true)).toThrow(/topic names/);
    expect(() => parseTopicSpec('t:0', true)).toThrow(/PARTITIONS/);
    expect(parseListen('127.0.0.1:9092')).toEqual({ host: '127.0.0.1', port: 9092 });
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseListen('9093')).toEqual({ host: '127.0.0.1', port: 9093 });
    expect(() => parseListen('localhost')).toThrow(/expected HOST:PORT/);
    expect(() => parseListen('h:70000')).toThrow(/port must be/);
  });
});
