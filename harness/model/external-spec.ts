// The scenario's `external:` block for target: external — a Kafka cluster the lab did not
// start (the path for users who outgrow one machine): its bootstrap servers, and optional
// Jepsen-style per-node fault commands as argv templates (no shell unless the argv starts one,
// e.g. ssh's remote command). Which fault kind runs which templates: external-faults.ts.
// Placeholders, filled per broker hit:
//   {id}    the broker id               {host}  its advertised host (Metadata)
//   {port}  its advertised client port
// and in partition and heal only:
//   {from}  the other side's hosts, space-separated (e.g. "10.0.0.2 10.0.0.3")
//   {ports} the ports of the entry's `links:`, space-separated, from external.links (empty when
//           the entry cuts all traffic)
// Pairs: pause with resume, partition with heal (a lasting fault is always undone); kill and
// powerCut need restart (their brokers come back before the check), restart needs one of them. A fault whose
// templates are missing is refused at `scenario check`. Small: the scenario schema imports it.
import * as z from 'zod';

/** The templates, in the order the docs list them. */
export const TEMPLATE_NAMES = ['kill', 'restart', 'pause', 'resume', 'partition', 'heal', 'powerCut'] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

/** The links a partition can be narrowed to (a fault entry's `links:`), each with its listeners' ports in external.links. */
export const EXTERNAL_LINKS = ['clients', 'replication', 'controller'] as const;
export type ExternalLink = (typeof EXTERNAL_LINKS)[number];

const BROKER_PLACEHOLDERS = ['id', 'host', 'port'] as const;
const SIDE_PLACEHOLDERS = ['from', 'ports'] as const;
export type Placeholder = (typeof BROKER_PLACEHOLDERS)[number] | (typeof SIDE_PLACEHOLDERS)[number];

/** The placeholders each template may use. */
export function placeholdersOf(name: TemplateName): readonly Placeholder[] {
  return name === 'partition' || name === 'heal' ? [...BROKER_PLACEHOLDERS, ...SIDE_PLACEHOLDERS] : BROKER_PLACEHOLDERS;
}

export interface ExternalSpec {
  bootstrap: string[];
  /** Kills one broker hard (SIGKILL of its JVM), e.g. ["ssh", "{host}", "sudo", "systemctl", "kill", "-s", "KILL", "kafka"]. */
  kill?: string[];
  /** Starts it again on the same data, e.g. ["ssh", "{host}", "sudo", "systemctl", "start", "kafka"]. */
  restart?: string[];
  /** Stops its JVM without killing it (SIGSTOP), e.g. ["ssh", "{host}", "sudo pkill -STOP -f kafka[.]Kafka"]. */
  pause?: string[];
  /** Lets it go on (SIGCONT). */
  resume?: string[];
  /** Drops its traffic with {from} (on {ports} when the entry has links:), e.g. nft or iptables rules on the host. */
  partition?: string[];
  /** Removes what partition added; must succeed when nothing is left to remove. */
  heal?: string[];
  /** Crashes its host's OS without a sync (an OS-level power cut), e.g. ["ssh", "{host}", "echo b | sudo tee /proc/sysrq-trigger"]. */
  powerCut?: string[];
  /** Per link, the ports of the brokers' listeners on it ({ports} of a partition narrowed with links:). */
  links?: Partial<Record<ExternalLink, number[]>>;
  /** Seconds a fault command may take (default 60). */
  commandTimeoutSec: number;
}

/** The first placeholder in `s` that `name` may not use, or null. */
export function unknownPlaceholder(name: TemplateName, s: string): string | null {
  const allowed = placeholdersOf(name);
  // A word in braces is a placeholder; other braces (nft's `{ type filter ... }`, a shell's) are text.
  for (const m of s.matchAll(/\{([A-Za-z_]\w*)\}/g)) if (!(allowed as readonly string[]).includes(m[1]!)) return m[0];
  return null;
}

const argv = (name: TemplateName) =>
  z
    .array(z.string().min(1), { error: `expected the ${name} command as an argv list of strings, e.g. ["ssh", "root@{host}", "systemctl kill -s KILL kafka"]` })
    .min(1)
    .superRefine((a, ctx) => {
      for (const [i, s] of a.entries()) {
        const bad = unknownPlaceholder(name, s);
        if (bad) ctx.addIssue({ code: 'custom', path: [i], message: `expected placeholders among ${placeholdersOf(name).map((p) => `{${p}}`).join(', ')} in ${name}, found ${bad}`, input: s });
      }
    });

const ports = z.array(z.int().min(1).max(65535), { error: 'expected a list of port numbers 1..65535' }).min(1);

/** Pairs a scenario must give together: [a, b, why]. */
const PAIRS: ReadonlyArray<[TemplateName, TemplateName, string]> = [
  ['pause', 'resume', 'a paused broker is always resumed'],
  ['partition', 'heal', 'a partition is always healed'],
];

export const externalSchema = z
  .strictObject({
    bootstrap: z
      .array(z.string().regex(/^[^\s:]+:\d{1,5}$/, { error: 'expected a bootstrap server host:port' }))
      .min(1, { error: 'expected at least one bootstrap server host:port' }),
    kill: argv('kill').optional(),
    restart: argv('restart').optional(),
    pause: argv('pause').optional(),
    resume: argv('resume').optional(),
    partition: argv('partition').optional(),
    heal: argv('heal').optional(),
    powerCut: argv('powerCut').optional(),
    links: z.strictObject({ clients: ports.optional(), replication: ports.optional(), controller: ports.optional() }).optional(),
    commandTimeoutSec: z.number().positive().max(3600).default(60),
  })
  .superRefine((e, ctx) => {
    for (const [a, b, why] of PAIRS) {
      if ((e[a] === undefined) !== (e[b] === undefined)) {
        const missing = e[a] === undefined ? a : b;
        ctx.addIssue({ code: 'custom', path: [missing], message: `expected ${a} and ${b} together (${why})`, input: undefined });
      }
    }
    // restart brings back what kill and powerCut took down: with either of them, and only then.
    const downers = (['kill', 'powerCut'] as const).filter((t) => e[t] !== undefined);
    if (downers.length && e.restart === undefined) {
      ctx.addIssue({ code: 'custom', path: ['restart'], message: `expected a restart command with ${downers.join(' and ')} (the brokers it takes down come back before the check)`, input: undefined });
    }
    if (!downers.length && e.restart !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['restart'], message: 'expected restart beside kill or powerCut (it brings back the brokers they take down)', input: e.restart });
    }
  });

export type TemplateValues = { id: number; host: string; port: number } & Partial<Record<'from' | 'ports', string>>;

/** argv with the placeholders filled in ({from} and {ports} empty when not given). */
export function fillArgv(template: readonly string[], v: TemplateValues): string[] {
  const values: Record<Placeholder, string> = { id: String(v.id), host: v.host, port: String(v.port), from: v.from ?? '', ports: v.ports ?? '' };
  return template.map((s) => s.replace(/\{(id|host|port|from|ports)\}/g, (_, p: Placeholder) => values[p]));
}
