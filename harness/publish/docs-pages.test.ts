// The site's documentation pages: README.md and docs/*.md rendered, links between them pointing
// at the rendered pages (anchors kept and present), links to repository files left as text.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { docsPages, headingSlug } from './docs-pages.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('docs pages', () => {
  const pages = docsPages(ROOT);
  const byFile = new Map(pages.map((p) => [p.file, p.html]));

  it('renders README.md as the index and every docs/*.md beside it', () => {
    expect(byFile.has('docs/index.html')).toBe(true);
    for (const name of ['getting-started', 'scenarios', 'settings', 'faults', 'systems', 'architecture', 'findings']) expect(byFile.has(`docs/${name}.html`)).toBe(true);
    expect(byFile.get('docs/index.html')).toContain('<title>durolab: durolab</title>');
    expect(byFile.get('docs/faults.html')).toContain('<h3 id="power-cut">power-cut</h3>');
  });

  it('links between pages go to the rendered pages, and every anchor exists there', () => {
    expect(byFile.get('docs/index.html')).toContain('<a href="getting-started.html">Getting started</a>');
    const missing: string[] = [];
    for (const { file, html } of pages) {
      for (const m of html.matchAll(/<a href="([^"#:]*\.html)?(?:#([^"]+))?"/g)) {
        const target = m[1] ? `docs/${m[1]}` : file;
        if (m[1] === '../index.html') continue;
        const page = byFile.get(target);
        if (!page) missing.push(`${file}: ${m[0]} (no ${target})`);
        else if (m[2] && !page.includes(`id="${m[2]}"`)) missing.push(`${file}: ${m[0]} (no #${m[2]} in ${target})`);
      }
    }
    expect(missing).toEqual([]);
    expect(headingSlug("The operator's answer: frontier")).toBe('the-operators-answer-frontier');
  });
});
