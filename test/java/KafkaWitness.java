// The Java client as a witness against durolab (run in single-file mode by
// engine/server/kafka/java-client.test.ts: `java -cp <kafka-clients jars> KafkaWitness.java
// <bootstrap> <topic> <n> [assign|group]`). Produces n records with acks=all and
// enable.idempotence=true, then consumes every partition from the beginning, with assign() (no
// group, the default) or through a consumer group (subscribe(), group "java-witness-<topic>",
// auto.offset.reset=earliest, offsets committed), and checks each record byte for byte.
// Prints one JSON line; exits 1 on any mismatch.
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class KafkaWitness {
  static byte[] value(int i) {
    StringBuilder sb = new StringBuilder("java witness ").append(i).append(' ');
    for (int j = 0; j < i % 97; j++) sb.append(j % 3 == 0 ? 'ß' : (char) ('a' + j % 26));
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], topic = args[1];
    int n = Integer.parseInt(args[2]);
    boolean group = args.length > 3 && args[3].equals("group");
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    long t0 = System.nanoTime();
    List<TopicPartition> parts = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      for (PartitionInfo info : producer.partitionsFor(topic)) parts.add(new TopicPartition(topic, info.partition()));
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
        acks.add(producer.send(new ProducerRecord<>(topic, i % parts.size(), key, value(i))));
      }
      for (Future<RecordMetadata> f : acks) f.get();
    }
    long produceMs = (System.nanoTime() - t0) / 1_000_000;

    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    if (group) {
      c.put(ConsumerConfig.GROUP_ID_CONFIG, "java-witness-" + topic);
      c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    }
    int consumed = 0, mismatches = 0;
    Set<Integer> seen = new HashSet<>();
    long t1 = System.nanoTime();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c)) {
      if (group) consumer.subscribe(List.of(topic));
      else {
        consumer.assign(parts);
        consumer.seekToBeginning(parts);
      }
      long deadline = System.currentTimeMillis() + 60_000;
      while (seen.size() < n && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          consumed++;
          int i = Integer.parseInt(new String(r.key(), StandardCharsets.UTF_8).substring(1));
          if (!Arrays.equals(r.value(), value(i)) || r.partition() != i % parts.size() || !seen.add(i)) mismatches++;
        }
      }
      if (group) consumer.commitSync();
    }
    long consumeMs = (System.nanoTime() - t1) / 1_000_000;
    System.out.println("{\"produced\":" + n + ",\"consumed\":" + consumed + ",\"distinct\":" + seen.size() + ",\"mismatches\":" + mismatches
        + ",\"partitions\":" + parts.size() + ",\"mode\":\"" + (group ? "group" : "assign") + "\",\"produceMs\":" + produceMs + ",\"consumeMs\":" + consumeMs + "}");
    System.exit(mismatches == 0 && seen.size() == n ? 0 : 1);
  }
}
