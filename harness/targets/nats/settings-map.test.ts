// target: nats's settings mapping, its config files and its refusals at `scenario check` (no nats-server needed).
import { describe, expect, it } from 'vitest';
import { compileScenario } from '../../scenario/index.ts';
import { scenarioRefusal } from '../../scenario/scenario-test-helpers.ts';
import { resolveSettings } from '../../model/settings.ts';
import { natsSettingRefusal, natsStreamLimits, natsSyncInterval } from './settings-map.ts';
import { natsNodeConfig, type NatsNodeSpec } from './nats-node.ts';

const compile = (text: string) => compileScenario(text, 'n.yaml', { defaultName: 'n' });

const problems = (text: string): string => scenarioRefusal(compile, text).message;

const node = (id: number): NatsNodeSpec => ({ id, dir: `/w/b${id}`, storeDir: `/w/b${id}/data`, logPath: `/w/b${id}.log`, host: '127.0.0.1', port: 4000 + id, routePort: 5000 + id, httpPort: 6000 + id });

describe('target: nats settings', () => {
  it('maps flush never to the default sync_interval (unset), ms:T to T and per-batch to always; message.max.bytes to max_msg_size', () => {
    expect(natsSyncInterval(resolveSettings({ flush: 'never' }, 1).flush)).toBeNull();
    expect(natsSyncInterval(resolveSettings({ flush: 'ms:10000' }, 1).flush)).toBe('10000ms');
    expect(natsSyncInterval(resolveSettings({ flush: 'per-batch' }, 1).flush)).toBe('always');
    expect(natsStreamLimits(resolveSettings({ 'message.max.bytes': 4096 }, 1))).toEqual({ max_msg_size: 4096 });
  });

  it('writes a cluster block with routes to every node for 3 nodes, none for 1, and sync_interval only when set', () => {
    const three = [0, 1, 2].map(node);
    const c = natsNodeConfig(three[1]!, three, 'always');
    expect(c).toContain('server_name: n1');
    expect(c).toContain('listen: "127.0.0.1:4001"');
    expect(c).toContain('store_dir: "/w/b1/data"');
    expect(c).toContain('sync_interval: always');
    expect(c).toContain('routes: ["nats-route://127.0.0.1:5000", "nats-route://127.0.0.1:5001", "nats-route://127.0.0.1:5002"]');
    const one = natsNodeConfig(node(0), [node(0)], null);
    expect(one).not.toContain('cluster {');
    expect(one).not.toContain('sync_interval');
    expect(natsNodeConfig(node(0), [node(0)], '10000ms')).toContain('sync_interval: "10000ms"');
  });

  it('refuses settings with no NATS meaning, naming the setting and why', () => {
    expect(natsSettingRefusal('io', 'direct')).toMatch(/^io: direct has no NATS JetStream equivalent/);
    expect(natsSettingRefusal('flush', 'messages:1000')).toMatch(/never a message count/);
    expect(natsSettingRefusal('acks', 1)).toMatch(/PubAck/);
    expect(natsSettingRefusal('segment.bytes', 1 << 20)).toMatch(/^segment\.bytes has no NATS JetStream equivalent/);
    expect(natsSettingRefusal('flush', 'per-batch')).toBeNull();
    expect(natsSettingRefusal('sync', 'fsync')).toBeNull();
    expect(natsSettingRefusal('vm.disk.model', 'volatile-cache')).toBeNull();
  });

  it('scenario check: io: direct and segment.bytes on target nats are refused at their place; the nats driver is its default and only one; partitions 1', () => {
    const msg = problems(`question: q
target: nats
settings:
  io: direct
matrix:
  segment.bytes: [1MiB]
workload: { driver: nats }
`);
    expect(msg).toMatch(/n\.yaml:4:\d+ settings\.io: expected a setting target: nats can honour \(io: direct has no NATS JetStream equivalent/);
    expect(msg).toMatch(/matrix\.segment\.bytes\[0\]: expected .*segment\.bytes has no NATS JetStream equivalent/);
    expect(problems(`question: q\ntarget: nats\nworkload: { driver: kafka }\n`)).toMatch(/workload\.driver: expected a driver target: nats can talk to \(nats\)/);
    expect(problems(`question: q\ntarget: nats\ncluster: { brokers: 3, partitions: 4, replicationFactor: 3 }\nworkload: { driver: nats }\n`)).toMatch(/one JetStream stream/);
    const ok = compile(`question: q\ntarget: nats\nsettings: { flush: per-batch, sync: fsync }\n`);
    expect(ok.workload.driver).toBe('nats');
  });
});
