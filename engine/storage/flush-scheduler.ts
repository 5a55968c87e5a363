// flush=ms:T for every log of the process on one timer per period, as Kafka's one log-flush
// scheduler (log.flush.scheduler.interval.ms) walks all logs: 10,000 partitions with flush.ms
// hold one interval, not 10,000. Each tick calls every member; a member flushes only what it
// has unflushed. The timer is unref'd and goes away with its last member.

type Member = () => void;

const byPeriod = new Map<number, { timer: NodeJS.Timeout; members: Set<Member> }>();

/** Calls `tick` every `everyMs` on the period's shared timer; returns what removes it. */
export function scheduleFlush(everyMs: number, tick: Member): () => void {
  let group = byPeriod.get(everyMs);
  if (!group) {
    const members = new Set<Member>();
    const timer = setInterval(() => {
      for (const m of [...members]) m();
    }, everyMs);
    timer.unref();
    group = { timer, members };
    byPeriod.set(everyMs, group);
  }
  group.members.add(tick);
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
