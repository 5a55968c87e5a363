package durolab;

import java.io.File;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/** What keeps one request from leaving threads, tasks, file handles or mmaps behind. */
final class Housekeeping {
    /** How long to wait for the recovery's own one-shot tasks (async file deletes) after close. */
    private static final long DRAIN_SECONDS = 5;

    private Housekeeping() {}

    /**
     * Lets the one-shot tasks the recovery queued (file deletes, checkpoint flushes: all delay 0)
     * finish, by waiting for a no-op queued behind them (the executor runs tasks due at the same
     * time in submission order), then stops the scheduler, which drops periodic tasks such as the
     * producer-expiration check of a log whose construction failed.
     */
    static void drainAndStop(KafkaScheduler scheduler) {
        if (!scheduler.isStarted()) return;
        try {
            scheduler.scheduleOnce("durolab-drain", () -> { }).get(DRAIN_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // a stuck task: stop anyway
        }
        try {
            scheduler.shutdown();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * UnifiedLog.create can fail after it opened segments (e.g. a torn partition.metadata fails
     * the UnifiedLog constructor after LogLoader loaded the segments), leaving file handles and
     * mmaps that nothing can close; their Cleaners release them on the next GC. So when a request
     * ends with more descriptors open than it started with, run one.
     */
    static void releaseLeaks(int fdsBefore) {
        if (openFileDescriptors() > fdsBefore) System.gc();
    }

    /** Entries of /proc/self/fd, or -1 where there is no /proc. */
    static int openFileDescriptors() {
        String[] fds = new File("/proc/self/fd").list();
        return fds == null ? -1 : fds.length;
    }

    /** Bytes of the *.log files in the partition directory. */
    static long logFileBytes(File partitionDir) {
        File[] files = partitionDir.listFiles((d, name) -> name.endsWith(UnifiedLog.LOG_FILE_SUFFIX));
        long sum = 0;
        if (files != null) for (File f : files) sum += f.length();
        return sum;
    }
}
