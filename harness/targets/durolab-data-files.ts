// durolab's broker's data files as the file faults name them (harness/targets/data-files.ts):
// Kafka's layout per partition directory, its checkpoints beside the segments. Its controller
// runs in the harness and keeps nothing on the brokers' disks: no metadata set.
import { escapeRegExp, kafkaStyleSegmentSets, type DataFileSets } from './data-files.ts';

export const DUROLAB_DATA_FILES: DataFileSets = {
  maxDepth: 1,
  sets: {
    ...kafkaStyleSegmentSets(),
    checkpoint: {
      describe: 'recovery-point-offset-checkpoint, high-watermark-checkpoint and leader-epoch-checkpoint of each <topic>-<partition>/',
      pattern: (t) => new RegExp(`^${escapeRegExp(t)}-\\d+/(recovery-point-offset|high-watermark|leader-epoch)-checkpoint$`),
    },
  },
  lacks: { metadata: "durolab's controller runs in the harness: its brokers keep no metadata log on their disks" },
};
