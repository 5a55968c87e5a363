// The scenario's `external:` block for target: external — a Kafka cluster the lab did not
// start (the path for users who outgrow one machine): its bootstrap servers, and optional
// Jepsen-style per-node fault commands as argv templates. Placeholders: {id} (broker id),
// {host} and {port} (its advertised listener, from Metadata). Without `kill`, fault
// scenarios are refused at `scenario check`. Small: the scenario schema imports it.
import * as z from 'zod';

export interface ExternalSpec {
  bootstrap: string[];
  /** Kills one broker hard (SIGKILL of its JVM), e.g. ["ssh", "{host}", "sudo", "systemctl", "kill", "-s", "KILL", "kafka"]. */
  kill?: string[];
  /** Starts it again on the same data, e.g. ["ssh", "{host}", "sudo", "systemctl", "start", "kafka"]. */
  restart?: string[];
  /** Seconds a fault command may take (default 60). */
  commandTimeoutSec: number;
}

const argv = (what: string) =>
  z
    .array(z.string().min(1), { error: `expected ${what} as an argv list of strings, e.g. ["ssh", "{host}", "sudo", "systemctl", "kill", "-s", "KILL", "kafka"]` })
    .min(1)
    .refine((a) => a.every((s) => !/\{(?!id\}|host\}|port\})[^}]*\}/.test(s)), { error: 'expected placeholders among {id}, {host}, {port} only' });

export const externalSchema = z
  .strictObject({
    bootstrap: z
      .array(z.string().regex(/^[^\s:]+:\d{1,5}$/, { error: 'expected a bootstrap server host:port' }))
      .min(1, { error: 'expected at least one bootstrap server host:port' }),
    kill: argv('the kill command').optional(),
    restart: argv('the restart command').optional(),
    commandTimeoutSec: z.number().positive().max(3600).default(60),
  })
  .superRefine((e, ctx) => {
    if ((e.kill === undefined) !== (e.restart === undefined)) {
      ctx.addIssue({ code: 'custom', path: [e.kill ? 'restart' : 'kill'], message: 'expected kill and restart together (a killed broker must come back for the checker)', input: undefined });
    }
  });

/** argv with {id}, {host}, {port} filled in. */
export function fillArgv(template: readonly string[], broker: { id: number; host: string; port: number }): string[] {
  return template.map((s) => s.replaceAll('{id}', String(broker.id)).replaceAll('{host}', broker.host).replaceAll('{port}', String(broker.port)));
}
