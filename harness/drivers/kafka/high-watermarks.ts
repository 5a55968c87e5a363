// Each partition's high watermark as its leader reports it now, through the kafka driver: one
// Metadata request for the leaders, then one ListOffsets LATEST (read uncommitted: the HW) per
// leader with all of its partitions, the leaders asked at once. Read just before a fault
// (harness/checker/after-fault.ts recordHwBeforeFault), so it must not hold the fault back:
// everything is bounded by one deadline, and a partition without an answer by then (its leader
// unknown, its broker slow or refusing) holds the reason instead of a number.
import { KafkaWire, metadataFromAny } from './wire.ts';

export async function kafkaHighWatermarks(
  bootstrap: string[],
  addressOf: (brokerId: number) => string,
  topic: string,
  partitions: readonly number[],
  timeoutMs: number,
): Promise<Map<number, number | { error: string }>> {
  const deadline = Date.now() + timeoutMs;
  const out = new Map<number, number | { error: string }>();
  const left = () => Math.max(1, deadline - Date.now());
  let metadata;
  try {
    metadata = await metadataFromAny(bootstrap, [topic], left());
  } catch (err) {
    for (const p of partitions) out.set(p, { error: `Metadata: ${(err as Error).message}` });
    return out;
  }
  const byLeader = new Map<number, number[]>();
  for (const p of partitions) {
    const m = metadata.partitions.find((x) => x.topic === topic && x.partition === p);
    if (!m || m.leader < 0) {
      out.set(p, { error: `Metadata names no leader of ${topic}-${p}${m?.error ? ` (${m.error})` : ''}` });
      continue;
    }
    const list = byLeader.get(m.leader) ?? [];
    list.push(p);
    byLeader.set(m.leader, list);
  }
  await Promise.all(
    [...byLeader].map(async ([leader, ps]) => {
      let wire: KafkaWire | null = null;
      try {
        wire = new KafkaWire(addressOf(leader), left());
        for (const [p, hw] of await wire.listOffsets(topic, ps, -1)) out.set(p, hw);
      } catch (err) {
        for (const p of ps) out.set(p, { error: `ListOffsets from broker ${leader}: ${(err as Error).message}` });
      } finally {
        wire?.close();
      }
    }),
  );
  return out;
}
