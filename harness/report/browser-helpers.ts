// Headless Chromium for the page tests (report and published site): a persistent context on
// Debian's /usr/bin/chromium, pages opened from file:// with console errors and any network
// request collected, and the drawn marks of every vega chart counted.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export async function launchChromium(userDataDir: string): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    viewport: { width: 1280, height: 900 },
  });
}

export interface PageProblems {
  console: string[];
  requests: string[];
}

/** Opens a file and waits for its charts (pages without charts just load). */
export async function openPage(context: BrowserContext, file: string): Promise<{ page: Page; problems: PageProblems }> {
  const page = await context.newPage();
  const problems: PageProblems = { console: [], requests: [] };
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') problems.console.push(`${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.console.push(`pageerror: ${err.message}`));
  page.on('request', (req) => {
    if (!req.url().startsWith('file:') && !req.url().startsWith('data:') && !req.url().startsWith('blob:')) problems.requests.push(req.url());
  });
  await page.goto(pathToFileURL(path.resolve(file)).href, { waitUntil: 'load' });
  await page.evaluate(() => (globalThis as unknown as { durolabReady?: Promise<void> }).durolabReady);
  return { page, problems };
}

/** Drawn marks per chart, per concatenated sub-view: items in the Vega scenegraph that are not groups or guides. */
export async function marksPerChart(page: Page): Promise<Record<string, number[]>> {
  return page.evaluate(() => {
    type Item = { items?: Item[]; marktype?: string; role?: string };
    const views = (globalThis as unknown as { durolabViews?: Record<string, { scenegraph(): { root: Item } }> }).durolabViews ?? {};
    const out: Record<string, number[]> = {};
    const count = (node: Item): number => {
      let n = 0;
      for (const child of node.items ?? []) {
        if (child.marktype && child.marktype !== 'group') {
          if (child.role === 'mark') n += (child.items ?? []).length;
        } else n += count(child);
      }
      return n;
    };
    for (const [id, view] of Object.entries(views)) {
      const root = view.scenegraph().root;
      // root -> group item -> its marks; concatenated charts hold one "scope" group per panel.
      const top = (root.items ?? [])[0] as Item;
      const scopes = (top.items ?? []).filter((m) => m.marktype === 'group' && m.role === 'scope');
      out[id] = scopes.length ? scopes.flatMap((s) => (s.items ?? []).map(count)) : [count(top)];
    }
    return out;
  });
}
