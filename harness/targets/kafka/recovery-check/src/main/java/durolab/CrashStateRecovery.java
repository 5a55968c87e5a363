package durolab;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.transaction.TransactionLogConfig;
import org.apache.kafka.coordinator.transaction.TransactionStateManagerConfig;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * One request: the startup inputs of the log dir, UnifiedLog.create exactly as LogManager.loadLog
 * calls it (which runs LogLoader.load: the recovery), the batches of the recovered log, and the
 * log closed again with every file handle and mmap released before the answer is written.
 */
final class CrashStateRecovery implements AutoCloseable {
    /** At most this much is asked of UnifiedLog.read per call (it returns whole batches). */
    private static final int READ_CHUNK_BYTES = 8 << 20;

    /** The broker keeps one for its lifetime; so does this JVM (per-topic metrics are removed after each request). */
    private final BrokerTopicStats brokerTopicStats = new BrokerTopicStats(false);

    ObjectNode check(Request req, ObjectMapper json) {
        ObjectNode a = json.createObjectNode();
        a.set("id", req.id());
        File logDir = new File(req.logDir());
        TopicPartition tp = new TopicPartition(req.topic(), req.partition());
        File partitionDir = new File(logDir, UnifiedLog.logDirName(tp));
        LogDirFailureChannel failures = new LogDirFailureChannel(1);

        LogConfig config;
        try {
            config = logConfig(req.config());
        } catch (RuntimeException e) { // ConfigException: a name or value LogConfig refuses
            a.put("ok", false);
            a.put("stage", "request");
            a.put("error", RecoveryCheck.describe(e));
            return a;
        }
        StartupInputs in;
        try {
            if (!logDir.isDirectory()) return absent(a, false, null);
            in = StartupInputs.read(logDir, tp, failures);
        } catch (Throwable e) {
            return loadFailure(a, e, failures, logDir, false);
        }
        // LogManager.loadLogs only loads the directories it finds; a missing one is no log at all.
        if (!partitionDir.isDirectory()) return absent(a, true, in);

        long bytesBefore = Housekeeping.logFileBytes(partitionDir);
        int fdsBefore = Housekeeping.openFileDescriptors();
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "durolab-recovery-");
        scheduler.startup();
        UnifiedLog log = null;
        try {
            long t0 = System.nanoTime();
            try {
                log = openLog(partitionDir, config, in, scheduler, failures);
            } catch (Throwable e) {
                loadFailure(a, e, failures, logDir, true);
                inputs(a, in);
                return a;
            }
            double recoveryMs = millisSince(t0);

            a.put("ok", true);
            a.put("partitionDirFound", true);
            a.put("logStartOffset", log.logStartOffset());
            a.put("logEndOffset", log.logEndOffset());
            inputs(a, in);
            a.put("recoveryPointAfter", log.recoveryPoint());
            a.put("segments", log.numberOfSegments());
            a.put("recoveryMs", round3(recoveryMs));
            boolean offline = failures.hasOfflineLogDir(logDir.getPath());
            a.put("logDirOffline", offline);
            a.put("readPath", offline ? "segments" : "fetch");
            // The broker's LogDirFailureHandler then fails the dir; with no other live log dir
            // (durolab's brokers have one) LogManager.handleLogDirFailure halts the broker.
            if (offline) a.put("brokerWould", "take-log-dir-offline");
            ArrayNode batches = json.createArrayNode();
            long t1 = System.nanoTime();
            try (java.io.OutputStream dump = req.dumpTo() == null ? null : new java.io.BufferedOutputStream(new java.io.FileOutputStream(req.dumpTo()))) {
                if (offline) BatchReader.readSegments(log, req.keys(), batches, dump);
                else BatchReader.readAll(log, req.keys(), READ_CHUNK_BYTES, batches, dump);
            } catch (Throwable e) {
                a.put("ok", false);
                a.put("stage", "read");
                a.put("error", RecoveryCheck.describe(e));
            }
            a.put("readMs", round3(millisSince(t1)));
            a.put("batchCount", batches.size());
            closeLog(log, req.topic(), a);
            log = null;
            Housekeeping.drainAndStop(scheduler);
            long bytesAfter = Housekeeping.logFileBytes(partitionDir);
            a.put("logBytesBefore", bytesBefore);
            a.put("logBytesAfter", bytesAfter);
            a.put("truncatedBytes", bytesBefore - bytesAfter);
            a.set("batches", batches);
            return a;
        } finally {
            if (log != null) closeLog(log, req.topic(), a);
            Housekeeping.drainAndStop(scheduler);
            Housekeeping.releaseLeaks(fdsBefore);
        }
    }

    /** UnifiedLog.create with the arguments LogManager.loadLog passes (4.4.0), and Kafka's defaults for the broker configs. */
    private UnifiedLog openLog(File partitionDir, LogConfig config, StartupInputs in, KafkaScheduler scheduler, LogDirFailureChannel failures)
            throws IOException {
        return UnifiedLog.create(
                partitionDir,
                config,
                in.logStartOffset(),
                in.recoveryPoint(),
                scheduler,
                brokerTopicStats,
                Time.SYSTEM,
                TransactionStateManagerConfig.TRANSACTIONS_MAX_TIMEOUT_MS_DEFAULT, // transaction.max.timeout.ms
                new ProducerStateManagerConfig(
                        TransactionLogConfig.PRODUCER_ID_EXPIRATION_MS_DEFAULT, // producer.id.expiration.ms
                        TransactionLogConfig.TRANSACTION_PARTITION_VERIFICATION_ENABLE_DEFAULT),
                TransactionLogConfig.PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS_DEFAULT,
                failures,
                in.hadCleanShutdown(),
                Optional.empty(), // LogManager.loadLog passes no topic id
                new ConcurrentHashMap<>(), // numRemainingSegments (LogManager's recovery metrics)
                false, // remote.log.storage.system.enable: durolab's brokers have no tiered storage
                LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
    }

    /** The log dir or the partition's directory is not there: the broker loads no log, so none survives. */
    private static ObjectNode absent(ObjectNode a, boolean logDirFound, StartupInputs in) {
        a.put("ok", true);
        a.put("logDirFound", logDirFound);
        a.put("partitionDirFound", false);
        a.put("logStartOffset", 0L);
        a.put("logEndOffset", 0L);
        if (in != null) inputs(a, in);
        a.put("truncatedBytes", 0L);
        a.put("batchCount", 0);
        a.putArray("batches");
        return a;
    }

    private static void inputs(ObjectNode a, StartupInputs in) {
        a.put("recoveryPoint", in.recoveryPoint());
        a.put("checkpointLogStartOffset", in.logStartOffset());
        a.put("hadCleanShutdown", in.hadCleanShutdown());
        if (in.recoveryPointCheckpointError() != null) a.put("recoveryPointCheckpointError", in.recoveryPointCheckpointError());
        if (in.logStartOffsetCheckpointError() != null) a.put("logStartOffsetCheckpointError", in.logStartOffsetCheckpointError());
        a.put("metaProperties", in.metaProperties());
    }

    /**
     * A failed load, with what the broker would do about it. In LogManager.loadLogs (inLoadLog) an
     * IOException, or a KafkaStorageException caused by one (already reported to the
     * LogDirFailureChannel), takes the log dir offline; anything else, and any exception before
     * (the LogManager constructor making the checkpoint files), fails the broker's startup.
     */
    private static ObjectNode loadFailure(ObjectNode a, Throwable e, LogDirFailureChannel failures, File logDir, boolean inLoadLog) {
        a.put("ok", false);
        a.put("stage", "load");
        a.put("error", RecoveryCheck.describe(e));
        boolean offline = inLoadLog && (e instanceof IOException || (e instanceof KafkaStorageException && e.getCause() instanceof IOException));
        a.put("brokerWould", offline ? "take-log-dir-offline" : "fail-startup");
        a.put("logDirOffline", failures.hasOfflineLogDir(logDir.getPath()));
        return a;
    }

    /** The topic's LogConfig: Kafka's defaults, the request's topic configs, and no delay before deleting files. */
    static LogConfig logConfig(Map<String, String> topicConfigs) {
        Map<String, Object> props = new HashMap<>(topicConfigs);
        // Segments that recovery drops are renamed *.deleted and deleted by a scheduler task after
        // file.delete.delay.ms (60 s by default). 0 runs those tasks at once, so they are finished
        // (and their file handles closed) before the answer; what the log keeps does not change.
        props.put(TopicConfig.FILE_DELETE_DELAY_MS_CONFIG, "0");
        return new LogConfig(props);
    }

    /**
     * UnifiedLog.close, or, when it throws (it refuses to run once the log dir is offline), each
     * segment closed directly, so that no file handle or mmap outlives the request.
     */
    private void closeLog(UnifiedLog log, String topic, ObjectNode a) {
        try {
            log.close();
        } catch (Throwable e) {
            a.put("closedSegmentsDirectly", true);
            for (LogSegment s : log.logSegments()) {
                try {
                    s.close();
                } catch (Throwable e2) {
                    a.put("closeError", RecoveryCheck.describe(e2));
                }
            }
        } finally {
            log.removeLogMetrics();
            brokerTopicStats.removeMetrics(topic);
        }
    }

    private static double millisSince(long t0) {
        return (System.nanoTime() - t0) / 1e6;
    }

    private static double round3(double v) {
        return Math.round(v * 1000.0) / 1000.0;
    }

    @Override
    public void close() {
        brokerTopicStats.close();
    }
}
