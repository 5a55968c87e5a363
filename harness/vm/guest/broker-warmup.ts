// A throwaway broker run inside the broker zygote (broker-zygote.ts) before the guest is saved:
// a standalone broker on a temporary directory serves a few produce, fetch, health and metrics
// requests over HTTP, then closes and its directory is removed. Compiling to bytecode (--no-lazy)
// leaves every first call to run cold in the interpreter; under TCG that cold run is most of a
// broker's start. After this, every guest resumed from the template starts its real broker
// with that code already run (inline caches filled, hot functions optimized).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeSizedBatch } from '../../../engine/cli/sized-batch.ts';
import { Broker } from '../../../engine/server/broker.ts';
import { brokerSettings, loadRawSettings } from '../../../engine/server/config.ts';
import { newKeepAliveAgent, request } from '../../../engine/server/http-client.ts';
import { RECORD_BATCH_TYPE } from '../../../engine/server/http-util.ts';

const TOPIC = 'zygote-warm-up';

/** What the warm-up did; `error` when it failed part way (the zygote goes on: a cold start is only slower). */
export interface WarmUpReport {
  ms: number;
  produced: number;
  error?: string;
}

export async function warmUpBroker(batches = 40): Promise<WarmUpReport> {
  const t0 = performance.now();
  let produced = 0;
  let dir: string | undefined;
  let broker: Broker | undefined;
  const agent = newKeepAliveAgent(2);
  try {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-zygote-warm-'));
    broker = await Broker.start({
      id: 0,
      dataDir: dir,
      host: '127.0.0.1',
      port: 0,
      topics: [{ name: TOPIC, partitions: 1 }],
      settings: brokerSettings(loadRawSettings(undefined, [])),
      log: () => {},
    });
    const records = `${broker.url}/v1/topics/${TOPIC}/partitions/0/records`;
    for (let i = 0; i < batches; i++) {
      // The harness's load: idempotent batches of 16 records of ~1 KiB, acks=1.
      const batch = encodeSizedBatch(16 * 1024, 16, { producerId: 1, producerEpoch: 0, baseSequence: i * 16 });
      const a = await request(`${records}?acks=1`, { method: 'POST', body: batch, headers: { 'content-type': RECORD_BATCH_TYPE }, agent, timeoutMs: 20_000 });
      if (a.status !== 200) throw new Error(`produce ${i}: HTTP ${a.status} ${a.body.toString('utf8').slice(0, 200)}`);
      produced++;
    }
    for (const route of [`${records}?offset=0&maxBytes=65536`, `${broker.url}/v1/health`, `${broker.url}/v1/metrics`]) {
      const a = await request(route, { agent, timeoutMs: 20_000 });
      if (a.status !== 200) throw new Error(`GET ${route}: HTTP ${a.status} ${a.body.toString('utf8').slice(0, 200)}`);
    }
    return { ms: Math.round(performance.now() - t0), produced };
  } catch (err) {
    return { ms: Math.round(performance.now() - t0), produced, error: (err as Error).message };
  } finally {
    agent.destroy();
    await broker?.close().catch(() => {});
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
}
