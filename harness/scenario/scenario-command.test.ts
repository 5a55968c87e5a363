import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { main } from './scenario-command.ts';

const SCENARIOS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scenarios');
const tmp = mkdtempSync(path.join(tmpdir(), 'durolab-scenario-cmd-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

// The command's output is what is under test: collect console.log lines.
function capture(): string[] {
  const out: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void out.push(args.join(' ')));
  return out;
}

describe('durolab scenario', () => {
  it('check validates every shipped file', async () => {
    const out = capture();
    expect(await main(['check', '--dir', SCENARIOS])).toBe(0);
    // One ok line per shipped scenario file, each naming it.
    const shipped = readdirSync(SCENARIOS).filter((f) => f.endsWith('.yaml')).sort();
    expect(shipped.length).toBeGreaterThanOrEqual(19);
    expect(out).toHaveLength(shipped.length);
    for (const f of shipped) expect(out.some((l) => l.includes(`/${f}:`) || l.includes(` ${f}:`))).toBe(true);
    for (const line of out) expect(line).toMatch(/^ok {4}.*\.yaml: \d+ cell\(s\), \d+ expectation\(s\)$/);
  });

  it('refuses a --dir that is missing or a file, and overrides as typed (not NaN)', async () => {
    const file = path.join(tmp, 'not-a-dir.yaml');
    writeFileSync(file, 'question: q\n');
    await expect(main(['list', '--dir', path.join(tmp, 'missing')])).rejects.toThrow(`--dir ${path.join(tmp, 'missing')}: no such directory`);
    await expect(main(['list', '--dir', file])).rejects.toThrow(`--dir ${file}: not a directory`);
    await expect(main(['check', '--dir', path.join(tmp, 'missing')])).rejects.toThrow(/no such directory/);
    await expect(main(['check', 'acks-all', '--dir', SCENARIOS, '--duration', '30s'])).rejects.toThrow(
      "--duration (DURATION): expected a number of seconds > 0, found '30s'",
    );
    await expect(main(['show', 'acks-all', '--dir', SCENARIOS, '--repeat', '1.5'])).rejects.toThrow("--repeat (REPEAT): expected a whole number >= 1, found '1.5'");
    const out = capture();
    expect(await main(['check', 'acks-all', '--dir', SCENARIOS, '--duration', '5'])).toBe(0);
    expect(out[0]).toMatch(/^ok {4}.*acks-all\.yaml: /);
  });

  it('check reports every problem of a bad file and exits 1', async () => {
    const file = path.join(tmp, 'bad.yaml');
    writeFileSync(file, 'question: q\nsettings:\n  flsuh: never\n  acks: 3\n');
    const out = capture();
    expect(await main(['check', file])).toBe(1);
    expect(out).toEqual([
      `error ${file}: 2 problem(s)`,
      `  ${file}:3:3 settings.flsuh: expected a known key (did you mean 'flush'?), found 'flsuh'`,
      `  ${file}:4:9 settings.acks: expected 0|1|all, found 3`,
    ]);
  });

  it('check refuses an error name nothing can produce, listing the known ones, and accepts a known one', async () => {
    const file = path.join(tmp, 'timeout.yaml');
    writeFileSync(file, 'question: q\nexpectations:\n  - errors.TIMEOUT == 0\n  - errors.REQUEST_TIMED_OUT == 0\n  - errors.CLIENT_ECONNREFUSED == 0\n');
    const out = capture();
    expect(await main(['check', file])).toBe(1);
    expect(out[0]).toBe(`error ${file}: 1 problem(s)`);
    expect(out[1]).toMatch(new RegExp(`^  ${file.replace(/[.]/g, '\\.')}:3:5 expectations\\[0\\]: expected a known error name \\(NOT_LEADER_OR_FOLLOWER, .*REQUEST_TIMED_OUT, .*CLIENT_TIMEOUT, .*HTTP_<status>\\), found 'errors.TIMEOUT'$`));
    expect(out).toHaveLength(2);
  });

  it('show prints the expanded cells with their resolved settings', async () => {
    const out = capture();
    expect(await main(['show', 'power-cut-all', '--dir', SCENARIOS, '--duration', '8'])).toBe(0);
    const text = out.join('\n');
    expect(text).toContain('power-cut-all (');
    expect(text).toContain('1 s warm-up + 8 s, 3 repetition(s), up to 2 extra attempt(s) per cell in place of trials that cannot be judged');
    expect(text).toContain('  flush=per-batch  [flush per batch]');
    expect(text).toContain('io=buffered flush=per-batch sync=fdatasync acks=all segment=1GiB/7d index=10MiB/every 4KiB min.isr=2');
    expect(text).toContain('fault: power-cut of all, between 2 and 5 s');
    expect(text).toMatch(/expect \(line \d+\): ackedLost == 0 where flush == per-batch in every trial/);
  });

  it('list prints names and questions', async () => {
    const out = capture();
    expect(await main(['list', '--dir', SCENARIOS])).toBe(0);
    expect(out.find((l) => l.startsWith('io-modes'))).toMatch(/^io-modes +How do buffered, O_DIRECT and O_DSYNC/);
  });
});
