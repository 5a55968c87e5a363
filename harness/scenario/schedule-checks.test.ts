// `scenario check` on fault schedules: what cannot apply is refused, naming the entry and field.
import { describe, expect, it } from 'vitest';
import { compileScenario } from './index.ts';

const compile = (faults: string, extra = '', cluster = '{ brokers: 3 }') =>
  compileScenario(`question: q\n${extra}cluster: ${cluster}\nworkload: { warmup: 0s, duration: 6s }\nfaults:\n${faults}`, 's.yaml', { defaultName: 's' });

describe('scenario check on fault schedules', () => {
  it('takes a list of entries, a lasting pause with its duration, followers as victims', () => {
    const s = compile('  - { kind: pause, target: followers, when: { at: 1s }, duration: 2s }\n  - { kind: process-kill, target: leader, when: { at: 4s } }\n');
    expect(s.faults).toEqual([
      { kind: 'pause', target: 'followers', when: { at: 1 }, duration: 2 },
      { kind: 'process-kill', target: 'leader', when: { at: 4 } },
    ]);
  });

  it('refuses a pause without a duration, a duration on a kind that does not last, and unknown fields', () => {
    expect(() => compile('  - { kind: pause, target: leader, when: { at: 1s } }\n')).toThrow(/faults\[0\]\.duration: expected duration: S with a pause fault \(how long it lasts before its heal\), found none/);
    expect(() => compile('  - { kind: process-kill, target: leader, when: { at: 1s }, duration: 2s }\n')).toThrow(/faults\[0\]\.duration: expected no duration on a process-kill fault \(it does not last: only pause(, [a-z-]+)* have one\)/);
    expect(() => compile('  - { kind: pause, target: leader, when: { at: 1s }, duration: 2s, heal: now }\n')).toThrow(/faults\[0\]\.heal/);
  });

  it('refuses a duration past the load, naming the entry', () => {
    expect(() => compile('  - { kind: pause, target: leader, when: { at: 1s }, duration: 1s }\n  - { kind: pause, target: followers, when: { between: [2s, 4s] }, duration: 3s }\n')).toThrow(
      /faults\[1\]\.duration: expected a pause that heals within the load \(warm-up \+ duration = 6 s; starting between 2 and 4 s, at most 2 s\), found 3 s/,
    );
  });

  it('refuses an entry after a kill or a cut (its brokers are down), entries out of order, and overlapping pauses of one broker', () => {
    expect(() => compile('  - { kind: process-kill, target: leader, when: { at: 2s } }\n  - { kind: pause, target: leader, when: { at: 3s }, duration: 1s }\n')).toThrow(
      /faults\[1\]\.kind: expected no fault after faults\[0\] \(process-kill of leader\): the load stops there and its brokers stay down until the check, so a pause of leader cannot apply; put it before, found 'pause'/,
    );
    expect(() => compile('  - { kind: pause, target: leader, when: { at: 3s }, duration: 1s }\n  - { kind: process-kill, target: 1, when: { at: 1s } }\n')).toThrow(
      /faults\[1\]\.when: expected a moment at or after faults\[0\]'s \(at 3 s\): entries apply in the order written, found at 1 s/,
    );
    expect(() => compile('  - { kind: pause, target: 1, when: { at: 1s }, duration: 3s }\n  - { kind: pause, target: all, when: { at: 2s }, duration: 1s }\n')).toThrow(
      /faults\[1\]\.when: expected a start after faults\[0\] \(pause of broker 1 at 1 s for 3 s\) has healed/,
    );
    // The leader and its followers are never one broker at once.
    expect(compile('  - { kind: pause, target: leader, when: { at: 1s }, duration: 3s }\n  - { kind: pause, target: followers, when: { at: 2s }, duration: 1s }\n').faults).toHaveLength(2);
  });

  it('refuses a crash-states fault among others, followers without replicas, and pause on a target that cannot deliver it', () => {
    expect(() => compile('  - { kind: crash-states, target: 0, when: { at: 1s }, states: 3 }\n  - { kind: pause, target: 0, when: { at: 2s }, duration: 1s }\n', 'target: vm\n', '{ brokers: 1 }')).toThrow(
      /faults\[0\]\.kind: expected a crash-states fault alone in faults: \(its cell is its own trial/,
    );
    expect(() => compile('  - { kind: pause, target: followers, when: { at: 1s }, duration: 1s }\n', '', '{ brokers: 2, replicationFactor: 1 }')).toThrow(/faults\[0\]\.target: expected leader \| all \| a broker id with replicationFactor 1/);
    expect(() => compile('  - { kind: pause, target: leader, when: { at: 1s }, duration: 1s }\n', 'target: vm\n')).toThrow(/faults\[0\]\.kind: .*on target: vm \(pause needs target: process \| kafka \| external \| nats\)/);
  });
});
