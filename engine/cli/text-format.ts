// Number formatting for the engine CLI's human output (tables: engine/common/text-table.ts).

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
