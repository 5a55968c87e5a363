// target: nats refuses a missing nats-server or another version with the command to run.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireNats } from '../../../test/requirements.ts';
import { ensureNats, natsInstallProblem, natsServerPath } from './install.ts';
import { natsTarget } from './nats-target.ts';
import { resolveSettings } from '../../model/settings.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-nats-install-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('nats-server install', () => {
  it('names `make nats` when the binary is missing or answers another version', async () => {
    const missing = path.join(work, 'none', 'nats-server');
    expect(await natsInstallProblem(missing)).toBe(`nats-server missing or not v2.12.1: run \`make nats\` (no ${missing})`);
    const old = path.join(work, 'nats-server-2.9');
    writeFileSync(old, '#!/bin/sh\necho "nats-server: v2.9.10"\n');
    chmodSync(old, 0o755);
    expect(await natsInstallProblem(old)).toBe(`nats-server missing or not v2.12.1: run \`make nats\` (${old} --version answered "nats-server: v2.9.10")`);
    // The target refuses to start a cluster on it, with the same words.
    const start = natsTarget({ binary: old }).start({ cluster: { brokers: 1, topic: 't', partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 }, settings: resolveSettings({}, 1), workDir: work });
    await expect(start).rejects.toThrow(/nats-server missing or not v2\.12\.1: run `make nats`/);
  });

  it('takes the binary `make nats` cached under ~/.cache/durolab (or $DUROLAB_CACHE)', async (ctx) => {
    await requireNats(ctx);
    expect(natsServerPath()).toMatch(/nats-server-2\.12\.1\/bin\/nats-server$/);
    expect(await ensureNats()).toEqual({ binary: natsServerPath(), version: '2.12.1' });
  });
});
