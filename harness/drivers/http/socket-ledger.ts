// Which produce requests reached a socket, for the ack ledger: see SocketLedger.
import type { Socket } from 'node:net';
import type { ProduceLedger } from '../types.ts';

/** The parts of autocannon 9's Client (lib/httpClient.js) the socket ledger hooks into. */
export interface AutocannonClient {
  conn: Socket;
  reqsMade: number;
  _doRequest: (...args: unknown[]) => unknown;
}

/**
 * Records which requests reached a socket. autocannon builds a request (setupRequest, which
 * writes the ledger) for every connection attempt and writes it at once, before the socket has
 * connected; after a kill or power cut it reconnects in a tight loop, building a request per
 * refused attempt. A request written while its socket was still connecting went out only if
 * the socket then connected: when it closes without ever connecting, the batch is marked
 * never-sent, so "pending" keeps meaning written with no answer (Jepsen's :info).
 */
export class SocketLedger {
  private last: { partition: number; seq: number } | null = null;
  private readonly waiting = new WeakMap<Socket, Array<{ partition: number; seq: number }>>();
  /** Queues of sockets still connecting; emptied when they connect or close. */
  private readonly open = new Set<Array<{ partition: number; seq: number }>>();

  constructor(private readonly ledger: ProduceLedger) {}

  /** setupRequest just registered this batch; the client's next write carries it. */
  built(partition: number, seq: number): void {
    this.last = { partition, seq };
  }

  /** autocannon's setupClient: runs after the client built its first request, before it writes it. */
  watch(client: AutocannonClient): void {
    if (typeof client._doRequest !== 'function' || typeof client.reqsMade !== 'number') {
      throw new Error('http producer: autocannon Client has no _doRequest/reqsMade (the socket ledger is written for autocannon 9.x; see lib/httpClient.js)');
    }
    const first = this.last;
    const original = client._doRequest;
    const self = this;
    client._doRequest = function (this: AutocannonClient, ...args: unknown[]) {
      const before = this.reqsMade;
      self.last = null;
      const out = original.apply(this, args);
      if (this.reqsMade > before) {
        const written = before === 0 ? first : self.last;
        if (written) self.wrote(this.conn, written);
      }
      return out;
    };
  }

  private wrote(conn: Socket, batch: { partition: number; seq: number }): void {
    if (conn.destroyed) return this.ledger.neverSent(batch.partition, batch.seq, Date.now());
    if (!conn.connecting) return; // a connected socket took it: pending until answered
    let list = this.waiting.get(conn);
    if (!list) {
      const queued: Array<{ partition: number; seq: number }> = [];
      this.waiting.set(conn, (list = queued));
      this.open.add(queued);
      conn.once('connect', () => {
        queued.length = 0;
        this.open.delete(queued);
      });
      conn.once('close', () => this.drop(queued));
    }
    list.push(batch);
  }

  /** The load ended: sockets still connecting were destroyed before they connected (their close may come a tick later). */
  settle(): void {
    for (const queued of [...this.open]) this.drop(queued);
  }

  private drop(queued: Array<{ partition: number; seq: number }>): void {
    const at = Date.now();
    for (const b of queued) this.ledger.neverSent(b.partition, b.seq, at);
    queued.length = 0;
    this.open.delete(queued);
  }
}
