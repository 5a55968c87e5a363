// Cutting a log's segment list back to an offset (Kafka's LocalLog.truncateTo and
// truncateFullyAndStartAt): whole segments past it are closed and their files removed, the
// segment holding it is cut at a batch boundary, and an offset below the log start starts the
// log over there. The caller closes the active writer first and opens the new one afterwards.
import fs from 'node:fs';
import { fsyncDir } from '../common/atomic-file.ts';
import { segmentIndexFor } from './log-read.ts';
import { LogSegment } from './segment.ts';
import type { LogConfig } from './types.ts';

/** Truncates `segments` in place so no batch holds an offset >= offset; returns the new last (active) segment. */
export function truncateSegments(dir: string, segments: LogSegment[], config: LogConfig, window: Buffer, offset: number): LogSegment {
  const idx = segmentIndexFor(segments, offset);
  const drop = segments.splice(idx < 0 ? 0 : idx + 1);
  for (const seg of drop) {
    seg.close();
    for (const p of [seg.paths.log, seg.paths.index, seg.paths.timeIndex]) fs.rmSync(p, { force: true });
  }
  if (segments.length === 0) {
    // Below the log start: start over at offset.
    segments.push(LogSegment.create(dir, offset, config));
  } else {
    segments[segments.length - 1].truncateTo(offset, config.maxBatchBytes, window);
  }
  if (drop.length > 0) fsyncDir(dir);
  return segments[segments.length - 1];
}
