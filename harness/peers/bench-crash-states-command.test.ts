// `durolab bench-crash-states` refuses a bad flag before it builds an image or boots a guest
// (an unchecked --io once went on to build the VM image and start a trial).
import { describe, expect, it } from 'vitest';
import { main } from './bench-crash-states-command.ts';

describe('bench-crash-states flags', () => {
  it('refuses an unknown --io, --flush or --policy at once', async () => {
    const t0 = Date.now();
    await expect(main(['--io', 'bogus'])).rejects.toThrow('--io "bogus": expected one of buffered, direct, dsync');
    await expect(main(['--flush', 'bogus'])).rejects.toThrow(/flush/);
    await expect(main(['--policy', 'bogus'])).rejects.toThrow(/--policy "bogus": expected one of/);
    await expect(main(['--systems', 'durolab,redpanda'])).rejects.toThrow('--systems "redpanda": expected one of durolab, kafka, nats');
    // Refused before any image build or boot: those take tens of seconds.
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});
