// A small message-definition table drives encoding and decoding: each API's request and
// response is a hand-written list of fields with the versions they exist in, the versions they
// may be null in and, for tagged fields, their tag (transcribed from Apache Kafka's
// clients/src/main/resources/common/message/*.json; nothing is read from those files at run
// time). Flexible versions use compact lengths and end every struct with a tagged-field section.
import { Reader, Writer } from './primitives.ts';
import { FileRegions } from './spliced-frame.ts';

export type Scalar = 'int8' | 'int16' | 'int32' | 'int64' | 'uint32' | 'float64' | 'bool' | 'string' | 'bytes' | 'records' | 'uuid';
export type FieldType = Scalar | { array: Scalar } | { struct: FieldDef[] } | { structArray: FieldDef[] };

export interface FieldDef {
  name: string;
  type: FieldType;
  /** Inclusive version range the field exists in. */
  since: number;
  until: number;
  /** The field may be null from this version on. */
  nullableSince?: number;
  /** Tagged field (in flexible versions only). */
  tag?: number;
  default?: unknown;
}

export interface MessageDef {
  name: string;
  /** First flexible version (Infinity: never flexible). */
  flexibleSince: number;
  fields: FieldDef[];
}

export type Struct = Record<string, unknown>;

interface FieldOpts {
  until?: number;
  nullable?: number;
  tag?: number;
  default?: unknown;
}

/** One field: `f('LeaderEpoch', 'int32', 7, { default: -1 })`. */
/** An array of structs: the `structArray` field type. */
export const structs = (fields: FieldDef[]): { structArray: FieldDef[] } => ({ structArray: fields });

export function f(name: string, type: FieldType, since = 0, opts: FieldOpts = {}): FieldDef {
  return { name, type, since, until: opts.until ?? Number.POSITIVE_INFINITY, nullableSince: opts.nullable, tag: opts.tag, default: opts.default };
}

function present(fd: FieldDef, version: number): boolean {
  return version >= fd.since && version <= fd.until;
}

function nullable(fd: FieldDef, version: number): boolean {
  return fd.nullableSince !== undefined && version >= fd.nullableSince;
}

function zero(fd: FieldDef, version: number): unknown {
  if (fd.default !== undefined) return fd.default;
  if (nullable(fd, version)) return null;
  const t = fd.type;
  if (typeof t === 'object') return 'struct' in t ? null : [];
  switch (t) {
    case 'bool':
      return false;
    case 'string':
      return '';
    case 'bytes':
    case 'records':
      return Buffer.alloc(0);
    case 'uuid':
      return Buffer.alloc(16);
    default:
      return 0;
  }
}

const SCALAR_MIN_BYTES: Record<Scalar, number> = { int8: 1, int16: 2, int32: 4, int64: 8, uint32: 4, float64: 8, bool: 1, string: 1, bytes: 1, records: 1, uuid: 16 };

function readScalar(r: Reader, t: Scalar, flexible: boolean, isNullable: boolean): unknown {
  switch (t) {
    case 'int8':
      return r.int8();
    case 'int16':
      return r.int16();
    case 'int32':
      return r.int32();
    case 'int64':
      return r.int64();
    case 'uint32':
      return r.uint32();
    case 'float64':
      return r.float64();
    case 'bool':
      return r.bool();
    case 'string':
      return r.string(flexible, isNullable);
    case 'bytes':
    case 'records':
      return r.bytes(flexible, isNullable);
    case 'uuid':
      return r.uuid();
  }
}

function readField(r: Reader, fd: FieldDef, version: number, flexible: boolean): unknown {
  const t = fd.type;
  const isNullable = nullable(fd, version);
  if (typeof t === 'string') return readScalar(r, t, flexible, isNullable);
  if ('array' in t) {
    const n = r.arrayLength(flexible, isNullable, SCALAR_MIN_BYTES[t.array]);
    if (n < 0) return null;
    const out: unknown[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = readScalar(r, t.array, flexible, false);
    return out;
  }
  if ('struct' in t) return readStruct(r, t.struct, version, flexible);
  const n = r.arrayLength(flexible, isNullable, 1);
  if (n < 0) return null;
  const out: Struct[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = r.field(`[${i}]`, () => readStruct(r, t.structArray, version, flexible));
  return out;
}

export function readStruct(r: Reader, fields: readonly FieldDef[], version: number, flexible: boolean): Struct {
  const out: Struct = {};
  for (const fd of fields) {
    if (!present(fd, version) || (fd.tag !== undefined && !flexible)) {
      out[fd.name] = zero(fd, version);
      continue;
    }
    if (fd.tag !== undefined) {
      out[fd.name] = zero(fd, version);
      continue;
    }
    out[fd.name] = r.field(fd.name, () => readField(r, fd, version, flexible));
  }
  if (flexible) {
    r.taggedFields((tag, sub) => {
      const fd = fields.find((x) => x.tag === tag && present(x, version));
      if (fd) out[fd.name] = sub.field(fd.name, () => readField(sub, fd, version, true));
    });
  }
  return out;
}

function writeScalar(w: Writer, t: Scalar, v: unknown, flexible: boolean, where: string): void {
  switch (t) {
    case 'int8':
      w.int8(v as number);
      return;
    case 'int16':
      w.int16(v as number);
      return;
    case 'int32':
      w.int32(v as number);
      return;
    case 'int64':
      w.int64(v as number);
      return;
    case 'uint32':
      w.uint32(v as number);
      return;
    case 'float64':
      w.float64(v as number);
      return;
    case 'bool':
      w.bool(v as boolean);
      return;
    case 'string':
      if (v !== null && typeof v !== 'string') throw new Error(`${where}: expected a string, got ${typeof v}`);
      w.string(v, flexible);
      return;
    case 'records':
      if (v instanceof FileRegions) {
        w.fileRecords(v, flexible);
        return;
      }
      if (v !== null && !Buffer.isBuffer(v)) throw new Error(`${where}: expected a Buffer or FileRegions, got ${typeof v}`);
      w.bytes(v, flexible);
      return;
    case 'bytes':
      if (v !== null && !Buffer.isBuffer(v)) throw new Error(`${where}: expected a Buffer, got ${typeof v}`);
      w.bytes(v, flexible);
      return;
    case 'uuid':
      w.uuid(v as Buffer);
      return;
  }
}

function writeField(w: Writer, fd: FieldDef, v: unknown, version: number, flexible: boolean, where: string): void {
  const t = fd.type;
  if (v === null && !nullable(fd, version) && !(typeof t === 'object' && 'struct' in t)) {
    throw new Error(`${where}: null is not allowed in version ${version}`);
  }
  if (typeof t === 'string') return writeScalar(w, t, v, flexible, where);
  if ('array' in t) {
    const a = v as unknown[] | null;
    w.arrayLength(a === null ? null : a.length, flexible);
    if (a) for (const x of a) writeScalar(w, t.array, x, flexible, where);
    return;
  }
  if ('struct' in t) return writeStruct(w, t.struct, (v ?? {}) as Struct, version, flexible, where);
  const a = v as Struct[] | null;
  w.arrayLength(a === null ? null : a.length, flexible);
  if (a) a.forEach((x, i) => writeStruct(w, t.structArray, x, version, flexible, `${where}[${i}]`));
}

function isDefault(fd: FieldDef, v: unknown, version: number): boolean {
  if (v === undefined || v === null) return true;
  const d = zero(fd, version);
  if (Array.isArray(v)) return v.length === 0 && Array.isArray(d);
  return v === d;
}

export function writeStruct(w: Writer, fields: readonly FieldDef[], value: Struct, version: number, flexible: boolean, where: string): void {
  const tagged: Array<[number, Buffer]> = [];
  for (const fd of fields) {
    if (!present(fd, version)) continue;
    const v = fd.name in value ? value[fd.name] : zero(fd, version);
    const at = `${where}.${fd.name}`;
    if (fd.tag !== undefined) {
      if (!flexible || isDefault(fd, v, version)) continue;
      const sub = new Writer(32);
      writeField(sub, fd, v, version, true, at);
      tagged.push([fd.tag, Buffer.from(sub.finish())]);
      continue;
    }
    writeField(w, fd, v, version, flexible, at);
  }
  if (flexible) w.taggedFields(tagged);
}

export function decodeMessage(def: MessageDef, version: number, r: Reader): Struct {
  return readStruct(r, def.fields, version, version >= def.flexibleSince);
}

export function encodeMessage(def: MessageDef, version: number, value: Struct, w: Writer = new Writer()): Writer {
  writeStruct(w, def.fields, value, version, version >= def.flexibleSince, `${def.name} v${version}`);
  return w;
}
