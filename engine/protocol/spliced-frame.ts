// A response frame whose records are not in memory: a Fetch answered zero-copy holds, where
// each partition's records go, file regions that the listener sends with sendfile(2) (Kafka's
// FileRecords in a FetchResponse, written by TransferableRecords.writeTo). The encoder writes
// the length prefix of such a records field and leaves a hole; the frame is then its head bytes
// with holes at known positions, and its size prefix counts the holes' bytes.

/** A byte range of an open file; `fd` is the sender's to close once the frame is sent or dropped. */
export interface FileRegion {
  fd: number;
  position: number;
  length: number;
  /** The file's path, for messages. */
  file: string;
}

/** A records field's value served from files: the regions in order, `sizeInBytes` their sum. */
export class FileRegions {
  readonly sizeInBytes: number;
  constructor(readonly regions: readonly FileRegion[]) {
    this.sizeInBytes = regions.reduce((a, r) => a + r.length, 0);
  }
}

export interface SplicedFrame {
  /** The frame's bytes without the holes (size prefix included). */
  head: Buffer;
  /** Where in `head` each hole's bytes go, in order. */
  holes: ReadonlyArray<{ at: number; records: FileRegions }>;
  /** The frame's whole size on the wire: head plus holes. */
  wireBytes: number;
}

export function isSplicedFrame(v: Buffer | SplicedFrame): v is SplicedFrame {
  return !Buffer.isBuffer(v);
}

/** Every descriptor a frame holds (to close when it is sent or dropped). */
export function frameRegions(f: SplicedFrame): FileRegion[] {
  return f.holes.flatMap((h) => h.records.regions);
}
