// Number and table formatting for the engine CLI's human output.

export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function fmtBytes(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(2)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  if (n >= 2 ** 10) return `${(n / 2 ** 10).toFixed(1)} KiB`;
  return `${n} B`;
}

/** Batch sizes as people say them: 4 KiB, 64 KiB, 1 MiB (exact multiples only). */
export function fmtBatch(n: number): string {
  if (n % 2 ** 20 === 0) return `${n / 2 ** 20} MiB`;
  if (n % 2 ** 10 === 0) return `${n / 2 ** 10} KiB`;
  return `${n} B`;
}

export function fmtMBps(n: number): string {
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

/** Columns padded to their widest cell; numbers (and '-') right-aligned. */
export function renderTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => /^[-+]?[\d.,]+x?$|^-$|^n\/a$/.test(r[i] ?? '')));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
