// @confluentinc/kafka-javascript (librdkafka), loaded on demand. Its native binding is built
// from source by scripts/build-rdkafka.mjs (npm ci's prepare step); when that build failed, the
// reason is in dist/rdkafka.unavailable.txt and is what a caller is told.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { repoRootAbove } from './repo-root.ts';

export type RdkafkaModule = typeof import('@confluentinc/kafka-javascript');

let cached: { module: RdkafkaModule; reason: null } | { module: null; reason: string } | null = null;

/** The module, or null and why not (the build's recorded reason when there is one). */
export function loadRdkafka(): { module: RdkafkaModule; reason: null } | { module: null; reason: string } {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  try {
    cached = { module: require('@confluentinc/kafka-javascript') as RdkafkaModule, reason: null };
  } catch (err) {
    const root = repoRootAbove(process.cwd()) ?? repoRootAbove(path.dirname(new URL(import.meta.url).pathname));
    const why = root ? path.join(root, 'dist/rdkafka.unavailable.txt') : null;
    const built = why && fs.existsSync(why) ? `its build failed: ${fs.readFileSync(why, 'utf8').trim()}` : 'run node scripts/build-rdkafka.mjs (npm ci runs it)';
    cached = { module: null, reason: `@confluentinc/kafka-javascript (librdkafka) does not load (${(err as Error).message.split('\n')[0]}); ${built}` };
  }
  return cached;
}

/** The module; throws with the reason when it does not load. */
export function requireRdkafka(): RdkafkaModule {
  const r = loadRdkafka();
  if (!r.module) throw new Error(r.reason);
  return r.module;
}
