// nats-server for target: nats, at the version Jepsen's NATS analysis tested (v2.12.1), built by
// `make nats` (scripts/install-nats.sh: `go install` from the Go module proxy) into the cache
// `make kafka` uses: ~/.cache/durolab/nats-server-<version>/bin/nats-server, or under
// $DUROLAB_CACHE. The target refuses a missing binary or another version (Debian's 2.9 has no
// sync_interval, the setting the lab's flush maps to) with the command to run.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

export const NATS_SERVER_VERSION = '2.12.1';

export function natsServerPath(version = NATS_SERVER_VERSION): string {
  const base = process.env.DUROLAB_CACHE ?? path.join(os.homedir(), '.cache', 'durolab');
  return path.join(base, `nats-server-${version}`, 'bin', 'nats-server');
}

export interface NatsInstall {
  binary: string;
  version: string;
}

/** Why target: nats cannot run here (no binary, or not the pinned version), or null. */
export async function natsInstallProblem(binary = natsServerPath()): Promise<string | null> {
  const missing = `nats-server missing or not v${NATS_SERVER_VERSION}: run \`make nats\``;
  if (!existsSync(binary)) return `${missing} (no ${binary})`;
  const r = await execa(binary, ['--version'], { reject: false, timeout: 10_000 });
  const line = String(r.stdout).trim();
  if (line !== `nats-server: v${NATS_SERVER_VERSION}`) return `${missing} (${binary} --version answered ${JSON.stringify(line || String(r.stderr).trim())})`;
  return null;
}

/** The pinned nats-server, or an error naming the command to run. */
export async function ensureNats(binary = natsServerPath()): Promise<NatsInstall> {
  const problem = await natsInstallProblem(binary);
  if (problem) throw new Error(problem);
  return { binary, version: NATS_SERVER_VERSION };
}
