// A fault trial whose cluster did not come back within the recovery timeout (NATS after a rack
// power cut whose stream metafiles failed their checksums: no stream leader ever again) is a
// finding of the system, not an error of the lab: the cell keeps it as an UnavailableTrial
// (results/types.ts) beside its checked trials and goes on with the next attempt. It is not
// replaced by an extra attempt (that is for trials the lab could not judge), it counts nothing
// as lost or kept, and an expectation on a ledger figure is NOT EVALUATED for it
// (scenario/evaluate-expectations.ts). Its evidence (ledger, check.json saying what failed,
// broker logs, disk images) is kept like any failed check's.
import type { UnavailableTrial } from '../results/types.ts';

/** Thrown by checkFaultTrial for the attempt to keep (run-trial.ts): the cell's entry for it. */
export class TrialUnavailableError extends Error {
  constructor(readonly entry: UnavailableTrial) {
    super(entry.failed);
    this.name = 'TrialUnavailableError';
  }
}
