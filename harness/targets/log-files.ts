// How a system's brokers name their log files inside a data dir: the segment and index counts
// of a cell come from these files where the data dirs are on this host (runner/broker-figures.ts).
// A target row declares its system's names (capabilities.logFiles); without them, files are not
// counted and the segment figure is the brokers' own, or absent: never a 0 for unknown.

export interface LogFileNames {
  /** A segment file's name (its size counts as log bytes). */
  segment: RegExp;
  /** An index file's name; absent: the system keeps none per segment. */
  index?: RegExp;
  /** How many directory levels below the data dir are walked (Kafka's <topic>-<partition>/ is level 1; NATS's jetstream/<account>/streams/<stream>/msgs/ is level 5). */
  maxDepth: number;
}

/** Kafka's layout, which durolab's engine follows: 20-digit base offset .log, .index and .timeindex in <topic>-<partition>/. */
export const KAFKA_STYLE_LOG_FILES: LogFileNames = { segment: /^\d{20}\.log$/, index: /^\d{20}\.(index|timeindex)$/, maxDepth: 2 };
