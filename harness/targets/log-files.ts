// How a system's brokers name their log files inside a data dir: the segment and index counts
// of a cell come from these files where the data dirs are on this host (runner/broker-figures.ts).
// A target row declares its system's names (capabilities.logFiles); without them, files are not
// counted and the segment figure is the brokers' own, or absent: never a 0 for unknown.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export interface LogFileNames {
  /** A segment file's name (its size counts as log bytes). */
  segment: RegExp;
  /** An index file's name; absent: the system keeps none per segment. */
  index?: RegExp;
  /** The directories (relative to the data dir, `/`-separated) whose files count; absent: any. NATS's Raft groups keep blocks of the same name outside its streams. */
  dir?: RegExp;
  /** How many directory levels below the data dir are walked (Kafka's <topic>-<partition>/ is level 1; NATS's jetstream/<account>/streams/<stream>/msgs/ is level 5). */
  maxDepth: number;
}

/** Kafka's layout, which durolab's engine follows: 20-digit base offset .log, .index and .timeindex in <topic>-<partition>/. */
export const KAFKA_STYLE_LOG_FILES: LogFileNames = { segment: /^\d{20}\.log$/, index: /^\d{20}\.(index|timeindex)$/, maxDepth: 2 };

/** Segment and index files under the data dirs, named as the system names them. */
export function countLogFiles(dataDirs: string[], names: LogFileNames): { segments: number; indexFiles: number; logBytes: number } {
  let segments = 0;
  let indexFiles = 0;
  let logBytes = 0;
  const walk = (dir: string, depth: number, rel: string) => {
    const counts = names.dir === undefined || names.dir.test(rel);
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of entries) {
      const full = path.join(dir, name);
      if (counts && names.segment.test(name)) {
        segments++;
        logBytes += statSync(full).size;
      } else if (counts && names.index?.test(name)) {
        indexFiles++;
      } else if (depth < names.maxDepth) {
        try {
          if (statSync(full).isDirectory()) walk(full, depth + 1, rel ? `${rel}/${name}` : name);
        } catch {
          // vanished while walking
        }
      }
    }
  };
  for (const d of dataDirs) walk(d, 0, '');
  return { segments, indexFiles, logBytes };
}
