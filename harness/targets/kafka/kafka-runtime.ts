// What target kafka runs with, beyond the jars (install.ts): the class archive every node starts
// from (class-archive.ts), and, for `durolab kafka install` (`make kafka`), Kafka's crash-state
// recovery checker (recovery-check.ts), built so that tests and benches find it.
import { ensureClassArchive } from './class-archive.ts';
import { ensureKafka, type KafkaInstall } from './install.ts';
import { ensureRecoveryCheck } from './recovery-check.ts';

/** The jars (fetched when missing) and the class archive (made once: a node started and stopped, seconds off every start after). */
export async function ensureKafkaRuntime(opts: { log?: (line: string) => void } = {}): Promise<KafkaInstall> {
  const k = await ensureKafka(opts);
  return { ...k, classArchive: await ensureClassArchive(k, opts.log) };
}

/** `durolab kafka install`: fetch (or find cached) Apache Kafka's jars, make the class archive, build the recovery checker. */
export async function main(argv: string[]): Promise<number> {
  const [sub] = argv;
  if (sub !== 'install') {
    console.error("usage: durolab kafka install   (fetch Apache Kafka from Maven Central into the cache, make its class archive and build Kafka's crash-state recovery checker; `make kafka`)");
    return 2;
  }
  const log = (l: string) => console.log(l);
  const k = await ensureKafkaRuntime({ log });
  console.log(`Apache Kafka ${k.version} in ${k.libsDir} (java ${k.javaVersion}: ${k.java}); class archive: ${k.classArchive ?? 'none (the nodes load classes from the jars)'}`);
  console.log(`Kafka's recovery checker: ${await ensureRecoveryCheck(log)}`);
  return 0;
}
