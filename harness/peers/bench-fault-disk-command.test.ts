// `durolab bench-fault-disk` refuses a bad flag before it starts a broker or a disk.
import { describe, expect, it } from 'vitest';
import { main } from './bench-fault-disk-command.ts';

describe('bench-fault-disk flags', () => {
  it('refuses an unknown --systems, --flush, --repeat or --duration at once', async () => {
    const t0 = Date.now();
    await expect(main(['--systems', 'kafka,rabbit'])).rejects.toThrow('--systems "rabbit": expected one of durolab, kafka');
    await expect(main(['--flush', 'sometimes'])).rejects.toThrow('--flush "sometimes": expected one of never, per-batch');
    await expect(main(['--repeat', '0'])).rejects.toThrow(/--repeat/);
    await expect(main(['--duration', 'x'])).rejects.toThrow(/--duration/);
    // Refused before any broker or disk starts: those take seconds.
    expect(Date.now() - t0).toBeLessThan(3000);
  });
});
