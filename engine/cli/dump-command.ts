// `durolab engine dump`: every segment's batches and index entries, in the spirit of Kafka's
// kafka-dump-log. Read-only; corrupt bytes end a segment's walk with where and why, never an
// exception.
import fs from 'node:fs';
import path from 'node:path';
import { dumpLog, type DumpBatch, type DumpResult, type DumpSegment } from '../storage/index.ts';
import { BATCH_HEADER_BYTES } from '../records/index.ts';
import { parseCommandFlags, requireString } from '../common/flags.ts';
import { fmtInt } from './text-format.ts';

/** DumpBatch plus the header fields the storage dump leaves out (read from the batch's first 61 bytes). */
export interface DumpedBatch extends DumpBatch {
  producerId: number | null;
  producerEpoch: number | null;
  baseSequence: number | null;
  crc: number | null;
  attributes: number | null;
}

export interface DumpedSegment extends Omit<DumpSegment, 'batches'> {
  batches: DumpedBatch[];
  /** Batches whose CRC does not match (the walk goes on past them: their length field was sane). */
  invalidBatches: number;
}

export interface DumpReport extends Omit<DumpResult, 'segments'> {
  segments: DumpedSegment[];
  totals: { segments: number; batches: number; records: number; bytes: number; invalidBatches: number; stoppedSegments: number };
}

export interface DumpOptions {
  dir: string;
}

function readProducerFields(fd: number, b: DumpBatch, head: Buffer): DumpedBatch {
  let n = 0;
  try {
    n = fs.readSync(fd, head, 0, BATCH_HEADER_BYTES, b.position);
  } catch {
    n = 0;
  }
  if (n < BATCH_HEADER_BYTES) return { ...b, producerId: null, producerEpoch: null, baseSequence: null, crc: null, attributes: null };
  const pid = head.readBigInt64BE(43);
  return {
    ...b,
    producerId: pid >= BigInt(Number.MIN_SAFE_INTEGER) && pid <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(pid) : null,
    producerEpoch: head.readInt16BE(51),
    baseSequence: head.readInt32BE(53),
    crc: head.readUInt32BE(17),
    attributes: head.readInt16BE(21),
  };
}

export function runDump(opts: DumpOptions): DumpReport {
  const dir = path.resolve(opts.dir);
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch {
    throw new Error(`engine dump: --dir ${opts.dir}: no such directory (expected a partition directory)`);
  }
  if (!st.isDirectory()) throw new Error(`engine dump: --dir ${opts.dir} is not a directory`);
  const raw = dumpLog(dir);
  const head = Buffer.alloc(BATCH_HEADER_BYTES);
  const segments: DumpedSegment[] = raw.segments.map((seg) => {
    let batches: DumpedBatch[];
    let fd: number | null = null;
    try {
      fd = fs.openSync(seg.logPath, 'r');
      batches = seg.batches.map((b) => readProducerFields(fd!, b, head));
    } catch {
      // The file went away or is unreadable between the two reads: keep what the storage dump saw.
      batches = seg.batches.map((b) => ({ ...b, producerId: null, producerEpoch: null, baseSequence: null, crc: null, attributes: null }));
    } finally {
      if (fd !== null) fs.closeSync(fd);
    }
    return { ...seg, batches, invalidBatches: batches.filter((b) => !b.crcValid).length };
  });
  const all = segments.flatMap((s) => s.batches);
  return {
    ...raw,
    segments,
    totals: {
      segments: segments.length,
      batches: all.length,
      records: all.reduce((a, b) => a + b.records, 0),
      bytes: all.reduce((a, b) => a + b.size, 0),
      invalidBatches: all.filter((b) => !b.crcValid).length,
      stoppedSegments: segments.filter((s) => s.stoppedAt !== null).length,
    },
  };
}

export interface DumpFormatOptions {
  /** List each batch (default true). */
  records?: boolean;
  /** List the offset and time index entries (default false: only their sizes and problems). */
  index?: boolean;
}

function formatBatch(b: DumpedBatch): string {
  const fields = [
    `baseOffset: ${b.baseOffset}`,
    `lastOffset: ${b.lastOffset}`,
    `count: ${b.records}`,
    `position: ${b.position}`,
    `size: ${b.size}`,
    `crcValid: ${b.crcValid}`,
    `firstTimestamp: ${b.firstTimestamp}`,
    `maxTimestamp: ${b.maxTimestamp}`,
    `leaderEpoch: ${b.leaderEpoch}`,
    `producerId: ${b.producerId ?? '?'}`,
    `producerEpoch: ${b.producerEpoch ?? '?'}`,
    `baseSequence: ${b.baseSequence ?? '?'}`,
  ];
  if (b.crc !== null) fields.push(`crc: 0x${b.crc.toString(16).padStart(8, '0')}`);
  return fields.join(' ');
}

export function formatDump(r: DumpReport, opts: DumpFormatOptions = {}): string {
  const showBatches = opts.records !== false;
  const out: string[] = [`partition directory ${r.dir}`];
  out.push(
    `recovery-point checkpoint: ${r.recoveryPointCheckpoint ?? 'none'}; clean-shutdown marker: ${r.cleanShutdownMarker ? 'present' : 'absent'}` +
      (r.strayFiles.length > 0 ? `; stray files: ${r.strayFiles.join(', ')}` : ''),
  );
  for (const s of r.segments) {
    out.push('');
    out.push(`Dumping ${s.logPath} (${fmtInt(s.sizeBytes)} bytes, ${s.batches.length} batches${s.invalidBatches > 0 ? `, ${s.invalidBatches} with a bad CRC` : ''})`);
    if (showBatches) for (const b of s.batches) out.push(formatBatch(b));
    if (s.stoppedAt) {
      out.push(`scan stopped at position ${s.stoppedAt.position} of ${s.sizeBytes}: ${s.stoppedAt.reason}`);
    } else {
      out.push(`scan reached the end (${fmtInt(s.sizeBytes)} bytes)`);
    }
    for (const [label, ix] of [
      ['offset index', s.index],
      ['time index', s.timeIndex],
    ] as const) {
      const state = !ix.exists ? `missing${ix.problem && ix.problem !== 'missing' ? ` (${ix.problem})` : ''}` : `${ix.entries.length} entries, ${ix.sizeBytes} bytes`;
      out.push(`${label} ${ix.path}: ${state}${ix.exists && ix.problem ? `; problem: ${ix.problem}` : ''}`);
      if (opts.index) {
        if (label === 'offset index') for (const e of s.index.entries) out.push(`  offset: ${e.offset} position: ${e.position}`);
        else for (const e of s.timeIndex.entries) out.push(`  timestamp: ${e.timestamp} offset: ${e.offset}`);
      }
    }
  }
  const t = r.totals;
  out.push('');
  out.push(
    `${t.segments} segment(s), ${fmtInt(t.batches)} batches, ${fmtInt(t.records)} records, ${fmtInt(t.bytes)} bytes in batches; ` +
      `${t.invalidBatches} batch(es) with a bad CRC; ${t.stoppedSegments} segment(s) where the scan stopped early`,
  );
  return out.join('\n');
}

const HELP = `usage: durolab engine dump --dir D [options]

Prints each segment of the partition directory D like Kafka's kafka-dump-log: every batch
(base and last offset, position, size, CRC valid, timestamps, leader epoch, producer id,
epoch and base sequence) and the indexes. Read-only. On corrupt bytes the walk of that
segment stops and the dump says where and why; a batch with a sane length but a bad CRC is
listed with crcValid: false and the walk goes on.

  --dir D          partition directory
  --index          also list every offset index and time index entry
  --no-records     do not list batches (segment summaries, scan stops and indexes only)
  --json           print everything as JSON (batches and index entries included)
  -h, --help       this text
`;

export async function main(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags('engine dump', argv, {
    dir: { type: 'string' },
    index: { type: 'boolean', default: false },
    'no-records': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  }, HELP);
  if (parsed === null) return 0;
  const { values } = parsed;
  const report = runDump({ dir: requireString('engine dump', '--dir', values.dir, 'the partition directory') });
  console.log(values.json ? JSON.stringify(report, null, 2) : formatDump(report, { records: values['no-records'] !== true, index: values.index === true }));
  return 0;
}
