// The host tools the lab network drives (ip and tc from iproute2, nft from nftables), how a
// missing one is named (with the Debian package that has it), and how they are run: async for
// the harness's own steps, synchronous for the exit hook, where no async work is possible.
import { spawnSync } from 'node:child_process';
import { execa } from 'execa';
import { findExecutable } from '../vm/prerequisites.ts';

const PACKAGE_OF: Record<string, string> = { ip: 'iproute2', tc: 'iproute2', nft: 'nftables' };

/** What the lab network needs that this machine lacks (the apt package that has it), or null. */
export function labNetworkPrerequisiteProblem(): string | null {
  const missing: string[] = [];
  for (const [tool, pkg] of Object.entries(PACKAGE_OF)) if (!findExecutable(tool)) missing.push(`${tool} (package ${pkg})`);
  if (process.getuid?.() !== 0) missing.push('root (network namespaces, veth pairs, nft and tc)');
  return missing.length ? `the lab network (one network namespace per node) needs ${missing.join(', ')}` : null;
}

/** Absolute path of ip, tc or nft; throws naming the package when it is missing. */
export function netTool(name: 'ip' | 'tc' | 'nft'): string {
  const p = findExecutable(name);
  if (!p) throw new Error(`${name} not found on PATH: the lab network needs it; install it with: apt-get install -y ${PACKAGE_OF[name]}`);
  return p;
}

export interface ToolResult {
  ok: boolean;
  output: string;
}

/** Runs a tool (stdin optional); never throws for a failing exit, the caller decides. */
export async function runTool(file: string, args: string[], input?: string): Promise<ToolResult> {
  const r = await execa(file, args, { reject: false, timeout: 30_000, all: true, ...(input === undefined ? { stdin: 'ignore' as const } : { input }) });
  return { ok: r.exitCode === 0, output: String(r.all ?? '').trim() };
}

export function runToolSync(file: string, args: string[], input?: string): ToolResult {
  const r = spawnSync(file, args, { encoding: 'utf8', timeout: 30_000, ...(input === undefined ? { stdio: ['ignore', 'pipe', 'pipe'] } : { input }) });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

/** Runs a tool and throws with `what`, the command and its output when it fails. */
export async function mustRun(what: string, file: string, args: string[], input?: string): Promise<string> {
  const r = await runTool(file, args, input);
  if (!r.ok) throw new Error(`${what}: ${file} ${args.join(' ')} failed: ${r.output}${input ? `\n--- its input:\n${input}` : ''}`);
  return r.output;
}

/** argv that runs `nft -f -` inside a network namespace. */
export function nftInArgv(netns: string): [string, string[]] {
  return [netTool('ip'), ['netns', 'exec', netns, netTool('nft'), '-f', '-']];
}

/** An nft script applied atomically inside a namespace; throws with the script when it fails. */
export async function nftIn(netns: string, script: string, what: string): Promise<void> {
  const [file, args] = nftInArgv(netns);
  await mustRun(what, file, args, script);
}
