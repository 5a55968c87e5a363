package durolab;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Iterator;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.server.storage.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.UnifiedLog;

/**
 * Reads a loaded log from its log start offset to its log end offset and describes every batch:
 * normally with UnifiedLog.read (the broker's fetch path: offset index lookup, FetchIsolation.LOG_END,
 * minOneMessage), or, when the log dir is offline in the LogDirFailureChannel (UnifiedLog then
 * refuses every read), straight from each segment's FileRecords. Whole batches either way: the
 * first one may start before logStartOffset.
 */
final class BatchReader {
    private BatchReader() {}

    /** dump: where the raw bytes of every batch go (null: nowhere). */
    static void readAll(UnifiedLog log, boolean keys, int chunkBytes, ArrayNode out, OutputStream dump) throws IOException {
        long next = log.logStartOffset();
        long end = log.logEndOffset();
        while (next < end) {
            FetchDataInfo info = log.read(next, chunkBytes, FetchIsolation.LOG_END, true);
            long before = next;
            for (RecordBatch b : info.records.batches()) {
                out.add(describe(copy(b, dump), b, keys, out.objectNode()));
                next = b.nextOffset();
            }
            if (next <= before) {
                throw new IllegalStateException("UnifiedLog.read(" + before + ") returned no batch past offset " + before + " (log end offset " + end + ")");
            }
        }
    }

    static void readSegments(UnifiedLog log, boolean keys, ArrayNode out, OutputStream dump) throws IOException {
        long start = log.logStartOffset();
        long end = log.logEndOffset();
        for (LogSegment s : log.logSegments()) {
            for (FileChannelRecordBatch b : s.log().batches()) {
                if (b.baseOffset() >= end) return;
                if (b.lastOffset() < start) continue;
                out.add(describe(copy(b, dump), b, keys, out.objectNode()));
            }
        }
    }

    /** The batch's bytes in memory, so that the full v2 header (base timestamp) is available; also written to dump. */
    private static RecordBatch copy(RecordBatch b, OutputStream dump) throws IOException {
        if (!(b instanceof FileChannelRecordBatch fb)) {
            if (dump != null) throw new IOException("dumpTo: batch at offset " + b.baseOffset() + " is not a file batch (" + b.getClass().getSimpleName() + ")");
            return b;
        }
        ByteBuffer buf = ByteBuffer.allocate(fb.sizeInBytes());
        fb.writeTo(buf);
        buf.flip();
        if (dump != null) dump.write(buf.array(), buf.arrayOffset(), buf.remaining());
        Iterator<MutableRecordBatch> it = MemoryRecords.readableRecords(buf).batches().iterator();
        return it.hasNext() ? it.next() : b;
    }

    private static ObjectNode describe(RecordBatch m, RecordBatch onDisk, boolean keys, ObjectNode o) {
        boolean valid = m.isValid();
        o.put("baseOffset", m.baseOffset());
        o.put("lastOffset", m.lastOffset());
        o.put("producerId", m.producerId());
        o.put("producerEpoch", m.producerEpoch());
        o.put("baseSequence", m.baseSequence());
        o.put("crc", m.checksum());
        Integer count = m.countOrNull();
        o.put("records", count != null ? count.longValue() : (valid ? countRecords(m) : -1L));
        o.put("firstTimestamp", m instanceof DefaultRecordBatch d ? d.baseTimestamp() : (valid ? firstTimestamp(m) : -1L));
        o.put("maxTimestamp", m.maxTimestamp());
        o.put("isValid", valid);
        o.put("magic", m.magic());
        o.put("sizeInBytes", m.sizeInBytes());
        o.put("partitionLeaderEpoch", m.partitionLeaderEpoch());
        o.put("isTransactional", m.isTransactional());
        o.put("isControl", m.isControlBatch());
        o.put("compression", m.compressionType().name);
        if (onDisk instanceof FileChannelRecordBatch fb) o.put("position", fb.position());
        if (keys) {
            ArrayNode k = o.putArray("keys");
            if (valid) {
                for (Record r : m) {
                    ByteBuffer key = r.key();
                    if (key == null) {
                        k.addNull();
                    } else {
                        byte[] bytes = new byte[key.remaining()];
                        key.get(bytes);
                        k.add(Base64.getEncoder().encodeToString(bytes));
                    }
                }
            } else {
                o.putNull("keys"); // a batch that fails its CRC is not decoded
            }
        }
        return o;
    }

    private static long countRecords(RecordBatch m) {
        long n = 0;
        for (Record ignored : m) n++;
        return n;
    }

    private static long firstTimestamp(RecordBatch m) {
        for (Record r : m) return r.timestamp();
        return -1L;
    }
}
