// Apache Kafka's broker jars, resolved from Maven Central by the pom beside this file with the
// machine's Maven, into a cache outside the checkout (~/.cache/durolab/kafka-<version>/libs, or
// $DUROLAB_CACHE/kafka-<version>/libs). `make kafka` fetches them; target: kafka fetches them on
// first use with a progress line. Nothing but Apache Kafka and its declared runtime
// dependencies (plus the Log4j 2 backend its distribution ships) is put on the classpath.
// kafka-runtime.ts adds what nodes and checks run with: the class archive, the recovery checker.
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { repoRoot } from '../../../engine/common/repo-root.ts';
import { findExecutable } from '../../vm/prerequisites.ts';

export interface KafkaInstall {
  /** Apache Kafka's version (the pom's kafka.version, checked against the broker jar's name). */
  version: string;
  /** Folder of the jars: the JVM's classpath is `<libsDir>/*`. */
  libsDir: string;
  /** The java executable and its version line ("17.0.15"). */
  java: string;
  javaVersion: string;
  /** The AppCDS archive every node starts with (class-archive.ts), or null: the nodes load classes from the jars. */
  classArchive: string | null;
}

/** The pom kept in the repository (harness/targets/kafka/pom.xml). */
export function kafkaPomPath(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const beside = path.join(here, 'pom.xml');
  // From the bundle (dist/durolab.mjs) the pom is found under the repository instead.
  return existsSync(beside) ? beside : path.join(repoRoot(), 'harness/targets/kafka/pom.xml');
}

export function kafkaVersionOfPom(pom = kafkaPomPath()): string {
  const m = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(readFileSync(pom, 'utf8'));
  if (!m) throw new Error(`${pom}: expected a <kafka.version> property`);
  return m[1]!.trim();
}

export function kafkaCacheDir(version: string): string {
  const base = process.env.DUROLAB_CACHE ?? path.join(os.homedir(), '.cache', 'durolab');
  return path.join(base, `kafka-${version}`);
}

/** The java to run Kafka with: $JAVA_HOME/bin/java, else the one on PATH. */
export function findJava(): string | undefined {
  const home = process.env.JAVA_HOME;
  if (home && existsSync(path.join(home, 'bin', 'java'))) return path.join(home, 'bin', 'java');
  return findExecutable('java');
}

/** Why Kafka cannot run here (no JDK, no Maven and no cached jars), or null. */
export function kafkaPrerequisiteProblem(): string | null {
  if (!findJava()) return 'a JDK (java 17 or later) on PATH or in $JAVA_HOME: Apache Kafka 4 runs on it and javac builds its crash-state recovery checker (Debian: openjdk-17-jdk-headless)';
  const version = kafkaVersionOfPom();
  if (!existsSync(path.join(kafkaCacheDir(version), 'libs', `kafka_2.13-${version}.jar`)) && !findExecutable('mvn')) {
    return `Maven (mvn) to fetch Apache Kafka ${version} from Maven Central (Debian: maven), or the jars already in ${kafkaCacheDir(version)}/libs`;
  }
  return null;
}

export async function javaVersionOf(java: string): Promise<string> {
  const r = await execa(java, ['-version'], { reject: false, timeout: 20_000 });
  const m = /version "([^"]+)"/.exec(`${r.stderr}\n${r.stdout}`);
  if (!m) throw new Error(`${java} -version: expected a line with version "...", found: ${String(r.stderr).slice(0, 200)}`);
  return m[1]!;
}

/**
 * The cached jars of the pom's Kafka version, fetching them with `mvn dependency:copy-dependencies`
 * first when missing. The copy lands in a temporary folder renamed into place, so an interrupted
 * fetch never leaves a half classpath.
 */
export async function ensureKafka(opts: { log?: (line: string) => void } = {}): Promise<KafkaInstall> {
  const log = opts.log ?? (() => undefined);
  const java = findJava();
  if (!java) throw new Error(kafkaPrerequisiteProblem()!);
  const pom = kafkaPomPath();
  const version = kafkaVersionOfPom(pom);
  const dir = kafkaCacheDir(version);
  const libsDir = path.join(dir, 'libs');
  const brokerJar = `kafka_2.13-${version}.jar`;
  if (!existsSync(path.join(libsDir, brokerJar))) {
    const mvn = findExecutable('mvn');
    if (!mvn) throw new Error(kafkaPrerequisiteProblem() ?? 'mvn not found');
    mkdirSync(dir, { recursive: true });
    const tmp = path.join(dir, `libs.partial-${process.pid}`);
    rmSync(tmp, { recursive: true, force: true });
    const args = ['-B', '-q', '-f', pom, 'dependency:copy-dependencies', '-DincludeScope=runtime', `-DoutputDirectory=${tmp}`];
    log(`fetching Apache Kafka ${version} and its dependencies from Maven Central into ${libsDir} (mvn ${args.join(' ')}) ...`);
    const t0 = Date.now();
    const r = await execa(mvn, args, { reject: false, all: true, timeout: 600_000 });
    if (r.exitCode !== 0) {
      rmSync(tmp, { recursive: true, force: true });
      throw new Error(`mvn ${args.join(' ')} failed (exit ${r.exitCode ?? r.signal}): ${String(r.all ?? '').trim().split('\n').slice(-15).join('\n')}`);
    }
    if (!existsSync(path.join(tmp, brokerJar))) {
      throw new Error(`mvn ${args.join(' ')} finished but ${brokerJar} is not among the copied jars in ${tmp}`);
    }
    rmSync(libsDir, { recursive: true, force: true });
    renameSync(tmp, libsDir);
    writeFileSync(path.join(dir, 'jars.txt'), readdirSync(libsDir).sort().join('\n') + '\n');
    log(`fetched Apache Kafka ${version}: ${readdirSync(libsDir).length} jars in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  // The class archive is kafka-runtime.ts's to add (it starts a node to make it).
  return { version, libsDir, java, javaVersion: await javaVersionOf(java), classArchive: null };
}
