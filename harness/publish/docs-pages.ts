// The published site's copy of the documentation: README.md as site/docs/index.html and each
// docs/*.md as site/docs/<name>.html, rendered with marked. Links between the pages are
// rewritten to the rendered files; a link to a repository file the site does not carry is
// rendered as plain text naming the file, so no page of the site links to nothing.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Marked, type Tokens } from 'marked';
import { escapeHtml } from '../report/format.ts';
import { pageHead } from '../report/page-assets.ts';

/** GitHub's heading anchor (as docs/'s links use them): lowercase, punctuation dropped, spaces to hyphens. */
export function headingSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** `href` as seen from page `from` (a repository path), in the site's docs/ folder; null: not in the site. */
function siteHref(href: string, from: string): string | null {
  if (/^[a-z]+:/.test(href) || href.startsWith('#')) return href;
  const [file, anchor] = href.split('#') as [string, string | undefined];
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), file));
  const page = target === 'README.md' ? 'index.html' : /^docs\/[^/]+\.md$/.test(target) ? `${path.posix.basename(target, '.md')}.html` : null;
  return page === null ? null : `${page}${anchor ? `#${anchor}` : ''}`;
}

function render(markdown: string, from: string): string {
  const marked = new Marked({
    renderer: {
      heading({ tokens, depth, text }: Tokens.Heading) {
        return `<h${depth} id="${escapeHtml(headingSlug(text.replace(/`/g, '')))}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
      link({ href, tokens }: Tokens.Link) {
        const inner = this.parser.parseInline(tokens);
        const to = siteHref(href, from);
        return to === null ? `${inner} (<code>${escapeHtml(href)}</code> in the repository)` : `<a href="${escapeHtml(to)}">${inner}</a>`;
      },
    },
  });
  return marked.parse(markdown, { async: false });
}

/** The site's docs pages: site-relative file and its HTML. */
export function docsPages(repoRoot: string): Array<{ file: string; html: string }> {
  const sources = ['README.md', ...readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
  return sources.map((rel) => {
    const markdown = readFileSync(path.join(repoRoot, rel), 'utf8');
    const title = /^# (.+)$/m.exec(markdown)?.[1] ?? rel;
    const file = rel === 'README.md' ? 'docs/index.html' : `docs/${path.posix.basename(rel, '.md')}.html`;
    const html = `${pageHead(escapeHtml(`durolab: ${title}`))}
<body>
<main class="docs">
<p class="sub"><a href="../index.html">all runs</a> · <a href="index.html">documentation</a></p>
${render(markdown, rel)}
</main>
</body>
</html>
`;
    return { file, html };
  });
}
