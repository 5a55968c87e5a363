// The loops of a driver's produce load over clients of its own (drivers kafka and nats): each
// client runs `loopsPerClient` loops; a loop's turn is one ledger batch, sent and answered (the
// driver's `turn`), paced by workload.rate when there is one (each loop its own slot of the
// period, the corrected latency from the turn's intended start), back to back when there is
// none. The measured window opens at measureStartMs exactly (as the http driver's and the probes'
// do) and its seconds tick from there; a tick past the window's end (turns completing after it)
// is not a second of the window. A stop (the fault's moment, Ctrl-C) waits IN_FLIGHT_GRACE_MS for
// turns in flight, then leaves them unanswered: with every broker down (a rack's power cut) a
// client retries until its own timeout, and the trial must go on to restart the brokers. An
// answer that comes later is not recorded (`abandoned`): its batch stays sent-but-unanswered
// (indeterminate) in the ledger.
import type { ProduceOptions, ProduceResult } from './types.ts';
import { LoadMeter, MAX_LATENCY_US } from './load-meter.ts';

/**
 * After a stop, turns in flight get this long to be answered. A send to a broker that died is not
 * answered at all; one to a live broker is answered in milliseconds, or after the leader shrinks
 * its ISR (replica.lag.time.max.ms: 30 s on Kafka), far beyond any grace.
 */
const IN_FLIGHT_GRACE_MS = 1000;

/** What a turn reads and writes of the load it belongs to. */
export interface LoadTurn {
  /** A stop's grace ran out: an answer now is not recorded (the ledger and the meter are left alone). */
  readonly abandoned: boolean;
  /** One error by name (apart once the fault is under way). */
  count(name: string): void;
  /** A batch answered: counted when it was sent in the measured window and answered by a second after its end. */
  measured(at: { sentMs: number; doneMs: number; us: number; intendedMs: number }, records: number): void;
}

export interface ClosedLoops<Client> {
  /** One per connection, open. */
  clients: readonly Client[];
  loopsPerClient: number;
  /** One batch from loop `stream`'s client (the connection is the ledger's stream), meant to start at intendedMs. */
  turn(client: Client, stream: number, intendedMs: number, load: LoadTurn): Promise<void>;
  /** Between a loop's turns (e.g. a yield to the event loop). */
  between?: () => Promise<void>;
  /** Closes the clients once the loops are done; `abandoned`: turns were left unanswered. */
  close(abandoned: boolean): Promise<void>;
}

export async function runClosedLoops<Client>(opts: ProduceOptions, loops: ClosedLoops<Client>): Promise<ProduceResult> {
  const meter = new LoadMeter(opts);
  const loadStartMs = Date.now();
  opts.onLoadStart?.(loadStartMs);
  const measureStartMs = loadStartMs + opts.warmupSec * 1000;
  const endMs = measureStartMs + opts.durationSec * 1000;
  const stopped = () => opts.signal?.aborted === true || Date.now() >= endMs;
  let abandoned = false;
  const abandonAfterStop = new Promise<void>((resolve) => {
    const arm = () => setTimeout(() => ((abandoned = true), resolve()), IN_FLIGHT_GRACE_MS).unref();
    if (opts.signal?.aborted) arm();
    else opts.signal?.addEventListener('abort', arm, { once: true });
  });
  let ticker: NodeJS.Timeout | undefined;
  const tick = () => {
    if (meter.timeseries.length >= opts.durationSec) return;
    meter.closeSecond();
  };
  const opener = setTimeout(() => {
    meter.openSecond();
    ticker = setInterval(tick, 1000);
  }, Math.max(0, measureStartMs - Date.now()));
  const load: LoadTurn = {
    get abandoned() {
      return abandoned;
    },
    count: (name) => meter.count(name),
    measured: ({ sentMs, doneMs, us, intendedMs }, records) => {
      if (sentMs < measureStartMs || doneMs > endMs + 1000) return;
      meter.sample(us, records);
      meter.correctedLatencyUs?.recordValue(Math.min(MAX_LATENCY_US, Math.max(1, Math.round((doneMs - intendedMs) * 1000))));
    },
  };

  const perClient = loops.loopsPerClient;
  const all = loops.clients.length * perClient;
  const periodMs = opts.rate ? (all * 1000) / opts.rate : 0;
  try {
    await Promise.all(
      loops.clients.flatMap((client, ci) =>
        Array.from({ length: perClient }, async (_, li) => {
          let intended = loadStartMs + (periodMs * (ci * perClient + li)) / all;
          while (!stopped()) {
            if (periodMs > 0) {
              const wait = intended - Date.now();
              if (wait > 0) await new Promise((r) => setTimeout(r, wait));
              if (stopped()) break;
            }
            await Promise.race([loops.turn(client, ci, periodMs > 0 ? intended : Date.now(), load), abandonAfterStop]);
            if (loops.between) await loops.between();
            intended += periodMs;
          }
        }),
      ),
    );
  } finally {
    clearTimeout(opener);
    if (ticker) clearInterval(ticker);
    // The window's last second ends as the loops do: its tick may lose that race.
    if (!opts.signal?.aborted && meter.timeseries.length === opts.durationSec - 1 && Date.now() >= endMs - 100) tick();
    await loops.close(abandoned);
  }
  const end = Date.now();
  return meter.result({
    measuredSec: Math.max(0.001, (Math.min(end, endMs) - measureStartMs) / 1000),
    measuredBytes: meter.measuredRecords * opts.factory.recordBytes,
    loadStartMs,
    measureStartMs,
    endMs: end,
    interrupted: opts.signal?.aborted === true,
  });
}
