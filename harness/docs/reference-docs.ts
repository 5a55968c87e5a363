// The generated parts of docs/: the scenario-file reference (from the zod schema, walked in
// schema-fields.ts, and SCENARIO_FIELD_HELP), the settings tables (engine/settings and the client
// settings), the fault kinds and the target systems (their registries). Each is a block between
// markers in a hand-written page (docs-command.ts writes them; docs.test.ts checks they are fresh).
import { DATA_FILE_SETS, type DataFileSets } from '../targets/data-files.ts';
import { FAULTS, FAULT_KINDS, canDeliver, isLasting } from '../faults/registry.ts';
import { TARGETS, TARGET_KINDS, capabilitiesOf } from '../targets/registry.ts';
import { SCENARIO_SETTINGS } from '../../engine/settings/registry.ts';
import { allSettingsMarkdown } from '../scenario/client-settings-reference.ts';
import { schemaFields, type SchemaField } from './schema-fields.ts';
import { SCENARIO_FIELD_HELP } from './scenario-field-help.ts';

const cell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** The targets a scenario field applies to, where not every target takes it. */
function fieldTargets(path: string): string {
  const kinds = (ok: (k: (typeof TARGET_KINDS)[number]) => boolean) => TARGET_KINDS.filter(ok).join(', ');
  if (path.startsWith('external')) return kinds((k) => capabilitiesOf(k).ownBlock?.key === 'external');
  if (path === 'vm.accelerator' || path === 'vm.memoryMiB') return kinds((k) => capabilitiesOf(k).vmOptions);
  if (path.startsWith('vm')) return kinds((k) => capabilitiesOf(k).vmOptions || capabilitiesOf(k).faultDisk === 'host');
  if (path.startsWith('workload.producer') || path.startsWith('workload.consumers')) return 'driver kafka';
  return 'all';
}

function fieldRow(f: SchemaField): string {
  const dflt = f.required ? 'required' : f.default === null || f.default === '' ? '—' : `\`${f.default}\``;
  return `| \`${f.path}\` | ${cell(f.takes)} | ${cell(dflt)} | ${cell(fieldTargets(f.path))} | ${cell(SCENARIO_FIELD_HELP[f.path] ?? '(undocumented)')} |`;
}

/** One table per top-level section, every field of the schema. */
export function scenarioReferenceMarkdown(): string {
  const fields = schemaFields();
  const sections = [...new Set(fields.map((f) => f.path.split(/[.[]/)[0]!))];
  return sections
    .map((s) => {
      const rows = fields.filter((f) => f.path === s || f.path.startsWith(`${s}.`) || f.path.startsWith(`${s}[`));
      return [`### \`${s}\``, '', '| field | takes | default | targets | meaning |', '|---|---|---|---|---|', ...rows.map(fieldRow)].join('\n');
    })
    .join('\n\n');
}

export function settingsReferenceMarkdown(): string {
  return allSettingsMarkdown();
}

/** Each fault kind: what it does, whether it lasts, which targets deliver it and what its check needs. */
export function faultKindsMarkdown(): string {
  const rows = FAULT_KINDS.map((k) => {
    const f = FAULTS[k];
    const on = TARGET_KINDS.filter((t) => canDeliver(k, capabilitiesOf(t).faultActions));
    const not = TARGET_KINDS.filter((t) => !on.includes(t)).map((t) => {
      const why = capabilitiesOf(t).lacksFaultAction?.[f.needs];
      return why ? `${t} (${why})` : t;
    });
    return `| [\`${k}\`](#${k}) | ${cell(f.summary)} | ${isLasting(k) ? 'yes (duration:)' : 'no'} | ${on.join(', ') || '—'} | ${cell(not.join('; ') || '—')} |`;
  });
  return ['| kind | what it does | lasts | targets that deliver it | targets that do not (why) |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** Values worth asking a target about: every value of a setting whose range lists them, else its default. */
function probeValues(s: (typeof SCENARIO_SETTINGS)[number]): string[] {
  const listed = /^[A-Za-z0-9:-]+(\|[A-Za-z0-9:-]+)+$/.test(s.type.range) ? s.type.range.split('|') : [];
  const values = listed.filter((v) => !/[A-Z]$|:N$|:T$/.test(v));
  if (s.name === 'flush') values.push('messages:1000', 'ms:1000');
  if (values.length === 0 && s.default !== undefined) values.push(s.type.display(s.default));
  return values;
}

/** What a target refuses of the settings a scenario can set, with its reason. */
function refusals(kind: (typeof TARGET_KINDS)[number]): string[] {
  const refuse = capabilitiesOf(kind).refuseSetting;
  if (!refuse) return [];
  const out: string[] = [];
  for (const s of SCENARIO_SETTINGS) {
    const refused = probeValues(s)
      .map((text) => ({ text, value: s.type.parse(text) }))
      .filter((p) => p.value !== undefined)
      .map((p) => ({ ...p, why: refuse(s.name, p.value as never) }))
      .filter((p) => p.why !== null);
    if (refused.length) out.push(`- \`${s.name}\`: ${refused.map((r) => r.text).join(', ')} — ${refused[0]!.why}`);
  }
  return out;
}

/** One section per target kind, from its registry row. */
/** One line per named file set: what it is on this system, or why it has none. */
function dataFileLines(files: DataFileSets): string[] {
  return DATA_FILE_SETS.map((n) => {
    const set = files.sets[n];
    return set ? `- \`${n}\`: ${set.describe}` : `- \`${n}\`: none (${files.lacks[n] ?? 'no equivalent'})`;
  });
}

export function systemsMarkdown(): string {
  return TARGET_KINDS.map((k) => {
    const t = TARGETS[k];
    const c = t.capabilities;
    const offered = FAULT_KINDS.filter((f) => canDeliver(f, c.faultActions));
    const lacks = Object.entries(c.lacksFaultAction ?? {}).map(([action, why]) => `- ${action}: ${why}`);
    const refused = refusals(k);
    return [
      `### \`${k}\`: ${t.systemLabel}`,
      '',
      `${t.summary}.`,
      '',
      `- system: \`${t.system}\`${t.axisName ? ` (a matrix's target axis may call it \`${t.axisName}\`)` : ''}`,
      `- install: ${t.install}`,
      `- drivers: ${c.drivers.join(', ')}`,
      `- brokers: ${c.hostProcesses ? 'processes of this host' : c.vmOptions ? 'QEMU guests' : 'not started by the lab'}; fault disk: ${c.faultDisk ?? 'none'}; recovery timeout ${c.recoveryTimeoutMs / 1000} s`,
      `- fault kinds: ${offered.join(', ') || 'none'}`,
      ...(c.crashStateCheck ? [`- crash states checked: ${c.crashStateCheck === 'boot' ? 'by booting the system on every state' : 'offline, by its own recovery code on the host'}`] : []),
      ...(t.notInMainSuite ? [`- tests: ${t.notInMainSuite}`] : []),
      ...(lacks.length ? ['', 'What it cannot be asked:', '', ...lacks] : []),
      ...(c.dataFiles ? ['', "Its data files as a file fault's `files:` names them:", '', ...dataFileLines(c.dataFiles)] : []),
      ...(refused.length ? ['', 'Settings it refuses (`scenario check` names the field and why):', '', ...refused] : []),
    ].join('\n');
  }).join('\n\n');
}

/** The generated blocks by name, as docs/*.md mark them. */
export const GENERATED_BLOCKS: Readonly<Record<string, () => string>> = {
  'scenario-reference': scenarioReferenceMarkdown,
  settings: settingsReferenceMarkdown,
  'fault-kinds': faultKindsMarkdown,
  systems: systemsMarkdown,
};
