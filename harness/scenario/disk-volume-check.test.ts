// scenario check's estimate of a load's volume on its fault disk: every shipped scenario's cells
// fit their disks; the sizes issue 38 found too small are refused with the estimate; the
// arithmetic of a rate-limited load.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultScenariosDir, listScenarios, loadScenario } from './loader.ts';
import { compileScenario } from './validate.ts';
import { batchBytes, estimateDiskVolume } from './disk-volume-check.ts';

const SCENARIOS = defaultScenariosDir();
const text = (name: string) => readFileSync(path.join(SCENARIOS, `${name}.yaml`), 'utf8');
const compile = (yaml: string) => compileScenario(yaml, 'test.yaml', { defaultName: 'test' });

describe('disk volume estimate', () => {
  it('every shipped scenario cell on a fault disk fits it, with room to spare', () => {
    let checked = 0;
    for (const { name } of listScenarios(SCENARIOS)) {
      const s = loadScenario(name, { scenariosDir: SCENARIOS });
      for (const cell of s.matrix) {
        const e = estimateDiskVolume(s, cell);
        if (!e) continue;
        checked++;
        expect(e.totalBytes, `${name} ${cell.label}`).toBeLessThanOrEqual(e.usableBytes);
      }
    }
    // The fault-disk scenarios (power cuts, crash states, disk models) are many: the check reached them.
    expect(checked).toBeGreaterThan(40);
  });

  it('peer-crash-states on its old 256 MiB disk and crash-states-io-modes on 256 MiB are refused with the estimate', () => {
    expect(() => compile(text('peer-crash-states').replace('diskMiB: 1024', 'diskMiB: 256'))).toThrow(
      /vm\.diskMiB: expected a fault disk that holds the load: cell durolab: no flush writes an estimated 707 MiB = 120\.0 MB\/s \(closed loop: the target's fault disk bound\) x 6\.0 s \+ 20 MiB of indexes \(1 replica\(s\) per disk\) onto each broker's disk, over the 218 MiB its filesystem holds \(85 %\): vm\.diskMiB 832 or more/,
    );
    expect(() => compile(text('crash-states-io-modes').replace('diskMiB: 512', 'diskMiB: 256'))).toThrow(/cell buffered, no flush writes an estimated 325 MiB = 40\.0 MB\/s .* x 8\.0 s/);
  });

  it('a rate-limited load: rate x batch bytes x load seconds x the replicas each disk holds', () => {
    const yaml = (diskMiB: number) => `question: How much does a rate-limited load write onto each broker's fault disk?
target: process
vm:
  diskMiB: ${diskMiB}
cluster: { brokers: 3, topic: t, partitions: 3, replicationFactor: 3, minInsyncReplicas: 2 }
settings: { acks: all }
workload: { recordBytes: 1KiB, recordsPerBatch: 16, rate: 100, warmup: 1s, duration: 5s, repetitions: 1 }
faults:
  - kind: power-cut
    target: all
    when: { at: 4s }
expectations:
  - corrupt == 0 in every trial
`;
    const s = compile(yaml(256));
    const e = estimateDiskVolume(s, s.matrix[0]!)!;
    expect(e.closedLoop).toBe(false);
    // The cut at 4 s stops the load before warm-up + duration (6 s).
    expect(e.loadSec).toBe(4);
    expect(e.replicasPerDisk).toBe(3);
    expect(e.bytesPerSec).toBe(100 * batchBytes(16, 1024));
    expect(e.totalBytes).toBe(100 * batchBytes(16, 1024) * 4 + 3 * 20 * 2 ** 20);
    // 6.6 MB + 60 MiB of indexes: over a 64 MiB disk's 54 MiB.
    expect(() => compile(yaml(64))).toThrow(/4:12 vm\.diskMiB: expected a fault disk that holds the load: cell base settings writes an estimated 67 MiB = 1\.7 MB\/s x 4\.0 s \+ 60 MiB of indexes \(3 replica\(s\) per disk\) onto each broker's disk, over the 54 MiB its filesystem holds \(85 %\): vm\.diskMiB 79 or more/);
  });
});
