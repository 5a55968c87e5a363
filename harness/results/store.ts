// results/<scenario>/<run id>/: run.json (rewritten atomically after every cell, so an
// interrupted run keeps what finished), the ack ledgers, broker logs; `latest` points at the
// newest run.
import { mkdirSync, renameSync, rmSync, symlinkSync, readlinkSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { RunResult } from './types.ts';
import { writeFileAtomic } from '../../engine/common/atomic-file.ts';


/** Sortable and unique enough for one machine: 20261129-115840-a1b2 */
export function newRunId(now = new Date()): string {
  const iso = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${iso}-${Math.random().toString(16).slice(2, 6)}`;
}

/** Where a cell's attempt `index` (Trial.index, from 0) keeps its evidence: rep-1, rep-2, ... in attempt order. */
export function trialDir(cellDir: string, index: number): string {
  return path.join(cellDir, `rep-${index + 1}`);
}

export class RunStore {
  readonly dir: string;
  readonly scenarioDir: string;

  constructor(resultsDir: string, scenario: string, runId: string) {
    this.scenarioDir = path.join(resultsDir, scenario);
    this.dir = path.join(this.scenarioDir, runId);
    mkdirSync(this.dir, { recursive: true });
  }

  cellDir(cellIndex: number, cellId: string): string {
    const safe = cellId.replace(/[^A-Za-z0-9=.,:_-]+/g, '_').slice(0, 120);
    const dir = path.join(this.dir, 'cells', `${String(cellIndex + 1).padStart(2, '0')}-${safe}`);
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  save(run: RunResult): string {
    const file = path.join(this.dir, 'run.json');
    writeFileAtomic(file, JSON.stringify(run, null, 2) + '\n');
    this.pointLatest();
    return file;
  }

  private pointLatest(): void {
    const link = path.join(this.scenarioDir, 'latest');
    const target = path.basename(this.dir);
    try {
      if (existsSync(link) && readlinkSync(link) === target) return;
    } catch {
      // not a symlink: replaced below
    }
    const tmp = `${link}.tmp-${process.pid}`;
    rmSync(tmp, { force: true });
    symlinkSync(target, tmp);
    renameSync(tmp, link);
  }
}
