// The harness's one seeded PRNG. Everything a trial draws (cut times, the NBD disk's onCut
// choices and latency jitter, crash points and crash-state draws, report fixtures) comes from
// it, so a recorded seed replays the same trial. A leaf module (no imports): harness/disk and
// harness/faults both use it without importing each other.

/** mulberry32: a small seeded PRNG (32-bit state), uniform in [0, 1); the same seed gives the same sequence. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
