// flush=ms:T for every log of the process on one timer per period, as Kafka's log-flush
// scheduler (log.flush.scheduler.interval.ms) walks all logs and flushes those whose last
// flush is T old: 10,000 partitions with flush.ms hold one interval, not 10,000. The timer
// ticks ten times per period and calls each member when its own turn comes, a period after the
// previous one; members get phases spread over the period, so their flushes (synchronous
// fdatasyncs) do not stall the event loop all in one tick. Unref'd; it goes away with its
// last member. Recovery-point checkpoints held back by their once-a-second limit wait on the
// same timers (log-flush.ts deferCheckpoint).

type Member = () => void;

/** Ticks per period: a member is flushed at most a tenth of a period late. */
const TICKS_PER_PERIOD = 10;

interface Period {
  timer: NodeJS.Timeout;
  /** Each member's next turn (ms, performance.now()). */
  members: Map<Member, number>;
}

const byPeriod = new Map<number, Period>();
let joined = 0;

/**
 * Calls `tick` every `everyMs` on the period's shared timer; returns what removes it. Its first
 * turn comes within one period, at a fraction of it that successive members spread evenly
 * (golden-ratio steps), so logs opened together do not flush together; never later than a period.
 */
export function scheduleFlush(everyMs: number, tick: Member): () => void {
  let group = byPeriod.get(everyMs);
  if (!group) {
    const members = new Map<Member, number>();
    const timer = setInterval(
      () => {
        const now = performance.now();
        // Iterated in place (no copy of 10,000 entries per tick): a member that removes itself
        // or has its next turn set during the walk is what a Map's iteration allows.
        for (const [m, due] of members) {
          if (due > now) continue;
          // The next turn a whole period after this one (not after now: no drift under load).
          members.set(m, due + everyMs * Math.max(1, Math.ceil((now - due) / everyMs)));
          m();
        }
      },
      Math.max(1, Math.floor(everyMs / TICKS_PER_PERIOD)),
    );
    timer.unref();
    group = { timer, members };
    byPeriod.set(everyMs, group);
  }
  const fraction = 1 - ((joined++ * 0.6180339887498949) % 1);
  group.members.set(tick, performance.now() + everyMs * fraction);
  return () => {
    const g = byPeriod.get(everyMs);
    if (!g || !g.members.delete(tick)) return;
    if (g.members.size === 0) {
      clearInterval(g.timer);
      byPeriod.delete(everyMs);
    }
  };
}

/** Timers and members now (tests: the count of timers must not grow with logs). */
export function flushSchedulerStats(): { timers: number; members: number } {
  let members = 0;
  for (const g of byPeriod.values()) members += g.members.size;
  return { timers: byPeriod.size, members };
}
