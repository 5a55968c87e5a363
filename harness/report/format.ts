// Text formatting shared by the report page, its tables and the findings sentences.

import type { CellResult } from '../results/types.ts';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/**
 * JSON for a <script> element: `<` is escaped so no `</script>` or `<!--` in the data
 * can end or confuse the element; U+2028/2029 for older parsers.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function fmtInt(n: number): string {
  if (!Number.isFinite(n)) return '—';
  return Math.round(n).toLocaleString('en-US');
}

/** Records/s and similar rates: integers with separators, small rates with 3 significant digits. */
export function fmtRate(n: number): string {
  if (!Number.isFinite(n)) return '—';
  if (Math.abs(n) >= 100) return fmtInt(n);
  if (n === 0) return '0';
  return Number(n.toPrecision(3)).toLocaleString('en-US');
}

export function fmtMB(n: number): string {
  if (!Number.isFinite(n)) return '—';
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

export function fmtUs(n: number): string {
  if (!Number.isFinite(n)) return '—';
  return fmtInt(n);
}

/** Ratios as a reader says them: 12x, 3.4x, 0.31x. */
export function fmtRatio(r: number): string {
  if (!Number.isFinite(r)) return '—';
  if (r >= 10) return `${r.toFixed(0)}x`;
  if (r >= 1) return `${r.toFixed(1)}x`;
  return `${Number(r.toPrecision(2))}x`;
}

export function fmtPct(fraction: number): string {
  if (!Number.isFinite(fraction)) return '—';
  const pct = fraction * 100;
  if (pct === 0) return '0%';
  if (pct < 0.01) return '<0.01%';
  return `${Number(pct.toPrecision(pct >= 10 ? 3 : 2))}%`;
}

export function fmtBytes(n: number): string {
  if (!Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${units[u]}`;
}

/** Page counts from /proc/vmstat, assuming 4 KiB pages (x86-64 and arm64 defaults). */
export const PAGE_BYTES = 4096;

export function fmtPages(pages: number): string {
  return `${fmtInt(pages)} (${fmtBytes(pages * PAGE_BYTES)})`;
}

export function fmtSeconds(s: number): string {
  if (!Number.isFinite(s)) return '—';
  if (s < 1) return `${Number((s * 1000).toPrecision(3))} ms`;
  return `${Number(s.toPrecision(3))} s`;
}

export function fmtMs(ms: number): string {
  return fmtSeconds(ms / 1000);
}

export function plural(n: number, word: string, pluralWord = `${word}s`): string {
  return `${fmtInt(n)} ${n === 1 ? word : pluralWord}`;
}

export function errorCount(cell: CellResult): number {
  return Object.values(cell.errors ?? {}).reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
}

/** Cells whose figures mean something: finished, or interrupted with partial figures. */
export function isMeasured(cell: CellResult): boolean {
  return cell.status === 'ok' || cell.status === 'interrupted';
}
