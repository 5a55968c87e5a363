// Cross-check against sysstat: `iostat -x -d -o JSON -y <dev> 1 3` runs beside the sampler
// while a child process appends 4 KiB records with fdatasync after each (a log with
// flush-every-message) in a directory on that device. Both read the same kernel counters,
// so any disagreement is interval alignment: iostat's seconds end when its report reaches
// our stdout pipe, ours are 1-s buckets interpolated from 250 ms samples.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { deviceForPath } from '../../engine/common/device.ts';
import { perSecond } from './per-second.ts';
import { ProbeSampler, probeNow } from './sampler.ts';

const LOAD = `
const fs = require('node:fs');
const [file, ms] = [process.argv[1], Number(process.argv[2])];
const fd = fs.openSync(file, 'w');
const rec = Buffer.alloc(4096, 0x61);
const end = Date.now() + ms;
let n = 0;
while (Date.now() < end) { fs.writeSync(fd, rec); fs.fdatasyncSync(fd); n++; }
fs.closeSync(fd);
process.stdout.write(String(n));
`;

interface IostatDisk {
  disk_device: string;
  'w/s': number;
  'wkB/s': number;
  'f/s': number;
  w_await: number;
  f_await: number;
  'aqu-sz': number;
  util: number;
}

async function iostatAvailable(): Promise<boolean> {
  try {
    await execa('iostat', ['-V']);
    return true;
  } catch {
    return false;
  }
}

function within(mine: number, theirs: number, rel: number, abs: number): boolean {
  return Math.abs(mine - theirs) <= Math.max(rel * Math.abs(theirs), abs);
}

describe('ProbeSampler vs sysstat iostat -x', () => {
  it('agrees on w/s, wkB/s, f/s (and roughly on await) during an append+fdatasync load', async () => {
    expect(await iostatAvailable(), 'iostat not found: install sysstat (apt-get install -y sysstat)').toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'durolab-xcheck-'));
    const info = await deviceForPath(dir);
    expect(info.device, `no block device under ${dir}: ${info.note}`).not.toBeNull();
    const dev = info.device as string;
    const sampler = new ProbeSampler({ dataDir: dir, intervalMs: 250 });
    const load = execa(process.execPath, ['-e', LOAD, join(dir, 'log'), '4300']);
    let iostat: ReturnType<typeof execa> | undefined;
    try {
      await sampler.start();
      await sleep(400); // let the load reach a steady rate before iostat's first second

      // iostat writes each report unbuffered as soon as it has read the counters, so the
      // arrival of a report's "disk_device" line marks the end of its interval.
      const arrivals: number[] = [];
      let out = '';
      iostat = execa('iostat', ['-x', '-d', '-o', 'JSON', '-y', dev, '1', '3'], { env: { LC_ALL: 'C' } });
      iostat.stdout!.on('data', (chunk: Buffer) => {
        const now = probeNow();
        out += chunk.toString();
        const seen = out.split('"disk_device"').length - 1;
        while (arrivals.length < seen) arrivals.push(now);
      });
      await iostat;
      const loadResult = await load;
      const series = await sampler.stop();

      const reports: IostatDisk[] = JSON.parse(out).sysstat.hosts[0].statistics.map(
        (s: { disk: IostatDisk[] }) => s.disk.find((d) => d.disk_device === dev),
      );
      expect(reports).toHaveLength(3);
      expect(arrivals).toHaveLength(3);
      // iostat's seconds are 1000 ms apart; start our buckets where its first second began.
      const origin = arrivals[0] - 1000;
      const mine = perSecond(series, origin);
      const rows = reports.map((r, k) => ({ k, iostat: r, ours: mine.find((p) => p.t === k) }));

      console.log(
        `cross-check on ${dev}: load did ${loadResult.stdout} write+fdatasync in 4.3 s; report gaps ` +
          `${arrivals.slice(1).map((a, i) => (a - arrivals[i]).toFixed(0)).join(', ')} ms\n` +
          rows
            .map(
              ({ k, iostat: r, ours: o }) =>
                `  s${k}: w/s ${r['w/s']} vs ${o?.writesPerSec}, wkB/s ${r['wkB/s']} vs ${o?.writeKBPerSec}, ` +
                `f/s ${r['f/s']} vs ${o?.flushesPerSec}, w_await ${r.w_await} vs ${o?.wAwaitMs}, ` +
                `f_await ${r.f_await} vs ${o?.fAwaitMs}, aqu-sz ${r['aqu-sz']} vs ${o?.aquSz}, %util ${r.util} vs ${o?.utilPct}`,
            )
            .join('\n'),
      );

      for (const { k, iostat: r, ours: o } of rows) {
        expect(o, `no bucket for second ${k}`).toBeDefined();
        // Busy seconds only: the load is a tight fsync loop, so every second is busy.
        expect(r['w/s'], `second ${k} was not busy`).toBeGreaterThan(200);
        expect(within(o!.writesPerSec!, r['w/s'], 0.2, 20), `w/s s${k}`).toBe(true);
        expect(within(o!.writeKBPerSec!, r['wkB/s'], 0.2, 100), `wkB/s s${k}`).toBe(true);
        expect(within(o!.flushesPerSec!, r['f/s'], 0.2, 20), `f/s s${k}`).toBe(true);
        // Await on this virtual disk is tens of µs; iostat prints 2 decimals.
        expect(within(o!.wAwaitMs!, r.w_await, 0.5, 0.02), `w_await s${k}`).toBe(true);
        expect(within(o!.fAwaitMs!, r.f_await, 0.5, 0.02), `f_await s${k}`).toBe(true);
        expect(within(o!.aquSz!, r['aqu-sz'], 0.5, 0.05), `aqu-sz s${k}`).toBe(true);
        expect(within(o!.utilPct!, r.util, 0.25, 5), `%util s${k}`).toBe(true);
      }
    } finally {
      iostat?.kill();
      load.kill();
      await Promise.allSettled([iostat, load]);
      await sampler.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);
});
