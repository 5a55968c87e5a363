// The floors of docs/architecture.md hold: no import of engine/ or harness/ runs uphill against
// its Floors table, no circle of rooms, every room placed. The checker itself is tested on a small
// tree of its own, so a green run means the imports were read, not that nothing was found.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importEdges, readFloors, roomCircles, roomOf, unplacedRooms, uphillImports } from '../scripts/layers.mjs';

const listed = (xs: Array<{ from: string; line: number; to: string }>) => xs.map((u) => `${u.from}:${u.line} -> ${u.to}`);

describe('the house (docs/architecture.md, Floors)', () => {
  const floors = readFloors();
  const edges = importEdges();

  it('reads the floors and the imports across rooms', () => {
    expect(floors.map((f) => f.floor)).toEqual(floors.map((_, i) => i + 1));
    const across = edges.filter((e) => roomOf(e.from) !== roomOf(e.to));
    expect(across.length).toBeGreaterThan(500);
  });

  it('places every room on a floor', () => {
    expect(unplacedRooms(floors)).toEqual([]);
  });

  it('has no import running uphill or along a floor', () => {
    expect(listed(uphillImports(edges, floors))).toEqual([]);
  });

  it('has no circle of rooms', () => {
    expect(roomCircles(edges)).toEqual([]);
  });
});

describe('the floors check on a tree of its own', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'durolab-layers-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  };
  write('docs/architecture.md', '# x\n\n## Floors\n\n| floor | rooms | holds |\n|---|---|---|\n| 1 | `engine` | e |\n| 2 | `harness/model` | m |\n| 3 | `harness/runner`, `harness/report` | r |\n\n## Next\n| 9 | `harness/ignored` | not in the section |\n');
  write('engine/a.ts', "export const a = 1;\n");
  write('harness/model/m.ts', "import { a } from '../../engine/a.ts';\nexport const m = a;\n");
  // Downhill, a multi-line type import, and a test file (never counted).
  write('harness/runner/r.ts', "import {\n  m,\n} from '../model/m.ts';\nimport type { X } from '../report/x.ts';\nexport const r = m;\n");
  write('harness/runner/r.test.ts', "import { y } from '../model/up.ts';\n");
  // Uphill through a lazy import(), and back along the same floor: a circle of runner and report.
  write('harness/model/up.ts', "export const load = () => import('../runner/r.ts');\n");
  write('harness/report/x.ts', "export { r } from '../runner/r.ts';\nexport type X = number;\n");
  write('harness/stray/s.ts', "export const s = 1;\n");

  it('finds uphill, same-floor and lazy imports, circles and unplaced rooms', () => {
    const floors = readFloors(root);
    expect(floors.map((f) => [f.floor, f.rooms])).toEqual([[1, ['engine']], [2, ['harness/model']], [3, ['harness/runner', 'harness/report']]]);
    const edges = importEdges(root);
    expect(listed(edges).sort()).toEqual([
      'harness/model/m.ts:1 -> engine/a.ts',
      'harness/model/up.ts:1 -> harness/runner/r.ts',
      'harness/report/x.ts:1 -> harness/runner/r.ts',
      'harness/runner/r.ts:1 -> harness/model/m.ts',
      'harness/runner/r.ts:4 -> harness/report/x.ts',
    ]);
    expect(listed(uphillImports(edges, floors)).sort()).toEqual([
      'harness/model/up.ts:1 -> harness/runner/r.ts',
      'harness/report/x.ts:1 -> harness/runner/r.ts',
      'harness/runner/r.ts:4 -> harness/report/x.ts',
    ]);
    expect(roomCircles(edges)).toEqual([['harness/model', 'harness/report', 'harness/runner']]);
    expect(unplacedRooms(floors, root)).toEqual(['harness/stray']);
  });

  it('names the file and line of a floor row without rooms', () => {
    write('docs/architecture.md', '## Floors\n\n| floor | rooms | holds |\n|---|---|---|\n| 1 | engine | no backticks |\n');
    expect(() => readFloors(root)).toThrow(/architecture\.md:5: expected the floor's rooms in backticks/);
  });
});
