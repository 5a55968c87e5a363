// engine/storage: the Kafka-style segment engine (see log.ts for the Log, load.ts for recovery).
export * from './types.ts';
export { defaultLogConfig, LOG_FIELDS, logConfigFromSettings, parseFlushPolicy, formatFlushPolicy, resolveLogConfig, IO_MODES, SYNC_CALLS } from './config.ts';
export { Log, recoverLog, type LogOpenOptions } from './log.ts';
export type { SegmentInfo } from './segment.ts';
export { dumpLog } from './dump.ts';
export { CHECKPOINT_FILE, CLEAN_SHUTDOWN_FILE, segmentFileName } from './files.ts';
export * from './errors.ts';
