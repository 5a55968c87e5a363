#!/usr/bin/env node
// The CLI is bundled by scripts/build.mjs (run by `npm ci` through `prepare`, and by make).
// durolab runs on the Node of .node-version (Node 24, which `make` installs into
// ~/.cache/durolab) with V8's young generation at Node 20's size (YOUNG_GENERATION). Without that
// setting it replaces itself (process.execve: the same process, so a PID the lab kills or waits
// for stays the CLI's) with a run that has it in NODE_OPTIONS, which the brokers it starts
// inherit. Started by an older node, it runs itself under the installed Node 24 (a child process:
// Node 20 has no execve), or says how to get one. Its syntax is old enough (Node 14.8 on) for
// that message to get out.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

/**
 * Node 24's V8 sizes the young generation larger than Node 20's (16 MiB semi-spaces): on this
 * lab's 2-core machine that cost the http driver's load generator 0.6x records/s and 4-5x p99 in
 * io-modes' buffered cell (median of 3: 216,000 against 319,000 records/s with 16 MiB, 356,000 on
 * Node 20; 32 MiB measured like the default). docs/getting-started.md says so.
 */
const YOUNG_GENERATION = '--max-semi-space-size=16';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const wanted = readFileSync(path.join(root, '.node-version'), 'utf8').trim();
const major = (v) => Number(v.split('.')[0]);
const nodeOptions = process.env.NODE_OPTIONS || '';
const tooOld = major(process.versions.node) < major(wanted);
const youngSet = /--max-semi-space-size\b/.test(nodeOptions) || process.execArgv.some((a) => a.startsWith('--max-semi-space-size'));

if (tooOld || !youngSet) {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const cache = process.env.DUROLAB_CACHE || path.join(os.homedir(), '.cache/durolab');
  const node = tooOld ? path.join(cache, `node-v${wanted}`, 'node_modules', `node-linux-${arch}`, 'bin', 'node') : process.execPath;
  if (!existsSync(node)) {
    console.error(`durolab needs Node ${major(wanted)} (.node-version: ${wanted}); this is Node ${process.versions.node}. Run \`make node\` (installs Node ${wanted} from the npm registry into ${path.dirname(node)}), or put a Node ${major(wanted)} first on PATH.`);
    process.exit(2);
  }
  const env = { ...process.env, NODE_OPTIONS: youngSet ? nodeOptions : `${nodeOptions} ${YOUNG_GENERATION}`.trim() };
  const args = [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)];
  if (typeof process.execve === 'function') process.execve(node, [node, ...args], env);
  const child = spawn(node, args, { stdio: 'inherit', env });
  // Ctrl-C reaches the child from the terminal itself (it stops its brokers, VMs and disks): wait
  // for it. A SIGTERM or SIGHUP sent to this process alone is passed on.
  process.on('SIGINT', () => {});
  for (const sig of ['SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('error', (err) => {
    console.error(`durolab: could not start ${node}: ${err.message}`);
    process.exit(2);
  });
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0)));
} else {
  const bundle = path.join(root, 'dist/durolab.mjs');
  if (!existsSync(bundle)) {
    const { buildCli } = await import(pathToFileURL(path.join(root, 'scripts/build.mjs')).href);
    await buildCli();
  }
  await import(pathToFileURL(bundle).href);
}
