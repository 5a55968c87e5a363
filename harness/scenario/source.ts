// Where a field path sits in the YAML text, and how zod's and yaml's complaints become
// ScenarioIssues with file:line:column.

import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type * as z from 'zod';
import { describeFound, formatPath, unknownKeyExpected, type ScenarioIssue } from './errors.ts';
import { knownKeysAt } from './schema.ts';

export interface Position {
  line: number;
  column: number;
}

export class SourceFile {
  readonly doc: Document.Parsed;
  private readonly lines: LineCounter;

  constructor(
    readonly file: string,
    readonly text: string,
  ) {
    this.lines = new LineCounter();
    // merge: `<<: *base` lets a file share a block of settings between include cells.
    this.doc = parseDocument(text, { lineCounter: this.lines, prettyErrors: true, uniqueKeys: true, merge: true });
  }

  positionOf(offset: number): Position {
    const { line, col } = this.lines.linePos(offset);
    return { line, column: col };
  }

  /**
   * The node at `path`, or the nearest ancestor that exists (a missing field is reported at
   * the mapping that should hold it). `key`: the key of the last segment rather than its value.
   */
  nodeAt(path: ReadonlyArray<PropertyKey>, key = false): Node | undefined {
    let node: unknown = this.doc.contents;
    let keyNode: Node | undefined;
    let complete = true;
    for (const seg of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(seg));
        if (!pair) {
          complete = false;
          break;
        }
        keyNode = pair.key as Node;
        const value = pair.value as Node | null;
        // `flush:` with nothing after it: the key is the place to point at.
        node = value && !(isScalar(value) && value.range && value.range[0] === value.range[1]) ? value : keyNode;
      } else if (isSeq(node) && typeof seg === 'number' && node.items[seg] !== undefined) {
        keyNode = undefined;
        node = node.items[seg];
      } else {
        complete = false;
        break;
      }
    }
    if (key && complete && keyNode) return keyNode;
    return (node as Node | null) ?? undefined;
  }

  position(path: ReadonlyArray<PropertyKey>, key = false): Position {
    const node = this.nodeAt(path, key);
    const start = node?.range?.[0];
    return start === undefined ? { line: 1, column: 1 } : this.positionOf(start);
  }

  issue(path: ReadonlyArray<PropertyKey>, expected: string, found: string, opts: { key?: boolean } = {}): ScenarioIssue {
    return { file: this.file, ...this.position(path, opts.key), path: formatPath(path), expected, found };
  }

  syntaxIssues(): ScenarioIssue[] {
    return this.doc.errors.map((e) => {
      const pos = e.linePos?.[0] ?? { line: 1, col: 1 };
      const reason = e.message.split(/ at line \d+, column \d+/)[0];
      const lineText = this.text.split(/\r?\n/)[pos.line - 1] ?? '';
      return {
        file: this.file,
        line: pos.line,
        column: pos.col,
        path: 'yaml',
        expected: `valid YAML (${reason})`,
        found: lineText.trim() === '' ? 'an empty line' : `'${lineText.trim()}'`,
      };
    });
  }

  zodIssues(issues: ReadonlyArray<z.core.$ZodIssue>, prefix: ReadonlyArray<PropertyKey>): ScenarioIssue[] {
    const out: ScenarioIssue[] = [];
    for (const iss of issues) {
      const path = [...prefix, ...iss.path];
      if (iss.code === 'unrecognized_keys') {
        const known = knownKeysAt(path);
        for (const k of iss.keys) out.push(this.issue([...path, k], unknownKeyExpected(k, known), `'${k}'`, { key: true }));
        continue;
      }
      const found = (iss.code === 'custom' && typeof iss.params?.found === 'string' ? iss.params.found : undefined) ?? describeFound(iss.input);
      out.push(this.issue(path, expectedText(iss), found));
    }
    return out;
  }
}

const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'true or false',
  array: 'a list',
  tuple: 'a list',
  object: 'a mapping',
};

function expectedText(iss: z.core.$ZodIssue): string {
  if (iss.message.startsWith('expected ')) return iss.message.slice('expected '.length);
  switch (iss.code) {
    case 'invalid_type':
      return TYPE_WORDS[iss.expected] ?? iss.expected;
    case 'invalid_value':
      return iss.values.map(String).join('|');
    case 'too_small': {
      const min = Number(iss.minimum);
      if (iss.origin === 'array') return iss.exact ? `a list of ${min}` : min <= 1 ? 'a non-empty list' : `a list of at least ${min}`;
      if (iss.origin === 'string') return 'a non-empty string';
      return `a number ${iss.inclusive ? '>=' : '>'} ${min}`;
    }
    case 'too_big': {
      const max = Number(iss.maximum);
      if (iss.origin === 'array') return iss.exact ? `a list of ${max}` : `a list of at most ${max}`;
      return `a number ${iss.inclusive ? '<=' : '<'} ${max}`;
    }
    default:
      return iss.message;
  }
}
