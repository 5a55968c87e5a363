// The file faults' byte changes on real files, read back independently: every change a bit flip,
// a truncation or a lost write records is exactly what the file holds afterwards (the hash of the
// bytes at its offset, the size), and nothing else in the file moved. The named sets and globs
// match the systems' own names, and a symlink that leaves the data dir is refused.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, appendFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../common/seeded-random.ts';
import { matchDataFiles, OutsideDataDirError, selectorRefusal, parseFilesSelector } from '../../targets/data-files.ts';
import { DUROLAB_DATA_FILES } from '../../targets/durolab-data-files.ts';
import { KAFKA_DATA_FILES } from '../../targets/kafka/kafka-data-files.ts';
import { NATS_DATA_FILES } from '../../targets/nats/nats-data-files.ts';
import { flipBits, restoreChunk, saveChunks, sha256, truncateEnd } from './file-edits.ts';

const work = mkdtempSync(path.join(os.tmpdir(), 'durolab-file-edits-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function fileOf(name: string, bytes: Buffer): { path: string; rel: string; size: number } {
  const p = path.join(work, name);
  writeFileSync(p, bytes);
  return { path: p, rel: name, size: bytes.length };
}

const pattern = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + 7) & 0xff));

describe('file edits on real files', () => {
  it('a bit flip changes exactly the recorded chunks, one bit per byte, and the hashes read back', () => {
    const original = pattern(100_000);
    const f = fileOf('flip.log', original);
    const changes = flipBits(3, f, { chunks: 5, chunkBytes: 64, draw: seededRandom(42) });
    expect(changes).toHaveLength(5);
    const now = readFileSync(f.path);
    expect(now.length).toBe(original.length);
    const touched = new Set<number>();
    for (const c of changes) {
      expect(c).toMatchObject({ broker: 3, file: 'flip.log', length: 64, sizeBefore: 100_000, sizeAfter: 100_000, how: 'bit-flip' });
      expect(sha256(now.subarray(c.offset, c.offset + c.length))).toBe(c.newSha256);
      for (let i = c.offset; i < c.offset + c.length; i++) touched.add(i);
    }
    // Chunks may overlap: the first chunk's old hash is of the original bytes.
    expect(sha256(original.subarray(changes[0]!.offset, changes[0]!.offset + 64))).toBe(changes[0]!.oldSha256);
    for (let i = 0; i < now.length; i++) {
      if (!touched.has(i)) expect(now[i]).toBe(original[i]);
    }
    // Outside overlaps, every touched byte differs from the original by exactly one bit.
    const c0 = changes[0]!;
    const others = changes.slice(1);
    for (let i = c0.offset; i < c0.offset + 64; i++) {
      if (others.some((c) => i >= c.offset && i < c.offset + c.length)) continue;
      const x = now[i]! ^ original[i]!;
      expect(x !== 0 && (x & (x - 1)) === 0).toBe(true);
    }
    // The same seed replays the same offsets.
    const again = fileOf('flip2.log', original);
    expect(flipBits(3, again, { chunks: 5, chunkBytes: 64, draw: seededRandom(42) }).map((c) => c.offset)).toEqual(changes.map((c) => c.offset));
  });

  it('a truncation cuts the recorded bytes off the end, by bytes and by fraction; an empty file changes nothing', () => {
    const original = pattern(10_000);
    const f = fileOf('cut.log', original);
    const [c] = truncateEnd(0, f, { bytes: 1234 });
    expect(c).toMatchObject({ offset: 10_000 - 1234, length: 1234, sizeBefore: 10_000, sizeAfter: 8766, how: 'truncate' });
    expect(statSync(f.path).size).toBe(8766);
    expect(c!.oldSha256).toBe(sha256(original.subarray(8766)));
    expect(readFileSync(f.path).equals(original.subarray(0, 8766))).toBe(true);
    const g = fileOf('zero.log', original);
    expect(truncateEnd(0, g, { fraction: 1 })[0]).toMatchObject({ offset: 0, length: 10_000, sizeAfter: 0 });
    expect(statSync(g.path).size).toBe(0);
    expect(truncateEnd(0, g, { fraction: 1 })).toEqual([]);
    expect(flipBits(0, g, { chunks: 1, chunkBytes: 64, draw: seededRandom(1) })).toEqual([]);
  });

  it('a lost write puts the saved sector back over what was appended since (zeros past the old end), within the current size', () => {
    const first = pattern(6000);
    const f = fileOf('lost.log', first);
    const saved = saveChunks(1, f, { chunks: 1, chunkBytes: 8192, draw: seededRandom(7) });
    expect(saved[0]).toMatchObject({ offset: 4096, sizeAtSave: 6000 });
    const appended = Buffer.alloc(5000, 0xab);
    appendFileSync(f.path, appended);
    const before = readFileSync(f.path);
    const change = restoreChunk(saved[0]!);
    expect(change).toMatchObject({ offset: 4096, length: 11_000 - 4096, sizeBefore: 11_000, sizeAfter: 11_000, how: 'lost-write' });
    const now = readFileSync(f.path);
    expect(now.length).toBe(11_000);
    expect(now.subarray(0, 6000).equals(first)).toBe(true);
    expect(now.subarray(6000).every((b) => b === 0)).toBe(true);
    expect(sha256(before.subarray(4096))).toBe(change!.oldSha256);
    expect(sha256(now.subarray(4096))).toBe(change!.newSha256);
    // Nothing written since: nothing to record.
    expect(restoreChunk(saved[0]!)).toBeNull();
  });
});

describe('data file sets', () => {
  const kafkaDir = path.join(work, 'kafka-data');
  mkdirSync(path.join(kafkaDir, 't-0'), { recursive: true });
  mkdirSync(path.join(kafkaDir, '__cluster_metadata-0'), { recursive: true });
  for (const n of ['00000000000000000000', '00000000000000001000', '00000000000000002000']) {
    for (const ext of ['log', 'index', 'timeindex']) writeFileSync(path.join(kafkaDir, 't-0', `${n}.${ext}`), 'x');
  }
  writeFileSync(path.join(kafkaDir, 't-0', 'leader-epoch-checkpoint'), '0\n');
  writeFileSync(path.join(kafkaDir, 'replication-offset-checkpoint'), '0\n');
  writeFileSync(path.join(kafkaDir, '__cluster_metadata-0', '00000000000000000000.log'), 'm');
  const rels = (sel: string, sets = KAFKA_DATA_FILES, dir = kafkaDir) => matchDataFiles(dir, parseFilesSelector(sel)!, sets, 't').map((f) => f.rel);

  it("maps each named set to the system's own files, newest and older by base offset, and globs over relative paths", () => {
    expect(rels('newest-segment')).toEqual(['t-0/00000000000000002000.log']);
    expect(rels('older-segment')).toEqual(['t-0/00000000000000001000.log']);
    expect(rels('index')).toHaveLength(6);
    expect(rels('checkpoint')).toEqual(['replication-offset-checkpoint', 't-0/leader-epoch-checkpoint']);
    expect(rels('metadata')).toEqual(['__cluster_metadata-0/00000000000000000000.log']);
    expect(rels('t-0/*.timeindex')).toHaveLength(3);
    const nats = path.join(work, 'nats-data');
    const msgs = path.join(nats, 'jetstream', '$G', 'streams', 't', 'msgs');
    mkdirSync(msgs, { recursive: true });
    for (const n of ['1.blk', '2.blk', '10.blk', 'index.db']) writeFileSync(path.join(msgs, n), 'x');
    writeFileSync(path.join(msgs, '..', 'meta.inf'), '{}');
    writeFileSync(path.join(msgs, '..', 'meta.sum'), 'x');
    expect(rels('newest-segment', NATS_DATA_FILES, nats)).toEqual(['jetstream/$G/streams/t/msgs/10.blk']);
    expect(rels('older-segment', NATS_DATA_FILES, nats)).toEqual(['jetstream/$G/streams/t/msgs/2.blk']);
    expect(rels('metadata', NATS_DATA_FILES, nats)).toEqual(['jetstream/$G/streams/t/meta.inf', 'jetstream/$G/streams/t/meta.sum']);
    expect(rels('index', NATS_DATA_FILES, nats)).toEqual(['jetstream/$G/streams/t/msgs/index.db']);
  });

  it('refuses a set a system has none of, naming the system and what it offers; a glob that leaves the data dir does not parse', () => {
    expect(selectorRefusal({ set: 'metadata' }, 'process', DUROLAB_DATA_FILES)).toMatch(/^process has no metadata file set \(durolab's controller runs in the harness.*\); it offers newest-segment, older-segment, index, checkpoint or a glob$/);
    expect(selectorRefusal({ set: 'metadata' }, 'kafka', KAFKA_DATA_FILES)).toBeNull();
    expect(selectorRefusal({ set: 'index' }, 'vm', undefined)).toMatch(/target vm does not say what its data files are/);
    expect(parseFilesSelector('../etc/passwd')).toBeUndefined();
    expect(parseFilesSelector('/etc/passwd')).toBeUndefined();
  });

  it('refuses a symlink in the data dir whose real path leaves it, naming the path', () => {
    const dir = path.join(work, 'escape');
    mkdirSync(path.join(dir, 't-0'), { recursive: true });
    symlinkSync(work, path.join(dir, 't-0', 'out'));
    expect(() => matchDataFiles(dir, { set: 'newest-segment' }, DUROLAB_DATA_FILES, 't')).toThrow(OutsideDataDirError);
    expect(() => matchDataFiles(dir, { glob: '**' }, DUROLAB_DATA_FILES, 't')).toThrow(/t-0\/out is a symlink to .* outside the broker's data dir/);
  });
});
