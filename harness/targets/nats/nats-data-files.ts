// NATS JetStream's data files as the file faults name them (harness/targets/data-files.ts): the
// stream's message blocks and index.db in jetstream/<account>/streams/<stream>/msgs/, its
// meta.inf and meta.sum, and the stream's Raft group's term-and-vote and peers files
// (jetstream/$SYS/_js_/S-*/) as its checkpoint. The lab runs one stream per cluster.
import type { DataFileSets } from '../data-files.ts';

const STREAM = 'jetstream/[^/]+/streams/[^/]+';

export const NATS_DATA_FILES: DataFileSets = {
  maxDepth: 5,
  sets: {
    'newest-segment': { describe: "the stream's newest message block, msgs/<n>.blk", pattern: () => new RegExp(`^${STREAM}/msgs/\\d+\\.blk$`), pick: 'newest' },
    'older-segment': { describe: "the stream's message block before the newest", pattern: () => new RegExp(`^${STREAM}/msgs/\\d+\\.blk$`), pick: 'older' },
    index: { describe: "the stream's msgs/index.db (its state: first and last sequence, per block)", pattern: () => new RegExp(`^${STREAM}/msgs/index\\.db$`) },
    checkpoint: { describe: "the stream's Raft group's tav.idx (term and vote) and peers.idx, jetstream/$SYS/_js_/S-*/", pattern: () => /^jetstream\/\$SYS\/_js_\/S-[^/]+\/(tav|peers)\.idx$/ },
    metadata: { describe: "the stream's meta.inf and meta.sum", pattern: () => new RegExp(`^${STREAM}/meta\\.(inf|sum)$`) },
  },
  lacks: {},
};
