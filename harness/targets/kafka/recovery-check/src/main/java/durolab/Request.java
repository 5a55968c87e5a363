package durolab;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One request line: {"id":7,"logDir":"/x/data","topic":"t","partition":0}, optionally
 * "keys":true (each record's key as base64) and "config":{topic-level config name: value} (the
 * topic's configs, e.g. segment.index.bytes, as CreateTopics set them; Kafka's defaults otherwise).
 * "dumpTo":"/path" writes the raw bytes of every batch read, in log order, to that file (the
 * harness decodes record headers from them). {"id":0,"ping":true} is a ping.
 */
record Request(JsonNode id, boolean ping, String logDir, String topic, int partition, boolean keys, Map<String, String> config, String dumpTo) {

    /** A request that cannot be carried out as written. */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;

        Invalid(String message) {
            super(message);
        }
    }

    static Request parse(JsonNode n) throws Invalid {
        if (n == null || !n.isObject()) throw new Invalid("a request is one JSON object per line");
        JsonNode id = n.get("id");
        if (n.path("ping").asBoolean(false)) return new Request(id, true, null, null, 0, false, Map.of(), null);
        String logDir = text(n, "logDir");
        String topic = text(n, "topic");
        JsonNode p = n.get("partition");
        if (p == null || !p.canConvertToInt() || !p.isIntegralNumber() || p.intValue() < 0) {
            throw new Invalid("\"partition\" must be a non-negative integer");
        }
        JsonNode keys = n.get("keys");
        if (keys != null && !keys.isBoolean()) throw new Invalid("\"keys\" must be true or false");
        Map<String, String> config = new LinkedHashMap<>();
        JsonNode c = n.get("config");
        if (c != null && !c.isNull()) {
            if (!c.isObject()) throw new Invalid("\"config\" must be an object of topic config name to value");
            for (Map.Entry<String, JsonNode> e : c.properties()) {
                if (!e.getValue().isValueNode() || e.getValue().isNull()) {
                    throw new Invalid("config \"" + e.getKey() + "\" must be a string, number or boolean");
                }
                config.put(e.getKey(), e.getValue().asText());
            }
        }
        JsonNode dump = n.get("dumpTo");
        if (dump != null && !dump.isNull() && (!dump.isTextual() || dump.textValue().isEmpty())) throw new Invalid("\"dumpTo\" must be a file path");
        String dumpTo = dump == null || dump.isNull() ? null : dump.textValue();
        return new Request(id, false, logDir, topic, p.intValue(), keys != null && keys.booleanValue(), config, dumpTo);
    }

    private static String text(JsonNode n, String field) throws Invalid {
        JsonNode v = n.get(field);
        if (v == null || !v.isTextual() || v.textValue().isEmpty()) throw new Invalid("\"" + field + "\" must be a non-empty string");
        return v.textValue();
    }
}
