// Running one of the scenario's command templates (harness/model/external-spec.ts) for one broker: filled in,
// run without a shell of ours (execa, argv as given), under external.commandTimeoutSec, stdin
// closed, stdout and stderr kept apart and quoted in the error when it exits non-zero, times out
// or cannot start. And the one refusal no scenario can lift: a powerCut template aimed at a host
// on this machine (loopback, an address of this host, or the lab network's 198.18.0.0/15, whose
// namespaces live here) would crash the kernel the harness runs on, so it is never run.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import os from 'node:os';
import { execa } from 'execa';
import { fillArgv, type ExternalSpec, type TemplateName, type TemplateValues } from '../../model/external-spec.ts';

export interface TemplateRun {
  argv: string[];
  stdout: string;
  stderr: string;
  ms: number;
}

const tail = (s: string) => (s.length > 600 ? `...${s.slice(-600)}` : s);

/** Runs `external.<name>` for one broker; throws naming the template, the broker, the argv, the exit and both streams. */
export async function runTemplate(spec: ExternalSpec, name: TemplateName, values: TemplateValues): Promise<TemplateRun> {
  const template = spec[name];
  if (!template) throw new Error(`external.${name}: no such template in the scenario (broker ${values.id})`);
  const argv = fillArgv(template, values);
  if (name === 'powerCut') await refusePowerCutHere(values.host);
  const t0 = Date.now();
  const r = await execa(argv[0]!, argv.slice(1), { reject: false, timeout: spec.commandTimeoutSec * 1000, stdin: 'ignore', stripFinalNewline: true });
  const out = { argv, stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), ms: Date.now() - t0 };
  if (r.exitCode === 0 && !r.timedOut) return out;
  const how = r.timedOut ? `timed out after ${spec.commandTimeoutSec} s (external.commandTimeoutSec)` : r.exitCode === undefined ? `could not run (${r.signal ?? r.message})` : `exited ${r.exitCode}`;
  throw new Error(`external.${name} for broker ${values.id} (${JSON.stringify(argv)}) ${how}; stdout: ${tail(out.stdout) || '(empty)'}; stderr: ${tail(out.stderr) || '(empty)'}`);
}

/** 198.18.0.0/15: the lab network's range (harness/net/lab-names.ts); its namespaces are on this machine. */
function inLabRange(ip: string): boolean {
  const m = /^198\.(18|19)\.\d+\.\d+$/.exec(ip);
  return m !== null;
}

/** Why `ip` is this machine, or null. */
function thisMachine(ip: string): string | null {
  if (/^127\./.test(ip) || ip === '::1' || ip === '0.0.0.0' || ip === '::') return 'a loopback address';
  if (inLabRange(ip)) return "in the lab network's 198.18.0.0/15 (its namespaces share this machine's kernel)";
  for (const addrs of Object.values(os.networkInterfaces())) for (const a of addrs ?? []) if (a.address === ip) return `an address of this host (${a.address})`;
  return null;
}

/** Throws when `host` (a name or an address) is this machine: an OS crash there is the harness's own. */
export async function refusePowerCutHere(host: string): Promise<void> {
  const ips = isIP(host) ? [host] : await lookup(host, { all: true }).then((r) => r.map((a) => a.address), () => []);
  for (const ip of ips) {
    const why = thisMachine(ip);
    if (why) throw new Error(`external.powerCut for host ${host}: refused, ${ip} is ${why}; an OS crash there would take down the machine the harness runs on`);
  }
}
