// Pure parser for /proc/diskstats text (host or guest). Field layout, 0-based after a
// whitespace split (Documentation/admin-guide/iostats.rst):
//   0 major  1 minor  2 name
//   3 reads completed   4 reads merged   5 sectors read      6 ms reading
//   7 writes completed  8 writes merged  9 sectors written  10 ms writing
//  11 I/Os in flight   12 ms doing I/O  13 weighted ms doing I/O
//  14-17 discards (kernel >= 4.18): completed, merged, sectors, ms
//  18-19 flushes (kernel >= 5.5): completed, ms
// Sectors are always 512 bytes here, whatever the device's logical block size.

export interface DiskCounters {
  tMs: number;
  device: string;
  readsCompleted: number;
  readsMerged: number;
  sectorsRead: number;
  readTimeMs: number;
  writesCompleted: number;
  writesMerged: number;
  sectorsWritten: number;
  writeTimeMs: number;
  /** Gauge: requests issued to the driver and not yet completed. */
  inFlight: number;
  /** "io_ticks": ms during which at least one request was in flight (drives %util). */
  ioTimeMs: number;
  /** "time_in_queue": sum over requests of their time in flight (drives aqu-sz). */
  weightedIoTimeMs: number;
  discardsCompleted?: number;
  discardsMerged?: number;
  sectorsDiscarded?: number;
  discardTimeMs?: number;
  flushesCompleted?: number;
  flushTimeMs?: number;
}

/** Device names present in the text, in file order. */
export function diskstatsDevices(text: string): string[] {
  const names: string[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 3 && f[2]) names.push(f[2]);
  }
  return names;
}

function num(fields: string[], i: number, device: string): number {
  const v = Number(fields[i]);
  if (!Number.isFinite(v)) {
    throw new Error(`/proc/diskstats: field ${i} of device ${device} is not a number: ${JSON.stringify(fields[i])}`);
  }
  return v;
}

/** Parses the line of `device` out of `/proc/diskstats` text. */
export function parseDiskstats(text: string, device: string, tMs: number): DiskCounters {
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[2] !== device) continue;
    // Kernels before 2.6.25 printed 4-field partition lines; nothing this lab runs on.
    if (f.length < 14) {
      throw new Error(
        `/proc/diskstats: line for ${device} has ${f.length} fields, expected at least 14: ${JSON.stringify(line)}`,
      );
    }
    const c: DiskCounters = {
      tMs,
      device,
      readsCompleted: num(f, 3, device),
      readsMerged: num(f, 4, device),
      sectorsRead: num(f, 5, device),
      readTimeMs: num(f, 6, device),
      writesCompleted: num(f, 7, device),
      writesMerged: num(f, 8, device),
      sectorsWritten: num(f, 9, device),
      writeTimeMs: num(f, 10, device),
      inFlight: num(f, 11, device),
      ioTimeMs: num(f, 12, device),
      weightedIoTimeMs: num(f, 13, device),
    };
    if (f.length >= 18) {
      c.discardsCompleted = num(f, 14, device);
      c.discardsMerged = num(f, 15, device);
      c.sectorsDiscarded = num(f, 16, device);
      c.discardTimeMs = num(f, 17, device);
    }
    if (f.length >= 20) {
      c.flushesCompleted = num(f, 18, device);
      c.flushTimeMs = num(f, 19, device);
    }
    return c;
  }
  const found = diskstatsDevices(text);
  throw new Error(
    `/proc/diskstats: device ${JSON.stringify(device)} not found; devices present: ` +
      (found.length > 0 ? found.join(', ') : '(none: empty text)'),
  );
}
