// What a crash-states trial keeps so anyone can rebuild the states that lost records: the write
// log (always: it is the trial's record), the base image (with --keep-data, or when booted
// states disagreed with the host check), the ledger, and crash-states.json naming for each
// losing state what rebuilds it: its index, its crash point (write-log position) and the seed
// of its onCut draw (plan.ts cutSeedOf), with the run's policy.
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../../engine/common/atomic-file.ts';
import { LEDGER_FILE } from '../../results/trial-files.ts';
import type { CrashStatesResult } from '../../results/types.ts';
import type { AckLedger } from '../../history/ledger.ts';
import { cutSeedOf } from './plan.ts';
import { keepImageMove } from '../disk-evidence.ts';

export const CRASH_STATES_FILE = 'crash-states.json';

export interface CrashStatesManifest {
  /** Relative to the trial's directory; null when not kept (the write log still rebuilds states over a fresh ext4 of the same size). */
  baseImage: string | null;
  /** Why the base image could not be kept when it was to be (a full results disk). */
  baseImageProblem?: string;
  writeLog: string;
  dataDirOnDisk: string;
  policy: string;
  seed: number;
  losingStates: Array<{ state: number; position: number; kind: string; cutSeed: number; lostAcked: number; corrupt: number }>;
}

export async function keepCrashStateEvidence(o: {
  trialDir: string;
  baseImage: string;
  writeLog: string;
  dataDirOnDisk: string;
  result: CrashStatesResult;
  ledger: AckLedger;
  keepBase: boolean;
}): Promise<CrashStatesManifest> {
  let base: string | null = null;
  let problem: string | undefined;
  if (o.keepBase) {
    const kept = await keepImageMove(o.baseImage, o.trialDir, 'base.img');
    if ('problem' in kept) problem = kept.problem;
    else base = kept.file;
  }
  await fs.rm(o.baseImage, { force: true });
  const manifest: CrashStatesManifest = {
    baseImage: base,
    ...(problem ? { baseImageProblem: problem } : {}),
    writeLog: path.relative(o.trialDir, o.writeLog),
    dataDirOnDisk: o.dataDirOnDisk,
    policy: o.result.policy,
    seed: o.result.seed,
    losingStates: o.result.perState
      .filter((s) => s.lostAcked > 0 || s.corrupt > 0)
      .map((s) => ({ state: s.state, position: s.position, kind: s.kind, cutSeed: cutSeedOf(o.result.seed, s.state), lostAcked: s.lostAcked, corrupt: s.corrupt })),
  };
  writeFileAtomic(path.join(o.trialDir, CRASH_STATES_FILE), JSON.stringify(manifest, null, 1));
  writeFileAtomic(path.join(o.trialDir, LEDGER_FILE), [...o.ledger.toNdjson()].join(''));
  return manifest;
}
