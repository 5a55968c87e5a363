// Failed log dirs as the brokers' own logs say them: each target knows its system's lines (a
// durolab broker's in durolab-log-lines.ts, Kafka's in kafka/kafka-log-lines.ts); this reads the
// log files and keeps the first line per broker and errno (a full disk refuses thousands of
// writes, its cause is said once).
import { readFile } from 'node:fs/promises';
import type { StorageFailure } from '../results/types.ts';

/** A system's reading of one broker log: its storage failure lines, in order. */
export type StorageFailureLines = (text: string) => Array<Omit<StorageFailure, 'brokerId'>>;

export async function storageFailuresFromLogs(brokers: ReadonlyArray<{ id: number; logPath: string }>, read: StorageFailureLines): Promise<StorageFailure[]> {
  const out: StorageFailure[] = [];
  for (const b of brokers) {
    const text = await readFile(b.logPath, 'utf8').catch(() => '');
    const seen = new Set<string | null>();
    for (const f of read(text)) {
      if (seen.has(f.errno)) continue;
      seen.add(f.errno);
      out.push({ brokerId: b.id, ...f, line: f.line.slice(0, 300) });
    }
  }
  return out;
}
