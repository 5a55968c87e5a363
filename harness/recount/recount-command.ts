// `durolab recount RUN [--json]`: a second reader of a run's loss, from the disk images its
// trials kept (harness/disk/disk-evidence.ts) and their ledgers alone (recount.ts).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseCommandFlags } from '../../engine/common/flags.ts';
import { readRunJson, resolveRunFile } from '../report/load-runs.ts';
import { defaultDirs } from '../report/repo-paths.ts';
import { DRIVER_NAMES, loadDriver, type DriverName } from '../drivers/registry.ts';
import { DISKS_FILE } from '../results/trial-files.ts';
import type { DisksManifest } from '../disk/disk-evidence.ts';
import type { RunResult } from '../results/types.ts';
import { recountLine } from '../results/recount-rows.ts';
import { recountTrial, type TrialDisks } from './recount.ts';
import { RECOUNT_HEADERS, recountCells, type RecountRow } from '../results/recount-rows.ts';
import { renderTable } from '../../engine/common/text-table.ts';
import { capabilitiesOf, TARGET_KINDS, type TargetKind } from '../targets/registry.ts';

const HELP = `usage: durolab recount RUN [--json]

Re-counts a run's acknowledged records from the disk images its trials kept, without the
brokers: every acknowledged record of a trial's ledger (ledger.ndjson) is looked up in
  - the final images (each broker's disk after the recovered cluster's clean stop): served;
  - the cut images (each disk exactly as the power cut left it): on a disk but not served,
    i.e. thrown away by the system's own recovery or leader election;
  - neither: on no disk, never made durable (a page cache or a disk cache lost it).
Each image is read from a scratch copy (its ext4 journal replayed; the kept image is never
written), every .log segment decoded with CRCs checked, records identified as the run's
driver wrote them. The served count must equal the run's check (acknowledged - lost); a
difference is printed as a finding.

Images are kept by \`durolab bench SCENARIO --keep-data\` on the host route's fault disks
(targets process and kafka under a power cut), and without it for a trial that is suspect
or whose check failed or found records lost beyond the prediction, corrupt or misplaced.

  RUN                  a run directory, a run.json path, '<scenario>/<run id>' or '<scenario>'
                       (its latest run) under the results folder
  --json               the figures as JSON (one object per trial)
  --results-dir DIR    default: <repo>/results
  -h, --help           this text

Exit status: 0 every trial's served count agrees with its check; 1 one differs (a finding);
2 nothing to recount, or an image or ledger that cannot be read (named with the tool's message).
`;

/** Every trial directory of the run that kept disks.json, with its manifest. */
export function keptTrials(runDir: string): TrialDisks[] {
  const cells = path.join(runDir, 'cells');
  if (!existsSync(cells)) return [];
  const out: TrialDisks[] = [];
  for (const cell of readdirSync(cells).sort()) {
    const cellDir = path.join(cells, cell);
    for (const rep of existsSync(cellDir) ? readdirSync(cellDir).sort() : []) {
      const file = path.join(cellDir, rep, DISKS_FILE);
      if (!existsSync(file)) continue;
      let manifest: DisksManifest;
      try {
        manifest = JSON.parse(readFileSync(file, 'utf8')) as DisksManifest;
      } catch (err) {
        throw new Error(`${file}: expected the JSON disks.json a trial writes: ${(err as Error).message}`);
      }
      if (!Array.isArray(manifest.brokers)) throw new Error(`${file}: field brokers must be an array of the kept images`);
      out.push({ trialDir: path.dirname(file), manifest });
    }
  }
  return out;
}

/** Why a run has nothing to recount, in terms of what would make it have something. */
export function nothingToRecount(run: RunResult, runDir: string): string {
  const kinds = new Set<string>([run.target, ...run.cells.map((c) => c.target ?? run.target)]);
  const hostRoute = [...kinds].filter((k) => (TARGET_KINDS as readonly string[]).includes(k) && capabilitiesOf(k as TargetKind).faultDisk === 'host');
  const canRecount = TARGET_KINDS.filter((k) => capabilitiesOf(k).faultDisk === 'host').join(' and ');
  if (hostRoute.length === 0) {
    return `${runDir}: target ${[...kinds].join(', ')} keeps no disk images; recount reads the host route's fault disks, i.e. runs of target ${canRecount} under a power cut`;
  }
  const cut = run.cells.some((c) => (c.trials ?? []).some((t) => t.fault));
  if (!cut) return `${runDir}: no trial of this run had a fault: there is no cut to recount`;
  return `${runDir}: no trial kept its disk images; rerun with \`durolab bench ${run.scenario.name} --keep-data\` (a suspect trial or a failed check keeps them without it)`;
}

function checkServedOf(run: RunResult, m: DisksManifest): { target: string; served: number } | string {
  const cell = run.cells.find((c) => c.id === m.cell);
  const trial = cell?.trials?.find((t) => t.index === m.trial);
  if (!cell || !trial) return `run.json has no trial ${m.trial} in cell ${m.cell} (the run stopped before its check was recorded)`;
  return { target: cell.target ?? run.target, served: trial.ledger.acked - trial.ledger.ackedLost };
}

function driverName(m: DisksManifest, file: string): DriverName {
  if (!(DRIVER_NAMES as readonly string[]).includes(m.driver)) throw new Error(`${file}: driver ${JSON.stringify(m.driver)} is none of ${DRIVER_NAMES.join(', ')}`);
  return m.driver as DriverName;
}

async function recountRow(run: RunResult, t: TrialDisks, scratch: string): Promise<RecountRow> {
  const row: RecountRow = { cell: t.manifest.cell, trial: t.manifest.trial, target: t.manifest.brokers[0]?.target ?? run.target };
  const check = checkServedOf(run, t.manifest);
  if (typeof check === 'string') return { ...row, problem: check };
  try {
    const driver = await loadDriver(driverName(t.manifest, path.join(t.trialDir, DISKS_FILE)));
    const read = driver.servedFromStored?.bind(driver);
    if (!read) return { ...row, problem: `not evaluated: driver ${driver.name} decodes no stored batches` };
    row.figures = await recountTrial({ trial: t, checkServed: check.served, read, scratch });
  } catch (err) {
    row.problem = (err as Error).message;
  }
  return row;
}

function table(rows: RecountRow[]): string {
  const problems = rows.filter((r) => r.problem).map((r) => `  ${r.cell} trial ${r.trial + 1}: ${r.problem}`);
  const right = (i: number) => i >= 3 && i < RECOUNT_HEADERS.length - 1;
  const body = renderTable(RECOUNT_HEADERS, rows.map((r) => recountCells({ ...r, problem: r.problem ? 'see below' : undefined })), right);
  return [body, ...(problems.length ? ['', 'cannot recount:', ...problems] : [])].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags('recount', argv, { json: { type: 'boolean', default: false }, 'results-dir': { type: 'string' } }, HELP, true);
  if (parsed === null) return 0;
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new Error(`durolab recount: expected one RUN, got ${positionals.length ? positionals.join(' ') : 'none'} (durolab recount --help)`);
  const dirs = defaultDirs({ resultsDir: values['results-dir'] });
  const runFile = await resolveRunFile(positionals[0], dirs.resultsDir);
  const run = await readRunJson(runFile);
  const runDir = path.dirname(runFile);
  const trials = keptTrials(runDir);
  if (trials.length === 0) {
    process.stderr.write(`durolab recount: ${nothingToRecount(run, runDir)}\n`);
    return 2;
  }
  const scratch = await fs.mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'durolab-recount-'));
  const rows: RecountRow[] = [];
  try {
    for (const t of trials) {
      const row = await recountRow(run, t, scratch);
      rows.push(row);
      if (!values.json) process.stderr.write(`${row.cell} trial ${row.trial + 1}: ${row.figures ? recountLine(row.figures) : `cannot recount: ${row.problem}`}\n`);
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
  process.stdout.write(values.json ? `${JSON.stringify(rows, null, 1)}\n` : `${table(rows)}\n`);
  if (rows.some((r) => r.problem)) return 2;
  return rows.some((r) => r.figures && r.figures.served !== r.figures.checkServed) ? 1 : 0;
}
