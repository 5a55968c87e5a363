// The terminal's accounting lines at the end of a bench, per cell: storage errors with the cause
// the brokers' logs named, replica agreement from bytes
// (RF > 1), the brokers' flush count beside the device's, errors after the fault apart from
// those before it (connection refusals on their own line), and the ledger's requests by state
// (pending = written to a socket with no answer; never sent = the connection never connected).
import type { CellResult, RunResult, StorageFailure } from '../results/types.ts';
import { failureText } from '../results/storage-failure-text.ts';

const int = (n: number) => Math.round(n).toLocaleString('en-US');

const REFUSALS = new Set(['CLIENT_ECONNREFUSED']);

function label(c: CellResult): string {
  return Object.entries(c.params).map(([k, v]) => `${k}=${v}`).join(' ') || c.id;
}

export function replicasText(c: CellResult): string | null {
  const r = c.replicas;
  if (!r) return null;
  // No follower's bytes read (older run.json files wrote agreeUpTo 0 for it): nothing agrees or diverges.
  if (r.replicas === 0 || r.agreeUpTo === undefined) return "replicas not compared from bytes: no follower's stored bytes were read";
  const base = `${int(r.replicas)} replica copies, ${int(r.compared)} batches compared`;
  if (r.diverged === 0) {
    return `replicas agree from bytes (${base}, agreeing up to offset ${int(r.agreeUpTo)}${r.short ? `; ${r.short} replica(s) end below the HW` : ''})`;
  }
  return `REPLICAS DIVERGE from bytes: first divergent offset ${int(r.firstDivergentOffset ?? r.agreeUpTo)} (${r.diverged} partition-trial(s); ${base})`;
}

export function flushesText(c: CellResult): string {
  const b = c.broker;
  const when =
    b.takenAt === 'before-fault'
      ? `read ${b.readBeforeFaultMs === undefined ? 'just' : `${(b.readBeforeFaultMs / 1000).toFixed(1)} s`} before the fault`
      : b.takenAt === 'after-recovery'
        ? 'read after recovery'
        : 'read after the load';
  const device = b.deviceFlushes === undefined ? 'device: no flush counter' : `device ${int(b.deviceFlushes)} (${b.deviceFlushesScope ?? 'block device'})`;
  const segments = b.segmentsFrom === 'broker' && b.segments !== undefined ? `; ${int(b.segments)} segments as the brokers count them` : '';
  const brokers = b.flushes === undefined ? 'brokers: not reported through this driver (the Kafka protocol and NATS monitoring carry no flush count)' : `brokers ${int(b.flushes)} (${when})`;
  // A broker that did not answer the read is missing from every sum: said, so a partial sum is not read as the cluster's.
  const missing = b.notAnswered?.length ? `; broker ${b.notAnswered.join(', ')} gave no figures (the brokers' sums are the others' only)` : '';
  return `flushes: ${brokers}, ${device}${segments}${missing}`;
}

/** '' for a cell with no fault errors: "after the fault: N connection refusals, M other errors (NAME n, ...)". */
export function afterFaultText(errors: Record<string, number> | undefined): string {
  if (!errors) return '';
  const entries = Object.entries(errors).filter(([, n]) => n > 0);
  if (entries.length === 0) return '';
  const refused = entries.filter(([k]) => REFUSALS.has(k)).reduce((a, [, n]) => a + n, 0);
  const other = entries.filter(([k]) => !REFUSALS.has(k)).sort((a, b) => b[1] - a[1]);
  const otherSum = other.reduce((a, [, n]) => a + n, 0);
  const parts = [
    refused ? `${int(refused)} connection refusals` : '',
    otherSum ? `${int(otherSum)} other errors (${other.map(([k, n]) => `${k} ${int(n)}`).join(', ')})` : '',
  ].filter(Boolean);
  return `after the fault: ${parts.join(', ')}`;
}

/**
 * '' when no produce was refused KAFKA_STORAGE_ERROR and no broker log named a failed log dir;
 * else the count and each broker's first cause: "KAFKA_STORAGE_ERROR 3,019: broker 1's log dir is
 * offline after ENOSPC on /d/t-0/00000000000000000000.log at 12:03:04.512".
 */
export function storageErrorsText(c: CellResult): string {
  const n = (c.errors?.KAFKA_STORAGE_ERROR ?? 0) + (c.errorsAfterFault?.KAFKA_STORAGE_ERROR ?? 0);
  const first = new Map<number, StorageFailure>();
  for (const f of (c.trials ?? []).flatMap((t) => t.fault?.storageFailures ?? [])) if (!first.has(f.brokerId)) first.set(f.brokerId, f);
  if (n === 0 && first.size === 0) return '';
  const causes = [...first.values()].map((f) => `broker ${f.brokerId}'s log dir is offline after ${failureText(f)}`);
  return `KAFKA_STORAGE_ERROR ${int(n)}: ${causes.length ? causes.join('; ') : 'no broker log line names the cause'}`;
}

function requestsText(c: CellResult): string {
  const trials = (c.trials ?? []).filter((t) => t.requests);
  if (trials.length === 0) return '';
  const sum = (k: 'sent' | 'acked' | 'failed' | 'pending' | 'neverSent') => trials.reduce((a, t) => a + t.requests![k], 0);
  if (sum('neverSent') === 0 && sum('pending') === 0) return '';
  return `requests: ${int(sum('acked'))} acked, ${int(sum('failed'))} failed, ${int(sum('pending'))} pending (written, no answer), ${int(sum('neverSent'))} never sent (no connection)`;
}

/** Lines under "accounting:", or [] when no cell was measured. */
export function accountingLines(run: RunResult): string[] {
  const lines = run.cells
    .filter((c) => c.status === 'ok' || c.status === 'interrupted')
    .map((c) => {
      const parts = [storageErrorsText(c), replicasText(c), flushesText(c), afterFaultText(c.errorsAfterFault), requestsText(c)].filter(Boolean);
      return `  ${label(c)}: ${parts.join('; ')}`;
    });
  return lines.length ? ['accounting (errors in the table are those before any fault):', ...lines] : [];
}
