// For the external target's ssh test: an sshd (Debian's openssh-server) in every node of a lab
// network, each listening on its node's address only, as the hosts of "your own cluster". One
// generated config, host key and client key pair per test in a temp dir; root login by that key
// only, no PAM, no password. Each sshd runs in its node's namespace through lab.argvIn (killed
// with the test process), and stop() kills them and waits. Sessions run in the node's network
// namespace (the sshd's), with the host's pid namespace and file system.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'vitest';
import { execa, type ResultPromise } from 'execa';
import { missingRequirement } from '../../../test/requirements.ts';
import type { LabNetwork } from '../../net/lab-network.ts';
import { findExecutable } from '../../vm/prerequisites.ts';

export const SSHD = '/usr/sbin/sshd';
const SSH_PORT = 22;

/** Skips (fails under CI) without sshd, ssh and ssh-keygen: the packages that have them. */
export function requireSsh(ctx: TestContext): void {
  const missing = [existsSync(SSHD) ? null : `${SSHD} (package openssh-server)`, ...['ssh', 'ssh-keygen'].map((t) => (findExecutable(t) ? null : `${t} (package openssh-client)`))].filter(Boolean);
  if (missing.length) missingRequirement(ctx, `the external target's ssh test needs ${missing.join(', ')}`);
}

export interface LabSshd {
  /** The client's private key (ssh -i). */
  key: string;
  /** ssh options every template uses: the key, no host key prompts or records, no agent, batch mode. */
  sshArgs: string[];
  pids: number[];
  stop(): Promise<void>;
}

/** Starts an sshd in each node of `lab` on <node address>:22; resolves when every one answers a command. */
export async function startLabSshd(lab: LabNetwork): Promise<LabSshd> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durolab-sshd-'));
  const key = path.join(dir, 'client_key');
  const hostKey = path.join(dir, 'host_key');
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'durolab-test-client', '-f', key]);
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'durolab-test-host', '-f', hostKey]);
  const authorized = path.join(dir, 'authorized_keys');
  writeFileSync(authorized, await execa('cat', [`${key}.pub`]).then((r) => `${r.stdout}\n`), { mode: 0o600 });
  // sshd's privilege separation needs this empty directory (the Debian service creates it at boot).
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const children: ResultPromise[] = [];
  const stop = async () => {
    for (const c of children) c.kill('SIGKILL');
    await Promise.allSettled(children);
    rmSync(dir, { recursive: true, force: true });
  };
  const sshArgs = ['-i', key, '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes', '-o', 'IdentitiesOnly=yes', '-o', 'LogLevel=ERROR', '-o', 'ConnectTimeout=5'];
  try {
    for (const n of lab.nodes) {
      const config = path.join(dir, `sshd_config.node${n.index}`);
      writeFileSync(
        config,
        [
          `ListenAddress ${n.address}:${SSH_PORT}`,
          `HostKey ${hostKey}`,
          'PidFile none',
          'UsePAM no',
          'PermitRootLogin prohibit-password',
          'PubkeyAuthentication yes',
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          `AuthorizedKeysFile ${authorized}`,
          'StrictModes no',
          'LogLevel ERROR',
          '',
        ].join('\n'),
      );
      const [file, argv] = lab.argvIn(n.index, SSHD, ['-D', '-e', '-f', config, '-h', hostKey]);
      const child = execa(file, argv, { reject: false, stdin: 'ignore', all: true });
      children.push(child);
    }
    await Promise.all(lab.nodes.map((n, i) => waitForSsh(sshArgs, n.address, children[i]!)));
  } catch (err) {
    await stop();
    throw err;
  }
  return { key, sshArgs, pids: children.map((c) => c.pid!), stop };
}

async function waitForSsh(sshArgs: string[], address: string, sshd: ResultPromise): Promise<void> {
  const end = Date.now() + 15_000;
  let last = '';
  for (;;) {
    if (sshd.exitCode !== null) throw new Error(`sshd on ${address} exited (${sshd.exitCode}) before answering: ${String((await sshd).all ?? '')}`);
    const r = await execa('ssh', [...sshArgs, `root@${address}`, 'true'], { reject: false, stdin: 'ignore', timeout: 10_000 });
    if (r.exitCode === 0) return;
    last = String(r.stderr);
    if (Date.now() > end) throw new Error(`sshd on ${address}: no login within 15 s: ${last}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}
