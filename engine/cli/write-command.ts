// `durolab engine write`: appends N records to a partition directory with the chosen write
// path and flush policy, and reports what it did (throughput, append latency, flushes).
import { parseSettingFlags, settingFlagOptions, settingFlagsHelp } from '../settings/index.ts';
import {
  formatFlushPolicy,
  Log,
  logConfigFromSettings,
  parseFlushPolicy,
  type FlushPolicy,
  type IoMode,
  type LogConfig,
  type LogStats,
  type RecoveryReport,
  type SyncCall,
} from '../storage/index.ts';
import { encodeBatch, type RecordInput } from '../records/index.ts';
import { parseByteSize, parseCommandFlags, parseIntFlag, requireString } from '../common/flags.ts';
import { LatencyRecorder, type LatencySummary } from '../common/latency.ts';
import { formatRecovery, recoveryHappened } from './recover-command.ts';
import { fmtBytes, fmtInt, fmtMBps } from './text-format.ts';

export interface WriteOptions {
  dir: string;
  records: number;
  recordBytes: number;
  batchRecords: number;
  io?: IoMode;
  flush?: FlushPolicy | string;
  sync?: SyncCall;
  segmentBytes?: number;
  indexIntervalBytes?: number;
  maxBatchBytes?: number;
  /** Stamped into every batch header with a running base sequence, so a dump names each batch's producer. */
  producerId?: number;
}

export interface WriteResult {
  dir: string;
  config: { io: IoMode; flush: string; sync: SyncCall; segmentBytes: number; indexIntervalBytes: number; maxBatchBytes: number };
  records: number;
  batches: number;
  /** Bytes appended (whole batches, headers included). */
  bytes: number;
  /** Wall time of the append loop (building each batch included). */
  seconds: number;
  /** Time inside Log.append only (the sum of the append latencies). */
  appendSeconds: number;
  /** bytes / seconds, in 10^6 bytes per second. */
  mbPerSec: number;
  recordsPerSec: number;
  /** Around each Log.append (includes the flush when the policy flushed in that append), µs. */
  appendLatencyUs: LatencySummary;
  flushes: number;
  flushTimeUs: LogStats['flushTimeUs'];
  segments: number;
  rolls: number;
  /** Flushes of the old segment at each roll (not in `flushes`). */
  rollFlushes: number;
  logStartOffset: number;
  logEndOffset: number;
  /** Log.close (final flush, checkpoint, clean-shutdown marker), ms. */
  closeMs: number;
  /** What Log.open found; `recovered` says whether it had to recover anything. */
  openReport: RecoveryReport;
  recovered: boolean;
}

const MAX_RECORD_BYTES = 64 * 1024 * 1024;

export function runWrite(opts: WriteOptions): WriteResult {
  const { records, recordBytes, batchRecords } = opts;
  if (!Number.isSafeInteger(records) || records < 1) throw new Error(`--records must be an integer >= 1, got ${records}`);
  if (!Number.isSafeInteger(recordBytes) || recordBytes < 0 || recordBytes > MAX_RECORD_BYTES) {
    throw new Error(`--record-bytes must be an integer in [0, ${MAX_RECORD_BYTES}], got ${recordBytes}`);
  }
  if (!Number.isSafeInteger(batchRecords) || batchRecords < 1) throw new Error(`--batch-records must be an integer >= 1, got ${batchRecords}`);
  const config: Partial<LogConfig> = {
    io: opts.io,
    flush: typeof opts.flush === 'string' ? parseFlushPolicy(opts.flush) : opts.flush,
    sync: opts.sync,
    segmentBytes: opts.segmentBytes,
    indexIntervalBytes: opts.indexIntervalBytes,
    maxBatchBytes: opts.maxBatchBytes,
  };
  const log = Log.open(opts.dir, config);
  const producerId = opts.producerId ?? 1;
  const value = Buffer.alloc(recordBytes);
  for (let i = 0; i < recordBytes; i++) value[i] = 0x61 + (i % 26);
  const lat = new LatencyRecorder();
  let written = 0;
  let batches = 0;
  let bytes = 0;
  let appendNs = 0n;
  let closeMs = 0;
  let stats: LogStats | null = null;
  let loopEnd = 0n;
  const start = process.hrtime.bigint();
  try {
    while (written < records) {
      const n = Math.min(batchRecords, records - written);
      const recs: RecordInput[] = new Array(n);
      for (let i = 0; i < n; i++) recs[i] = { value };
      const batch = encodeBatch({
        producerId,
        producerEpoch: 0,
        baseSequence: written % 0x80000000,
        firstTimestamp: Date.now(),
        records: recs,
      });
      const t0 = process.hrtime.bigint();
      log.append(batch, { assignOffsets: true });
      const dt = process.hrtime.bigint() - t0;
      appendNs += dt;
      lat.recordNs(dt);
      written += n;
      batches++;
      bytes += batch.length;
    }
  } finally {
    loopEnd = process.hrtime.bigint();
    stats = log.stats();
    // close flushes and writes the clean-shutdown marker; an append error above stays the one reported.
    try {
      log.close();
    } catch (e) {
      if (written === records) throw e;
    }
    closeMs = Number(process.hrtime.bigint() - loopEnd) / 1e6;
  }
  const seconds = Number(loopEnd - start) / 1e9;
  const st = stats!;
  const cfg = log.config;
  return {
    dir: log.dir,
    config: {
      io: cfg.io,
      flush: formatFlushPolicy(cfg.flush),
      sync: cfg.sync,
      segmentBytes: cfg.segmentBytes,
      indexIntervalBytes: cfg.indexIntervalBytes,
      maxBatchBytes: cfg.maxBatchBytes,
    },
    records: written,
    batches,
    bytes,
    seconds,
    appendSeconds: Number(appendNs) / 1e9,
    mbPerSec: seconds > 0 ? bytes / seconds / 1e6 : 0,
    recordsPerSec: seconds > 0 ? written / seconds : 0,
    appendLatencyUs: lat.summary(),
    flushes: st.flushes,
    flushTimeUs: st.flushTimeUs,
    segments: st.segments,
    rolls: st.rolls,
    rollFlushes: st.rollFlushes,
    logStartOffset: st.logStartOffset,
    logEndOffset: st.logEndOffset,
    closeMs,
    openReport: log.recovery,
    recovered: recoveryHappened(log.recovery),
  };
}

export function formatWrite(r: WriteResult): string {
  const l = r.appendLatencyUs;
  const c = r.config;
  const lines = [
    `wrote ${fmtInt(r.records)} records in ${fmtInt(r.batches)} batches (${fmtBytes(r.bytes)}) to ${r.dir}`,
    `  io=${c.io} flush=${c.flush} sync=${c.sync} segment.bytes=${c.segmentBytes} index.interval.bytes=${c.indexIntervalBytes}`,
    `  ${r.seconds.toFixed(3)} s (${r.appendSeconds.toFixed(3)} s inside Log.append): ${fmtMBps(r.mbPerSec)} MB/s, ${fmtInt(Math.round(r.recordsPerSec))} records/s`,
    `  append latency µs: p50 ${l.p50}  p99 ${l.p99}  p99.9 ${l.p999}  max ${l.max}  (${fmtInt(l.count)} appends)`,
    `  flushes: ${r.flushes}${r.flushes > 0 ? ` (${c.sync} p50 ${r.flushTimeUs.p50} µs, p99 ${r.flushTimeUs.p99} µs)` : ''}; segments: ${r.segments} (${r.rolls} rolls, each flushing the old segment); offsets [${r.logStartOffset}, ${r.logEndOffset}); close ${r.closeMs.toFixed(1)} ms`,
  ];
  if (r.recovered) {
    lines.push('  open() recovered the log:');
    lines.push(...formatRecovery(r.openReport).split('\n').map((s) => `    ${s}`));
  }
  return lines.join('\n');
}

/** The registry settings `engine write` takes as flags (--io, --flush, --sync, --segment-bytes, ...). */
const WRITE_SETTINGS = ['io', 'flush', 'sync', 'segment.bytes', 'index.interval.bytes', 'message.max.bytes'] as const;

const HELP = `usage: durolab engine write --dir D --records N --record-bytes B --batch-records K [options]

Appends N records of B value bytes, K per RecordBatch, to the partition directory D (created
if missing; an existing log is opened, recovered if needed, and appended to), then closes it
cleanly and prints what it did.

  --dir D                     partition directory
  --records N                 records to append (>= 1)
  --record-bytes B            value bytes per record (e.g. 1024 or 1KiB)
  --batch-records K           records per batch (>= 1)
${settingFlagsHelp(WRITE_SETTINGS)}
  --json                      print the result as JSON
  -h, --help                  this text

Append latency is measured around Log.append, so with --flush per-batch it includes the
fsync/fdatasync. Absolute numbers depend on the disk: on this project's virtual disk an
fdatasync costs ~80-250 µs, far less than on real media.
`;

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags('engine write', argv, {
    dir: { type: 'string' },
    records: { type: 'string' },
    'record-bytes': { type: 'string' },
    'batch-records': { type: 'string' },
    ...settingFlagOptions(WRITE_SETTINGS),
    json: { type: 'boolean', default: false },
  }, HELP);
  if (parsed === null) return 0;
  const { values } = parsed;
  const opts = parseWriteFlags(values);
  const result = runWrite(opts);
  console.log(values.json ? JSON.stringify(result, null, 2) : formatWrite(result));
  return 0;
}

export function parseWriteFlags(values: Record<string, unknown>): WriteOptions {
  const cmd = 'engine write';
  return {
    dir: requireString(cmd, '--dir', values.dir, 'the partition directory'),
    records: parseIntFlag('--records', requireString(cmd, '--records', values.records, 'an integer >= 1'), 1),
    recordBytes: parseByteSize('--record-bytes', requireString(cmd, '--record-bytes', values['record-bytes'], 'bytes per record value, e.g. 1024'), 0, MAX_RECORD_BYTES),
    batchRecords: parseIntFlag('--batch-records', requireString(cmd, '--batch-records', values['batch-records'], 'records per batch, >= 1'), 1),
    ...logConfigFromSettings(parseSettingFlags(values, WRITE_SETTINGS)),
  };
}
