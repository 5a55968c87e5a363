// Apache Kafka's data files as the file faults name them (harness/targets/data-files.ts): the
// topic's <topic>-<partition>/ segments and indexes, the log dir's offset checkpoints and each
// partition's leader-epoch-checkpoint, and KRaft's own log (__cluster_metadata-0/) as metadata.
import { escapeRegExp, kafkaStyleSegmentSets, type DataFileSets } from '../data-files.ts';

export const KAFKA_DATA_FILES: DataFileSets = {
  maxDepth: 1,
  sets: {
    ...kafkaStyleSegmentSets(),
    checkpoint: {
      describe: 'the log dir\'s recovery-point-offset-checkpoint, replication-offset-checkpoint and log-start-offset-checkpoint, and each <topic>-<partition>/leader-epoch-checkpoint',
      pattern: (t) => new RegExp(`^((recovery-point-offset|replication-offset|log-start-offset)-checkpoint|${escapeRegExp(t)}-\\d+/leader-epoch-checkpoint)$`),
    },
    metadata: { describe: 'the newest segment of the KRaft metadata log, __cluster_metadata-0/', pattern: () => /^__cluster_metadata-0\/\d{20}\.log$/, pick: 'newest' },
  },
  lacks: {},
};
