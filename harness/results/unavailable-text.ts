// How a trial whose cluster did not come back after its fault (CellResult.unavailableTrials,
// harness/runner/unavailable-trial.ts) is said: in the terminal and the report, and in an
// expectation's detail.
import type { UnavailableTrial } from './types.ts';

/** The terminal's and the report's line for it. */
export function unavailableLine(u: UnavailableTrial): string {
  return (
    `UNAVAILABLE after the ${u.fault} of broker ${u.targets.join(', ')} at ${u.cutAtSec.toFixed(2)} s: ${u.failed}; ` +
    `${u.acked.toLocaleString('en-US')} acknowledged records (${u.ackedBeforeCut.toLocaleString('en-US')} before the fault) could not be read back, so this trial is not checked ` +
    `(a finding, not replaced); evidence in ${u.evidence}`
  );
}

/** For an expectation's detail: why a ledger figure is not evaluated in a trial whose cluster did not come back. */
export function unavailableText(cellId: string, u: UnavailableTrial): string {
  return `${cellId} trial ${u.index + 1} not checked: unavailable after the ${u.fault} (${u.failed})`;
}
