package durolab;

import java.io.File;
import java.io.IOException;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.metadata.properties.MetaProperties;
import org.apache.kafka.metadata.properties.PropertiesUtils;
import org.apache.kafka.storage.internals.checkpoint.CleanShutdownFileHandler;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogManager;

/**
 * What a starting 4.4.0 broker reads from one log dir before it loads the logs in it, in the
 * order and with the fallbacks of org.apache.kafka.storage.internals.log.LogManager:
 *
 * <ul>
 *   <li>The LogManager constructor makes one OffsetCheckpointFile per log dir for
 *       recovery-point-offset-checkpoint and log-start-offset-checkpoint; its constructor creates
 *       the file (empty) when it is missing. An exception there fails the broker's startup.
 *   <li>loadLogs: hadCleanShutdown = the .kafka_cleanshutdown file exists (its content is not
 *       read); the file is then deleted.
 *   <li>loadLogs reads both checkpoints; when read() throws (a malformed file is an IOException,
 *       which CheckpointFileWithFailureHandler reports to the LogDirFailureChannel and rethrows as
 *       KafkaStorageException) it logs a warning and uses an empty map: recovery point 0, and a log
 *       start offset of 0 (then raised to the first segment's base offset by LogLoader).
 *   <li>loadLog: recoveryPoint = recoveryPoints.getOrDefault(tp, 0), logStartOffset =
 *       logStartOffsets.getOrDefault(tp, 0).
 * </ul>
 */
record StartupInputs(
        boolean hadCleanShutdown,
        long recoveryPoint,
        long logStartOffset,
        String recoveryPointCheckpointError,
        String logStartOffsetCheckpointError,
        String metaProperties) {

    static StartupInputs read(File logDir, TopicPartition tp, LogDirFailureChannel failures) throws Exception {
        // meta.properties is read-only here: only whether Kafka's own parser accepts it.
        String meta = metaProperties(logDir);
        OffsetCheckpointFile recoveryPoints = new OffsetCheckpointFile(new File(logDir, LogManager.RECOVERY_POINT_CHECKPOINT_FILE), failures);
        OffsetCheckpointFile logStartOffsets = new OffsetCheckpointFile(new File(logDir, LogManager.LOG_START_OFFSET_CHECKPOINT_FILE), failures);

        boolean clean = false;
        CleanShutdownFileHandler cleanShutdown = new CleanShutdownFileHandler(logDir.getPath());
        if (cleanShutdown.exists()) {
            cleanShutdown.delete();
            clean = true;
        }

        long recoveryPoint = 0L;
        String recoveryPointError = null;
        try {
            recoveryPoint = recoveryPoints.read().getOrDefault(tp, 0L);
        } catch (Exception e) {
            recoveryPointError = RecoveryCheck.describe(e);
        }
        long logStartOffset = 0L;
        String logStartOffsetError = null;
        try {
            Map<TopicPartition, Long> m = logStartOffsets.read();
            logStartOffset = m.getOrDefault(tp, 0L);
        } catch (Exception e) {
            logStartOffsetError = RecoveryCheck.describe(e);
        }
        return new StartupInputs(clean, recoveryPoint, logStartOffset, recoveryPointError, logStartOffsetError, meta);
    }

    /** "ok", "missing", or why Kafka's MetaProperties parser refuses the file. */
    static String metaProperties(File logDir) {
        File f = new File(logDir, "meta.properties");
        if (!f.exists()) return "missing";
        try {
            new MetaProperties.Builder(PropertiesUtils.readPropertiesFile(f.getPath())).build();
            return "ok";
        } catch (IOException | RuntimeException e) {
            return RecoveryCheck.describe(e);
        }
    }
}
