// The target axis (matrix.target): cells per engine, each target's checks applied, the shipped
// side-by-side scenarios valid.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../engine/common/repo-root.ts';
import { compileScenario } from './index.ts';
import { cellTargetKind } from './target-axis.ts';

const compile = (text: string, file = 'axis.yaml') => compileScenario(text, file, { defaultName: 'axis' });

describe('matrix.target', () => {
  it('crosses every cell with each target, target first in id and label, with a driver both can talk to', () => {
    const s = compile(`question: q
cluster: { brokers: 1 }
matrix:
  target: [durolab, kafka]
  flush: [never, messages:1000]
`);
    expect(s.matrix.map((c) => c.id)).toEqual(['target=durolab,flush=never', 'target=durolab,flush=messages:1000', 'target=kafka,flush=never', 'target=kafka,flush=messages:1000']);
    expect(s.matrix[2]!.label).toMatch(/^kafka: /);
    expect(s.workload.driver).toBe('kafka');
    expect(s.matrix.map((c) => cellTargetKind(c.params, s.target))).toEqual(['process', 'process', 'kafka', 'kafka']);
    expect(compile(`question: q\nmatrix: { target: [durolab, kafka] }\n`).matrix.map((c) => c.id)).toEqual(['target=durolab', 'target=kafka']);
  });

  it("applies each target's refusals and rejects a driver one of them cannot use, or target: beside the axis", () => {
    expect(() => compile(`question: q\nmatrix: { target: [durolab, kafka], io: [buffered, dsync] }\n`)).toThrow(/matrix\.io\[1\]: expected a setting target: kafka can honour \(io: dsync has no Apache Kafka equivalent/);
    expect(() => compile(`question: q\nmatrix: { target: [durolab, kafka] }\nworkload: { driver: http }\n`)).toThrow(/workload\.driver: expected a driver target: process, kafka can talk to \(kafka\)/);
    expect(() => compile(`question: q\ntarget: kafka\nmatrix: { target: [durolab, kafka] }\n`)).toThrow(/target: expected either target: or matrix\.target/);
    expect(() => compile(`question: q\nmatrix: { target: [durolab, mysql] }\n`)).toThrow(/matrix\.target\[1\]: expected one of durolab \| process \| vm \| kafka \| external/);
  });

  it('an exclude entry naming a target drops only its cells, so a value only another target takes is not refused', () => {
    const s = compile(`question: q
matrix:
  target: [durolab, kafka]
  fetch.transfer: [sendfile, copy]
  exclude:
    - { target: kafka, fetch.transfer: copy }
`);
    expect(s.matrix.map((c) => c.id)).toEqual(['target=durolab,fetch.transfer=sendfile', 'target=durolab,fetch.transfer=copy', 'target=kafka,fetch.transfer=sendfile']);
    // Without the exclude, Kafka's cell with copy is refused, and the message says how to leave it out.
    expect(() => compile(`question: q\nmatrix: { target: [durolab, kafka], fetch.transfer: [sendfile, copy] }\n`)).toThrow(
      /matrix\.fetch\.transfer\[1\]: expected a setting target: kafka can honour \(fetch\.transfer: copy has no Apache Kafka equivalent.*matrix\.exclude/,
    );
    expect(() => compile(`question: q\nmatrix: { io: [buffered, dsync], exclude: [{ target: kafka, io: dsync }] }\n`)).toThrow(/matrix\.exclude\[0\]\.target: expected a target axis/);
    expect(() => compile(`question: q\nmatrix: { target: [durolab, kafka], io: [buffered, dsync], exclude: [{ target: kafka, flush: never }] }\n`)).toThrow(/matrix\.exclude\[0\]\.flush: expected a matrix key \(target, io\)/);
    expect(() => compile(`question: q\nmatrix: { target: [durolab, kafka], io: [buffered, direct], exclude: [{ target: kafka, io: dsync }] }\n`)).toThrow(/matrix\.exclude\[0\]/);
  });

  it('ships zero-copy, recovery-time, recovery-time-power-cut and partitions-scale on both targets', () => {
    for (const name of ['zero-copy', 'recovery-time', 'recovery-time-power-cut', 'partitions-scale']) {
      const file = path.join(repoRoot(), 'scenarios', `${name}.yaml`);
      const s = compile(readFileSync(file, 'utf8'), file);
      expect(new Set(s.matrix.map((c) => c.params.target))).toEqual(new Set(['durolab', 'kafka']));
    }
  });

  it('ships peer-acks-all and peer-fsync-intervals, both targets in one run', () => {
    for (const name of ['peer-acks-all', 'peer-fsync-intervals']) {
      const file = path.join(repoRoot(), 'scenarios', `${name}.yaml`);
      const s = compile(readFileSync(file, 'utf8'), file);
      expect(new Set(s.matrix.map((c) => c.params.target))).toEqual(new Set(['durolab', 'kafka']));
      expect(s.workload.driver).toBe('kafka');
    }
  });
});
