// `scenario check`'s rules for a slow-link entry (harness/faults/slow-link.ts delivers it):
// `rate:` and `loss:` as written, at least one of them, and `delay:` refused with the reason
// this host gives (linkDelayProblem(): the kernel has no netem).
import { linkDelayProblem } from '../net/slow-link.ts';
import type { FaultScenarioIssue } from '../model/scenario-issue.ts';

export const RATE_EXPECTED = 'a bandwidth like 8mbit, 500kbit or 1gbit (tc tbf, each direction)';
export const LOSS_EXPECTED = 'a packet loss in per cent, 0-100 (a number, or a string like 2%)';

const RATE_UNITS: Record<string, number> = { kbit: 0.001, mbit: 1, gbit: 1000 };

/** `rate:` to megabits per second; undefined when it is not a positive bandwidth. */
export function parseRate(v: unknown): number | undefined {
  const m = typeof v === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*(kbit|mbit|gbit)\s*$/i.exec(v) : null;
  if (!m) return undefined;
  const mbit = Number(m[1]) * RATE_UNITS[m[2]!.toLowerCase()]!;
  return mbit > 0 ? mbit : undefined;
}

export function parseLoss(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+(?:\.\d+)?\s*%\s*$/.test(v) ? Number.parseFloat(v) : NaN;
  return Number.isFinite(n) && n >= 0 && n <= 100 ? n : undefined;
}

/** Why `delay:` is refused: this kernel's answer (no netem), or that the lab applies none where it has netem. */
export function delayRefusal(): string {
  return linkDelayProblem() ?? 'the lab network applies no delay (its slow links take rate and loss only)';
}

/** The problems of a slow-link entry (its fields as parsed). */
export function slowLinkScenarioIssues(fault: Record<string, unknown>): FaultScenarioIssue[] {
  const out: FaultScenarioIssue[] = [];
  if (fault.delay !== undefined) out.push({ path: ['delay'], expected: `no delay: ${delayRefusal()}`, found: JSON.stringify(fault.delay) });
  if (fault.rate === undefined && fault.loss === undefined) out.push({ path: [], expected: `rate: (${RATE_EXPECTED}) and/or loss: (${LOSS_EXPECTED}) on a slow-link fault`, found: 'neither' });
  return out;
}

