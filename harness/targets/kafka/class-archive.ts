// An AppCDS archive of the classes a Kafka node loads at start (JDK 13+ dynamic archive,
// -XX:ArchiveClassesAtExit): made once per Kafka version and JVM, in the jars' cache, by
// starting one throwaway KRaft node and stopping it cleanly. Every node, format and restart
// after that maps the classes from the archive instead of loading and verifying them from the
// jars: measured on this 2-core machine, three nodes (format included) start in 7.2-7.3 s with it
// and 10.6-12.3 s without (scratch runs of startKafkaCluster, plain directories). The archive is
// an accelerator only: when it cannot be made the nodes start without it, and the log says why.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../../engine/common/free-port.ts';
import type { KafkaInstall } from './install.ts';
import { KafkaNodeProcess, formatNode, randomClusterId, writeNodeFiles, type KafkaNodeSpec } from './kafka-node.ts';

/** The archive's path for this install (per JVM version: an archive only maps into the JVM that wrote it). */
export function classArchivePath(k: Pick<KafkaInstall, 'libsDir' | 'javaVersion'>): string {
  return path.join(path.dirname(k.libsDir), `classes-java${k.javaVersion}.jsa`);
}

/** The archive when it exists or could be made now; null (and a log line saying why) when not. */
export async function ensureClassArchive(k: KafkaInstall, log: (line: string) => void = () => undefined): Promise<string | null> {
  const file = classArchivePath(k);
  if (existsSync(file)) return file;
  const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-kafka-cds-'));
  const partial = path.join(path.dirname(file), `${path.basename(file)}.partial-${process.pid}`);
  const t0 = Date.now();
  try {
    const node: KafkaNodeSpec = {
      id: 0,
      dir: path.join(work, 'node'),
      dataDir: path.join(work, 'data'),
      logPath: path.join(work, 'node.log'),
      port: await freePort(),
      controllerPort: await freePort(),
    };
    mkdirSync(path.dirname(file), { recursive: true });
    const files = writeNodeFiles(node, [node], {});
    await formatNode(k, node, files.config, files.log4j, randomClusterId());
    const jvm = new KafkaNodeProcess(k, node, files.config, files.log4j, 1, work, [`-XX:ArchiveClassesAtExit=${partial}`]);
    await jvm.start(120_000);
    // The archive is written at a clean exit only (SIGTERM: Kafka's shutdown, then the JVM's).
    if ((await jvm.stop(60_000)) !== 'clean' || !existsSync(partial)) throw new Error('the node did not exit cleanly with its archive written');
    renameSync(partial, file);
    log(`Kafka class archive (AppCDS) made in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${file}`);
    return file;
  } catch (err) {
    // The node's log outlives the scratch dir, beside where the archive would be.
    const kept = `${file}.failed.log`;
    try {
      copyFileSync(path.join(work, 'node.log'), kept);
    } catch {
      // no log: the failure came before the node started
    }
    log(`Kafka nodes start without a class archive (AppCDS): making ${file} failed: ${(err as Error).message.split('\n')[0]}${existsSync(kept) ? ` (node log: ${kept})` : ''}`);
    return null;
  } finally {
    rmSync(partial, { force: true });
    rmSync(work, { recursive: true, force: true });
  }
}
