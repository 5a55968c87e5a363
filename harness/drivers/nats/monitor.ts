// A nats-server's monitoring listener (http: in its config), as the harness reads it: /jsz for
// the JetStream meta group's leader and, per server, the state of each stream replica it holds.
// Shared by target: nats (is there a meta leader yet?) and driver nats (replica states).

/** A broker of target: nats as the driver sees it: its client URL and its monitoring URL. */
export interface NatsBrokerAddress {
  id: number;
  url: string;
  /** http://host:port of its monitoring listener. */
  monitor: string;
}

/** The monitoring URL of a broker of target: nats, or an error naming the broker (a cluster of another target has none). */
export function monitorOf(broker: { id: number; url: string }): string {
  const m = (broker as { monitor?: unknown }).monitor;
  if (typeof m !== 'string' || m === '') throw new Error(`nats: broker ${broker.id} (${broker.url}) has no monitoring URL: driver nats reads replica states from target: nats's brokers only`);
  return m;
}

export interface JszStreamReplica {
  name: string;
  state: { messages: number; bytes: number; first_seq: number; last_seq: number; num_deleted?: number };
  cluster?: { leader?: string; replicas?: Array<{ name: string; current: boolean; lag?: number }> };
}

interface Jsz {
  meta_cluster?: { leader?: string; cluster_size?: number };
  account_details?: Array<{ stream_detail?: JszStreamReplica[] }>;
}

async function jsz(monitor: string, query: string, timeoutMs: number): Promise<Jsz> {
  const res = await fetch(`${monitor}/jsz${query}`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`${monitor}/jsz${query}: HTTP ${res.status}`);
  return (await res.json()) as Jsz;
}

/** The JetStream meta group's leader as this server knows it, or null (none elected yet). */
export async function metaLeaderOf(monitor: string, timeoutMs = 1000): Promise<string | null> {
  return (await jsz(monitor, '', timeoutMs)).meta_cluster?.leader ?? null;
}

/** This server's own replica of a stream (its state as stored here), or null when it holds none. */
// 10 s: a server that just recovered a stream of ~800,000 messages answered /jsz in more than 2 s on this loaded machine (nats-power-cut-late).
export async function streamReplicaOn(monitor: string, stream: string, timeoutMs = 10_000): Promise<JszStreamReplica | null> {
  const j = await jsz(monitor, '?accounts=true&streams=true', timeoutMs);
  for (const a of j.account_details ?? []) for (const s of a.stream_detail ?? []) if (s.name === stream) return s;
  return null;
}

/** Server name of node `id` (the stream's cluster info names its leader and replicas by it). */
export function natsServerName(id: number): string {
  return `n${id}`;
}

export function natsServerId(name: string): number | null {
  const m = /^n(\d+)$/.exec(name);
  return m ? Number(m[1]) : null;
}
