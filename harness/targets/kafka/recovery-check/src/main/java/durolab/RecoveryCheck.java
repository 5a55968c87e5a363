package durolab;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * A long-lived JVM that answers crash-state questions with Apache Kafka's own log recovery.
 *
 * <p>Protocol: one JSON request per line on stdin, one JSON answer per line on stdout (nothing
 * else is ever written there; logs go to stderr). See README.md and {@link Request}.
 *
 * <pre>
 * {"id":0,"ping":true}
 *   -> {"id":0,"ok":true,"pong":true,"kafkaVersion":"4.4.0",...}
 * {"id":7,"logDir":"/x/data","topic":"peer-cut","partition":0,"keys":false,"config":{...}}
 *   -> {"id":7,"ok":true,"logStartOffset":0,"logEndOffset":1234,...,"batches":[...]}
 *   -> {"id":7,"ok":false,"stage":"request|load|read","error":"<class>: <message>",...}
 * </pre>
 *
 * <p>Options: {@code --log LEVEL} (Log4j 2 level of Kafka's own logging on stderr; default off).
 * The JVM exits when stdin closes.
 */
public final class RecoveryCheck {
    private RecoveryCheck() {}

    public static void main(String[] args) throws IOException {
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--log") && i + 1 < args.length) {
                // Read by src/main/resources/log4j2.properties; must be set before any logger exists.
                System.setProperty("durolab.recovery.log", args[++i]);
            } else {
                System.err.println("usage: durolab.RecoveryCheck [--log off|error|warn|info|debug]  (requests on stdin, answers on stdout)");
                System.exit(2);
            }
        }
        // The answers own the real stdout; anything else that prints to System.out lands on stderr.
        PrintStream answers = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);

        ObjectMapper json = new ObjectMapper();
        CrashStateRecovery recovery = new CrashStateRecovery();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            ObjectNode answer = answer(json, recovery, line);
            answers.print(json.writeValueAsString(answer));
            answers.print('\n');
            answers.flush();
            if (answers.checkError()) break; // the reader went away
        }
        recovery.close();
    }

    /** One answer for one request line; never throws. */
    static ObjectNode answer(ObjectMapper json, CrashStateRecovery recovery, String line) {
        JsonNode id = null;
        try {
            JsonNode node = json.readTree(line);
            id = node == null ? null : node.get("id");
            Request req = Request.parse(node);
            if (req.ping()) return pong(json, req.id());
            return recovery.check(req, json);
        } catch (Request.Invalid e) {
            return failure(json, id, "request", e);
        } catch (IOException e) { // unparseable JSON
            return failure(json, id, "request", e);
        } catch (Throwable e) { // a bug or an unexpected Kafka exception: report it, keep serving
            return failure(json, id, "internal", e);
        }
    }

    static ObjectNode pong(ObjectMapper json, JsonNode id) {
        ObjectNode a = json.createObjectNode();
        a.set("id", id);
        a.put("ok", true);
        a.put("pong", true);
        a.put("kafkaVersion", org.apache.kafka.common.utils.internals.AppInfoParser.getVersion());
        a.put("kafkaCommitId", org.apache.kafka.common.utils.internals.AppInfoParser.getCommitId());
        a.put("java", System.getProperty("java.version"));
        a.put("pid", ProcessHandle.current().pid());
        // The broker defaults that decide durability, as this Kafka's own ConfigDef declares them.
        ObjectNode defaults = a.putObject("brokerDefaults");
        java.util.Map<String, Object> all = org.apache.kafka.server.config.AbstractKafkaConfig.CONFIG_DEF.defaultValues();
        for (String name : DURABILITY_DEFAULTS) {
            if (all.containsKey(name)) defaults.put(name, String.valueOf(all.get(name)));
        }
        return a;
    }

    /** Broker configs whose defaults a durability result depends on (reported by ping). */
    static final String[] DURABILITY_DEFAULTS = {
        "unclean.leader.election.enable", "min.insync.replicas", "default.replication.factor",
        "log.flush.interval.messages", "log.flush.interval.ms", "log.flush.scheduler.interval.ms",
        "log.flush.offset.checkpoint.interval.ms", "log.flush.start.offset.checkpoint.interval.ms",
        "replica.lag.time.max.ms", "broker.session.timeout.ms", "broker.heartbeat.interval.ms",
        "controller.quorum.election.timeout.ms", "log.segment.bytes", "log.dir.failure.timeout.ms",
        "num.recovery.threads.per.data.dir"
    };

    static ObjectNode failure(ObjectMapper json, JsonNode id, String stage, Throwable e) {
        ObjectNode a = json.createObjectNode();
        a.set("id", id);
        a.put("ok", false);
        a.put("stage", stage);
        a.put("error", describe(e));
        return a;
    }

    /** "<exception class>: <message>", then each cause as "; caused by <class>: <message>". */
    static String describe(Throwable e) {
        StringBuilder s = new StringBuilder(e.getClass().getName()).append(": ").append(e.getMessage());
        Throwable c = e.getCause();
        for (int depth = 0; c != null && c != e && depth < 5; depth++, e = c, c = c.getCause()) {
            s.append("; caused by ").append(c.getClass().getName()).append(": ").append(c.getMessage());
        }
        return s.toString();
    }
}
