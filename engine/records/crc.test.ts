// CRC-32C: every implementation against RFC 3720's vectors and against @node-rs/crc32 (the
// implementation Kafka-compatible results were checked with before), at every length 0..4096
// and unaligned offsets (the addon's own kernel takes over at 1,536 bytes), and at random
// lengths and initial values past that; the addon must be the one running under CI=true.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32c as nodeRsCrc32c } from '@node-rs/crc32';
import { describe, expect, it } from 'vitest';
import { crc32c, crc32cImplementation, crc32cImplementations, describeCrc32c } from './crc.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** RFC 3720 appendix B.4, and the usual check value. */
const iscsiReadPdu = Buffer.from(
  ['01c00000', '00000000', '00000000', '00000000', '14000000', '00000400', '00000014', '00000018', '28000000', '00000000', '02000000', '00000000'].join(''),
  'hex',
);
const VECTORS: Array<[string, Buffer, number]> = [
  ['32 bytes of zeroes', Buffer.alloc(32, 0), 0x8a9136aa],
  ['32 bytes of 0xff', Buffer.alloc(32, 0xff), 0x62a8ab43],
  ['32 incrementing bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e],
  ['32 decrementing bytes', Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i)), 0x113fdb5c],
  ['an iSCSI SCSI Read (10) command PDU', iscsiReadPdu, 0xd9963a56],
  ['"123456789"', Buffer.from('123456789'), 0xe3069283],
  ['nothing', Buffer.alloc(0), 0],
];

describe.each(crc32cImplementations().map((i) => [i.name, i] as const))('CRC-32C %s', (_name, impl) => {
  it.each(VECTORS)('RFC 3720: %s', (_what, buf, expected) => {
    expect(impl.crc32c(buf)).toBe(expected);
  });

  it('equals @node-rs/crc32 at every length 0..4096 and byte offsets 0..7', () => {
    const pool = randomBytes(4096 + 8);
    let mismatches = 0;
    const first: string[] = [];
    for (let offset = 0; offset < 8; offset++) {
      for (let len = 0; len <= 4096; len++) {
        const view = pool.subarray(offset, offset + len);
        const got = impl.crc32c(view);
        const want = nodeRsCrc32c(view);
        if (got !== want) {
          mismatches++;
          if (first.length < 5) first.push(`offset ${offset} length ${len}: ${got} != ${want}`);
        }
      }
    }
    expect(first).toEqual([]);
    expect(mismatches).toBe(0);
  });

  it('takes a plain Uint8Array and views into a larger ArrayBuffer', () => {
    const bytes = new Uint8Array(randomBytes(1000));
    const view = new Uint8Array(bytes.buffer, 3, 900);
    expect(impl.crc32c(bytes)).toBe(nodeRsCrc32c(Buffer.from(bytes)));
    expect(impl.crc32c(view)).toBe(nodeRsCrc32c(Buffer.from(view)));
  });

  it('continues a previous CRC: crc(b, crc(a)) = crc(a + b), at random splits', () => {
    const buf = randomBytes(300_000);
    for (const cut of [0, 1, 7, 4095, 65536, 123_457, 299_999, 300_000]) {
      const a = buf.subarray(0, cut);
      const b = buf.subarray(cut);
      expect(impl.crc32c(b, impl.crc32c(a))).toBe(impl.crc32c(buf));
    }
    // A previous value in the upper half of the 32-bit range (an unsigned number above 2^31).
    const prev = 0xfedcba98;
    expect(impl.crc32c(buf, prev)).toBe(nodeRsCrc32c(buf, prev));
  });

  it('equals @node-rs/crc32 at 400 random lengths up to 300,000 bytes with random initial values', () => {
    const pool = randomBytes(300_064);
    const first: string[] = [];
    for (let i = 0; i < 400; i++) {
      const offset = Math.floor(Math.random() * 64);
      const len = 1536 + Math.floor(Math.random() * (300_000 - 1536));
      const initial = Math.floor(Math.random() * 2 ** 32);
      const view = pool.subarray(offset, offset + len);
      const got = impl.crc32c(view, initial);
      const want = nodeRsCrc32c(view, initial);
      if (got !== want && first.length < 5) first.push(`offset ${offset} length ${len} initial ${initial}: ${got} != ${want}`);
    }
    expect(first).toEqual([]);
  });

  it('equals @node-rs/crc32 on large and odd-sized buffers (up to 16 MiB + 3)', () => {
    for (const n of [65535, 65536, 65537, 1 << 20, (1 << 20) + 13, (16 << 20) + 3]) {
      const buf = randomBytes(n);
      expect(impl.crc32c(buf), `length ${n}`).toBe(nodeRsCrc32c(buf));
      expect(impl.crc32c(buf.subarray(5)), `length ${n - 5} at offset 5`).toBe(nodeRsCrc32c(buf.subarray(5)));
    }
  });
});

describe('which CRC-32C runs', () => {
  it('is the native addon (CI=true: a missing addon fails here with its reason)', () => {
    const c = crc32cImplementation;
    if (c.name !== 'native') {
      if (process.env.CI === 'true' || process.env.DUROLAB_CRC32C === undefined) {
        throw new Error(`the CRC-32C addon is not running: ${c.fallbackReason}`);
      }
      // DUROLAB_CRC32C=isa-l or =node-rs outside CI: asked for, and it must say so.
      expect(c.fallbackReason).toMatch(/DUROLAB_CRC32C/);
      if (c.name === '@node-rs/crc32') expect(crc32c).toBe(nodeRsCrc32c);
      return;
    }
    expect(c.fallbackReason).toBeNull();
    // The own kernel where the CPU has AVX-512 VPCLMULQDQ, ISA-L alone where it does not: either way the detail says which.
    expect(c.detail).toMatch(
      /^(AVX-512 VPCLMULQDQ folding interleaved with 4 SSE4\.2 crc32 streams \(crc32c-fold\.c\) from 1,536 bytes, ISA-L \d+\.\d+\.\d+ crc32_iscsi below|ISA-L \d+\.\d+\.\d+ crc32_iscsi alone: this CPU lacks AVX-512 VPCLMULQDQ for the own kernel) \(N-API addon .*crc32c\.node\)$/,
    );
    expect(crc32c).not.toBe(nodeRsCrc32c);
    expect(describeCrc32c()).toMatch(/^native: /);
    expect(crc32cImplementations().map((i) => i.name)).toEqual(['native', 'isa-l', '@node-rs/crc32']);
  });

  it('rejects what is not a byte array with a TypeError naming the argument', () => {
    for (const impl of crc32cImplementations().filter((i) => i.name !== '@node-rs/crc32')) {
      expect(() => (impl.crc32c as (x: unknown) => number)('abc')).toThrow(/data must be a Uint8Array or Buffer/);
      expect(() => (impl.crc32c as (x: unknown) => number)(new Uint32Array(4))).toThrow(/byte array/);
      expect(() => (impl.crc32c as (x: unknown, y: unknown) => number)(Buffer.alloc(1), '1')).toThrow(/initial must be a number/);
    }
    expect(crc32cImplementations().length).toBeGreaterThan(0);
  });

  it('falls back to @node-rs/crc32 with its reason when asked (DUROLAB_CRC32C=node-rs), in a fresh process', () => {
    const script = `import('./engine/records/crc.ts').then((m) => console.log(JSON.stringify({ ...m.crc32cImplementation, line: m.describeCrc32c(), check: m.crc32c(Buffer.from('123456789')) })))`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, env: { ...process.env, DUROLAB_CRC32C: 'node-rs' }, encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { name: string; fallbackReason: string; line: string; check: number };
    expect(out.name).toBe('@node-rs/crc32');
    expect(out.fallbackReason).toBe('DUROLAB_CRC32C=node-rs asks for @node-rs/crc32');
    expect(out.line).toBe('@node-rs/crc32 (fallback: DUROLAB_CRC32C=node-rs asks for @node-rs/crc32)');
    expect(out.check).toBe(0xe3069283);
  });

  it('runs ISA-L alone when asked (DUROLAB_CRC32C=isa-l), its checks and appends too, in a fresh process', () => {
    const script = `import('./engine/records/crc.ts').then((m) => { const b = Buffer.alloc(70000, 7); console.log(JSON.stringify({ ...m.crc32cImplementation, names: m.crc32cImplementations().map((i) => i.name), long: m.crc32c(b), framing: m.nativeRecordsFramingOk !== null })); })`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, env: { ...process.env, DUROLAB_CRC32C: 'isa-l' }, encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { name: string; fallbackReason: string; names: string[]; long: number; framing: boolean };
    if (process.env.CI !== 'true' && crc32cImplementation.name === '@node-rs/crc32') {
      expect(out.name).toBe('@node-rs/crc32'); // no addon here: nothing to force
      return;
    }
    expect(out.name).toBe('isa-l');
    expect(out.fallbackReason).toBe('DUROLAB_CRC32C=isa-l asks for ISA-L alone');
    expect(out.names).toEqual(['isa-l', '@node-rs/crc32']);
    expect(out.long).toBe(nodeRsCrc32c(Buffer.alloc(70000, 7)));
    expect(out.framing).toBe(true);
    const bad = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root, env: { ...process.env, DUROLAB_CRC32C: 'fast' }, encoding: 'utf8', timeout: 30_000 });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('DUROLAB_CRC32C: expected native, isa-l or node-rs, found "fast"');
  });
});
