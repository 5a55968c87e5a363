// What Apache Kafka does by default where a durability result depends on it, read from the
// Kafka the lab runs (never written down by hand): the broker configs' defaults from its own
// ConfigDef (the recovery-check JVM's ping), and the feature levels a new cluster is formatted
// with (kafka-storage version-mapping: e.g. eligible.leader.replicas.version). run.json keeps
// both in targetInfo; a scenario's own settings are in its settings.
import { execa } from 'execa';
import type { KafkaInstall } from './install.ts';
import { ensureRecoveryCheck, KafkaRecoveryChecker } from './recovery-check.ts';

/** "name=value, ..." of the broker defaults, or why they could not be read. */
export async function kafkaBrokerDefaults(install: KafkaInstall, log?: (line: string) => void): Promise<string> {
  try {
    const checker = await KafkaRecoveryChecker.start(install, await ensureRecoveryCheck(log));
    await checker.close();
    return Object.entries(checker.brokerDefaults).map(([k, v]) => `${k}=${v}`).join(', ');
  } catch (err) {
    return `unavailable: ${(err as Error).message.split('\n')[0]}`;
  }
}

/** "feature=level, ..." a cluster formatted by this Kafka gets (its latest metadata version), or why not. */
export async function kafkaFormatFeatures(install: KafkaInstall): Promise<string> {
  const args = ['-Xmx128m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xshare:auto', '-Xlog:disable', '-cp', `${install.libsDir}/*`, 'kafka.tools.StorageTool', 'version-mapping'];
  const r = await execa(install.java, args, { reject: false, all: true, timeout: 60_000 });
  const lines = String(r.all ?? '').split('\n').map((l) => l.trim()).filter((l) => /^[a-z.]+=\S/.test(l));
  if (r.exitCode !== 0 || lines.length === 0) return `unavailable: kafka-storage version-mapping exited ${r.exitCode ?? r.signal}: ${String(r.all ?? '').trim().slice(-200)}`;
  return lines.join(', ');
}
