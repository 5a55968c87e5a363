// The class archive every Kafka node starts from (class-archive.ts): made by `make kafka` (or
// the first run), it must map into this JVM with Kafka's classpath, and Kafka's own classes must
// come from it, or the nodes would silently load everything from the jars again.
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classArchivePath } from './class-archive.ts';
import { requireKafka } from './kafka-requirements.ts';

describe('Kafka class archive', () => {
  it("is made once, maps with -Xshare:on, and serves Kafka's classes", async (ctx) => {
    const k = await requireKafka(ctx);
    expect(k.classArchive).toBe(classArchivePath(k));
    expect(existsSync(k.classArchive!)).toBe(true);
    // -Xshare:on: a JVM that cannot map the archive exits with an error instead of falling back.
    const r = await execa(k.java, ['-Xshare:on', `-XX:SharedArchiveFile=${k.classArchive}`, '-Xlog:class+load=info', '-cp', `${k.libsDir}/*`, 'kafka.Kafka', '--version'], { reject: false, all: true, timeout: 60_000 });
    expect(r.exitCode, String(r.all).slice(-500)).toBe(0);
    const fromArchive = String(r.all)
      .split('\n')
      .filter((l) => l.includes('source: shared objects file (top)'));
    // The dynamic archive's own layer ("top") holds the classes a node loaded at start: even
    // `--version` takes over a thousand from it (1,716 here), Kafka's own among them.
    expect(fromArchive.length).toBeGreaterThan(1000);
    expect(fromArchive.filter((l) => / org\.apache\.kafka\.| kafka\./.test(l)).length).toBeGreaterThan(10);
    expect(String(r.all)).toContain(k.version);
  }, 180_000);
});
