// What a fault trial keeps so its loss can be re-counted from the bytes (`durolab recount`):
// ledger.ndjson before the check starts, check.json whatever the check's outcome, and on the
// host route's fault disks the cut and final images with disks.json (harness/disk/
// disk-evidence.ts). The images are kept with --keep-data, and always for a trial that is
// suspect, whose check failed, or whose check found acknowledged records lost beyond the
// prediction, corrupt or at inconsistent offsets; otherwise the cut copies are dropped.
import { existsSync, statfsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../engine/common/atomic-file.ts';
import { EVIDENCE_RESERVE_BYTES, dropImages, noRoomFor, type DisksManifest } from '../disk/disk-evidence.ts';
import type { Trial } from '../results/types.ts';
import { CHECK_FILE, DISKS_FILE, LEDGER_FILE } from '../results/trial-files.ts';
import type { ClientDriver } from '../drivers/types.ts';
import { recountLine } from '../results/recount-rows.ts';
import { recountTrial } from '../recount/recount.ts';
import type { RunningCluster } from '../targets/types.ts';
import type { AckLedger } from '../history/ledger.ts';

export { LEDGER_FILE, CHECK_FILE, DISKS_FILE };

/** The ledger on disk: before the check starts, so a check that fails or hangs cannot lose it. */
export function writeLedger(trialDir: string, ledger: AckLedger): void {
  writeFileAtomic(path.join(trialDir, LEDGER_FILE), [...ledger.toNdjson()].join(''));
}

/** check.json of a check that did not finish: what failed, and where the evidence is. */
export function writeFailedCheck(trialDir: string, stage: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  writeFileAtomic(path.join(trialDir, CHECK_FILE), JSON.stringify({ failed: { stage, message }, evidence: trialDir }, null, 1));
  return message;
}

/** Why a checked trial's evidence is worth keeping beyond --keep-data (empty: nothing remarkable). */
export function remarkableTrial(trial: Trial): string[] {
  const out: string[] = [];
  if (trial.suspect) out.push(`suspect: ${trial.note ?? 'no reason recorded'}`);
  const l = trial.ledger;
  if ((l.lostBeyondPrediction ?? 0) > 0) out.push(`${l.lostBeyondPrediction} acknowledged records lost beyond the prediction`);
  if (l.corrupt > 0) out.push(`${l.corrupt} corrupt batches served`);
  if ((l.inconsistentOffsets ?? 0) > 0) out.push(`${l.inconsistentOffsets} inconsistent offsets`);
  return out;
}

/** One trial's disk evidence: reasons to keep it gather during the trial; the cluster's stop decides. */
export class TrialEvidence {
  private readonly reasons: string[] = [];

  constructor(
    readonly trialDir: string,
    /** What disks.json says of the trial besides its images. */
    private readonly about: Pick<DisksManifest, 'cell' | 'trial' | 'topic' | 'driver'>,
    keepData: boolean,
  ) {
    if (keepData) this.reasons.push('--keep-data');
  }

  private finalImages = true;

  keep(...reasons: string[]): void {
    this.reasons.push(...reasons);
  }

  /** Keep what the cut left, but take no final image (the cluster was not recovered: Ctrl-C). */
  keepCutOnly(reason: string): void {
    this.reasons.push(reason);
    this.finalImages = false;
  }

  get kept(): boolean {
    return this.reasons.length > 0;
  }

  /** Just before the cluster stops: a kept trial's final images are taken after a clean stop. */
  beforeStop(cluster: RunningCluster | null): void {
    if (this.kept && this.finalImages) cluster?.keepFinalDiskImages?.();
  }

  /**
   * After the cluster stopped: disks.json for a kept trial, or its cut copies removed. `cutAtMs`
   * is the cut on the ledger's clock (the fault's CutInfo.atMs). Null when the cluster kept no disk.
   */
  afterStop(cluster: RunningCluster | null, cutAtMs: number | null): DisksManifest | null {
    const kept = cluster?.diskEvidence?.();
    if (!kept || (kept.brokers.length === 0 && kept.incomplete.length === 0)) return null;
    if (!this.kept) {
      dropImages(this.trialDir, kept.brokers);
      return null;
    }
    const manifest: DisksManifest = {
      ...this.about,
      keptBecause: [...this.reasons],
      ...(kept.incomplete.length ? { incomplete: kept.incomplete } : {}),
      brokers: kept.brokers.map((b) => (b.cut && cutAtMs !== null ? { ...b, cutAtMs } : b)),
    };
    writeFileAtomic(path.join(this.trialDir, DISKS_FILE), JSON.stringify(manifest, null, 1));
    return manifest;
  }
}

/**
 * A kept trial's images re-counted right after it (the figures `durolab recount` prints): they
 * go into the trial (run.json, the terminal's and the report's loss tables). A recount that
 * cannot read an image says so in the trial instead of figures.
 */
export async function recountKept(
  trial: Trial,
  manifest: DisksManifest,
  o: { cellDir: string; trialDir: string; driver: Pick<ClientDriver, 'servedFromStored'>; log: (line: string) => void },
): Promise<void> {
  trial.evidence = { dir: path.relative(o.cellDir, o.trialDir), keptBecause: manifest.keptBecause, ...(manifest.incomplete ? { incomplete: manifest.incomplete } : {}) };
  o.log(`disk images kept in ${o.trialDir} (${manifest.keptBecause.join('; ')})${manifest.incomplete ? `; EVIDENCE INCOMPLETE: ${manifest.incomplete.join('; ')}` : ''}`);
  const read = o.driver.servedFromStored?.bind(o.driver);
  if (!read) {
    o.log('disk images kept; not re-counted: the client driver decodes no stored batches');
    return;
  }
  const scratch = await fs.mkdtemp(path.join(existsSync('/dev/shm') ? '/dev/shm' : o.trialDir, 'durolab-recount-'));
  try {
    const figures = await recountTrial({
      trial: { trialDir: o.trialDir, manifest },
      checkServed: trial.ledger.acked - trial.ledger.ackedLost,
      read,
      scratch,
    });
    trial.recount = figures;
    o.log(recountLine(figures));
  } catch (err) {
    trial.recount = { problem: (err as Error).message };
    o.log(`recount from the disks failed: ${(err as Error).message}`);
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/** What --keep-data's images may take: per trial (cut and final image per broker) and over the run, at most the disks' size. */
export interface EvidenceSpaceNeed {
  /** Trials on the host route's fault disks with a power cut: the ones that keep images. */
  trials: number;
  perTrialBytes: number;
}

/**
 * Refuses a --keep-data run whose results disk cannot hold one trial's images (each image at most
 * its disk's size: they are sparse copies); otherwise says what the whole run may take, with
 * the free space, so a user sees the figures before the first cell. Each copy checks again.
 */
export function checkEvidenceSpace(need: EvidenceSpaceNeed, resultsDir: string): string | null {
  if (need.trials === 0) return null;
  const gib = (n: number) => `${(n / 1024 ** 3).toFixed(1)} GiB`;
  const why = noRoomFor(resultsDir, need.perTrialBytes, `--keep-data: one trial's disk images (a cut and a final image per broker, each up to its disk's size)`);
  if (why) throw new Error(`${why}; free space under ${resultsDir} or run without --keep-data`);
  const st = statfsSync(resultsDir);
  return `--keep-data: ${need.trials} trial(s) keep their disk images, up to ${gib(need.perTrialBytes)} each (sparse: what was written), ${gib(need.trials * need.perTrialBytes)} at most for the run; ${gib(st.bavail * st.bsize)} free under ${resultsDir}; a copy that would leave less than ${gib(EVIDENCE_RESERVE_BYTES)} free is not made`;
}
