// Plain-text tables for terminal output: columns padded to their widest cell.

/** Which columns are right-aligned; by default those whose every cell looks like a number. */
export type RightAlign = (col: number) => boolean;

const NUMERIC_CELL = /^[-+]?[\d.,]+x?$|^-$|^n\/a$/;

/**
 * A header line, a line of dashes, then the rows; cells joined by two spaces, trailing blanks
 * trimmed. `rightAlign` picks the right-aligned columns (default: numbers, '-' and 'n/a').
 */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[], rightAlign?: RightAlign): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const right = header.map((_, i) => (rightAlign ? rightAlign(i) : rows.length > 0 && rows.every((r) => NUMERIC_CELL.test(r[i] ?? ''))));
  const line = (cells: readonly string[]) =>
    header
      .map((_, i) => (right[i] ? (cells[i] ?? '').padStart(widths[i]) : (cells[i] ?? '').padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
