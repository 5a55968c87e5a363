// A --results-dir the user names must exist before publish or claims read runs from it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main as claimsMain } from '../claims/claims-command.ts';
import { main as publishMain } from '../publish/publish-command.ts';
import { requireResultsDir } from './repo-paths.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'durolab-results-dir-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('--results-dir', () => {
  it('is refused when named and missing or a file; the default may be missing (nothing has run yet)', async () => {
    const missing = path.join(tmp, 'nonexist');
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, 'x');
    expect(() => requireResultsDir(undefined)).not.toThrow();
    expect(() => requireResultsDir(tmp)).not.toThrow();
    expect(() => requireResultsDir(missing)).toThrow(`--results-dir ${missing}: no such directory`);
    expect(() => requireResultsDir(file)).toThrow(`--results-dir ${file}: not a directory`);
    await expect(claimsMain(['--results-dir', missing])).rejects.toThrow(`--results-dir ${missing}: no such directory`);
    await expect(publishMain(['--results-dir', missing, '--out', path.join(tmp, 'site')])).rejects.toThrow(`--results-dir ${missing}: no such directory`);
    expect(fs.existsSync(path.join(tmp, 'site'))).toBe(false);
  });

  it('publish refuses an --out that is a file and a --since day that does not exist', async () => {
    const results = path.join(tmp, 'results');
    fs.mkdirSync(results, { recursive: true });
    const file = path.join(tmp, 'site-file');
    fs.writeFileSync(file, 'x');
    await expect(publishMain(['--results-dir', results, '--out', file])).rejects.toThrow(`--out ${file}: not a directory`);
    await expect(publishMain(['--results-dir', results, '--out', path.join(tmp, 'site2'), '--since', '2026-02-30'])).rejects.toThrow(
      "--since: expected a date like 2026-11-30 or an ISO time, found '2026-02-30'",
    );
    expect(fs.existsSync(path.join(tmp, 'site2'))).toBe(false);
  });
});
