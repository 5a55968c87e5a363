// previousShutdown on real logs: clean only when every partition log of the data dir was closed
// (Log.close writes the marker) and none has been opened since (Log.open removes it).
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBatch } from '../records/index.ts';
import { Log } from '../storage/index.ts';
import { previousShutdown } from './previous-shutdown.ts';
import { tempDir } from './test-support.ts';

const root = tempDir('previous-shutdown');
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('previousShutdown', () => {
  it('is clean after every log closed, unclean while one is open (a SIGKILL leaves it so), and unproven with no log', () => {
    const data = path.join(root, 'broker-1');
    expect(previousShutdown(data)).toEqual({ clean: false, logs: 0, unclean: [] });
    mkdirSync(data);
    expect(previousShutdown(data).clean).toBe(false);
    for (const name of ['t-0', 't-1']) {
      const log = Log.open(path.join(data, name));
      log.append(encodeBatch({ records: [{ value: Buffer.from('v') }] }));
      log.close();
    }
    mkdirSync(path.join(data, 'not-a-partition'));
    expect(previousShutdown(data)).toEqual({ clean: true, logs: 2, unclean: [] });
    // Opening a log takes its marker away until it is closed again.
    const open = Log.open(path.join(data, 't-1'));
    expect(previousShutdown(data)).toEqual({ clean: false, logs: 2, unclean: ['t-1'] });
    open.close();
    expect(previousShutdown(data).clean).toBe(true);
  });
});
