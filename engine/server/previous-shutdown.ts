// Did this broker's previous run end cleanly? Kafka's broker answers it before it registers: the
// clean-shutdown file of every log dir holds the broker epoch it shut down at, and it sends that as
// BrokerRegistrationRequest.PreviousBrokerEpoch (-1 when a file is missing); the controller
// treats anything else as an unclean shutdown (KIP-966). durolab's logs each keep the marker in
// their own directory (Log.close writes it after the final flush, Log.open removes it), so the
// answer is read from them, before the first heartbeat opens any partition.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { CLEAN_SHUTDOWN_FILE } from '../storage/index.ts';

/** A partition's directory: <topic>-<partition> (Partition.open). */
const PARTITION_DIR = /^[a-zA-Z0-9._-]+-\d+$/;

export interface PreviousShutdown {
  clean: boolean;
  /** The partition logs found, and those without their marker (named, for the broker's log). */
  logs: number;
  unclean: string[];
}

/**
 * Clean when the data dir holds partition logs and every one of them has its clean-shutdown
 * marker. No log at all is not proof of a clean shutdown (a wiped or replaced disk lost whatever
 * the broker held); a broker the controller has never seen is not affected by the answer.
 */
export function previousShutdown(dataDir: string): PreviousShutdown {
  let names: string[];
  try {
    names = readdirSync(dataDir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && PARTITION_DIR.test(d.name))
      .map((d) => d.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { clean: false, logs: 0, unclean: [] };
    throw err;
  }
  const unclean = names.filter((n) => !existsSync(path.join(dataDir, n, CLEAN_SHUTDOWN_FILE))).sort();
  return { clean: names.length > 0 && unclean.length === 0, logs: names.length, unclean };
}
