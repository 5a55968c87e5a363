#!/usr/bin/env node
// The floors of the house: which room (a folder under harness/, or engine/) may import which.
// docs/architecture.md states them, in its "Floors" table; this script reads that table and
// holds every import of engine/ and harness/ (tests left out) to it: a room imports only rooms
// on lower floors. test/layers.test.ts runs it; `make layers` (or `node scripts/layers.mjs`)
// prints each import that runs uphill and each circle of rooms. Exit 1 when there is any.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const SOURCE = /\.(ts|mts|mjs)$/;
const TEST = /\.test\.(ts|mts|mjs)$/;

/** The room a repository path belongs to (engine/, harness/<folder>), or undefined. */
export function roomOf(rel) {
  if (rel.startsWith('engine/')) return 'engine';
  const m = /^harness\/([^/]+)\//.exec(rel);
  return m ? `harness/${m[1]}` : undefined;
}

/**
 * The floors as docs/architecture.md's "## Floors" table states them: rows `| N | rooms | holds |`,
 * rooms in backticks (`harness/model`). Throws naming the file and line of a malformed row.
 */
export function readFloors(root = ROOT) {
  const file = path.join(root, 'docs/architecture.md');
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const start = lines.findIndex((l) => /^## Floors\b/.test(l));
  if (start < 0) throw new Error(`${file}: expected a '## Floors' section with the floors table`);
  const floors = [];
  for (let i = start + 1; i < lines.length && !/^## /.test(lines[i]); i++) {
    const m = /^\|\s*(\d+)\s*\|([^|]*)\|/.exec(lines[i]);
    if (!m) continue;
    const rooms = [...m[2].matchAll(/`([^`]+)`/g)].map((r) => r[1].replace(/\/$/, ''));
    if (rooms.length === 0) throw new Error(`${file}:${i + 1}: expected the floor's rooms in backticks (e.g. \`harness/model\`), found '${m[2].trim()}'`);
    floors.push({ floor: Number(m[1]), rooms, line: i + 1 });
  }
  if (floors.length === 0) throw new Error(`${file}:${start + 1}: the Floors section has no table rows ('| 1 | \`engine\` | ... |')`);
  return floors;
}

export function floorOf(floors, room) {
  return floors.find((f) => f.rooms.includes(room))?.floor;
}

function sourceFiles(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'target') sourceFiles(p, out);
    } else if (SOURCE.test(e.name) && !TEST.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

// Static imports and re-exports (one or many lines), side-effect imports, and import('literal').
const IMPORT_PATTERNS = [
  /^\s*(?:import|export)\s[^;'"`]*?\sfrom\s*['"]([^'"]+)['"]/gm,
  /^\s*import\s*['"]([^'"]+)['"]/gm,
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
];

function resolveImport(fromFile, spec) {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(fromFile), spec);
  const candidates = [base, base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), `${base}.ts`, path.join(base, 'index.ts')];
  return candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile());
}

/** Every import between two source files of engine/ and harness/ (tests left out), with its line. */
export function importEdges(root = ROOT) {
  const edges = [];
  for (const file of [...sourceFiles(path.join(root, 'engine')), ...sourceFiles(path.join(root, 'harness'))]) {
    const text = fs.readFileSync(file, 'utf8');
    for (const pattern of IMPORT_PATTERNS) {
      for (const m of text.matchAll(pattern)) {
        const target = resolveImport(file, m[1]);
        if (!target) continue;
        const line = text.slice(0, m.index).split('\n').length + (m[0].startsWith('\n') ? 1 : 0);
        edges.push({ from: path.relative(root, file), to: path.relative(root, target), line });
      }
    }
  }
  return edges;
}

/** Imports that cross rooms against the table: to a room on the same or a higher floor, or to a room the table does not name. */
export function uphillImports(edges, floors) {
  const out = [];
  for (const e of edges) {
    const [a, b] = [roomOf(e.from), roomOf(e.to)];
    if (!a || !b || a === b) continue;
    const [fa, fb] = [floorOf(floors, a), floorOf(floors, b)];
    if (fa === undefined || fb === undefined || fb >= fa) out.push({ ...e, fromRoom: a, toRoom: b, fromFloor: fa, toFloor: fb });
  }
  return out;
}

/** Circles of rooms: strongly connected sets of two or more rooms in the room graph (Tarjan). */
export function roomCircles(edges) {
  const next = new Map();
  for (const e of edges) {
    const [a, b] = [roomOf(e.from), roomOf(e.to)];
    if (!a || !b || a === b) continue;
    if (!next.has(a)) next.set(a, new Set());
    if (!next.has(b)) next.set(b, new Set());
    next.get(a).add(b);
  }
  let index = 0;
  const idx = new Map(), low = new Map(), stack = [], onStack = new Set(), circles = [];
  const visit = (v) => {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); scc.push(w); } while (w !== v);
      if (scc.length > 1) circles.push(scc.sort());
    }
  };
  for (const v of next.keys()) if (!idx.has(v)) visit(v);
  return circles;
}

/** Rooms found under engine/ and harness/ that the table does not place. */
export function unplacedRooms(floors, root = ROOT) {
  const rooms = fs.readdirSync(path.join(root, 'harness'), { withFileTypes: true })
    .filter((e) => e.isDirectory()).map((e) => `harness/${e.name}`);
  return ['engine', ...rooms].filter((r) => floorOf(floors, r) === undefined);
}

function main() {
  const floors = readFloors();
  const edges = importEdges();
  const up = uphillImports(edges, floors);
  const circles = roomCircles(edges);
  const unplaced = unplacedRooms(floors);
  const crossing = edges.filter((e) => roomOf(e.from) && roomOf(e.to) && roomOf(e.from) !== roomOf(e.to));
  const pairs = new Set(crossing.map((e) => `${roomOf(e.from)} -> ${roomOf(e.to)}`));
  console.log(`${floors.reduce((n, f) => n + f.rooms.length, 0)} rooms on ${floors.length} floors (docs/architecture.md); ${crossing.length} imports across rooms (${pairs.size} room pairs); ${up.length} against the floors; ${circles.length} circles of rooms`);
  for (const u of up) console.log(`uphill: ${u.from}:${u.line} -> ${u.to}  (${u.fromRoom} floor ${u.fromFloor ?? '?'} -> ${u.toRoom} floor ${u.toFloor ?? '?'})`);
  for (const c of circles) console.log(`circle: ${c.join(' <-> ')}`);
  for (const r of unplaced) console.log(`unplaced room: ${r} (give it a floor in docs/architecture.md's Floors table)`);
  process.exitCode = up.length || circles.length || unplaced.length ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
