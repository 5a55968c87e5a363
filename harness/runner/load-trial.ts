// A repetition without a fault (or whose fault never fired): once the load ended, wait for the
// replicas, read every partition back from its leader as a consumer would, and check the ledger.
import { mapLimit, READ_BACK_CONCURRENCY } from '../common/map-limit.ts';
import { checkLedger, ledgerSummaryOfReport } from '../checker/checker.ts';
import { waitForReplicasCaughtUp } from '../checker/replicas.ts';
import type { ClusterClient } from '../drivers/types.ts';
import type { Trial } from '../results/types.ts';
import type { AckLedger } from '../history/ledger.ts';
import { addAgreementTo, replicaAgreement } from './trial-accounting.ts';

export async function checkAfterLoad(args: { client: ClusterClient; topic: string; leaders: Map<number, number>; ledger: AckLedger; rf: number; dataOnHost: boolean; index: number; signal?: AbortSignal }): Promise<Trial> {
  const { client, topic, leaders, ledger } = args;
  // A consumer sees only records below the HW: acks=0/1 answers can run ahead of the
  // followers, so wait until the replicas caught up before the checker reads.
  const caught = await waitForReplicasCaughtUp(client, topic, [...leaders.keys()], 30_000, 0);
  // Every partition is read back from its leader now, as a consumer would (the leader at the
  // start of the load may have lost its lead since: a missed session).
  const logs = await mapLimit([...leaders.keys()], READ_BACK_CONCURRENCY, (partition) => client.consume({ topic, partition }), args.signal);
  const report = checkLedger(ledger, logs);
  const trial: Trial = {
    index: args.index,
    ledger: ledgerSummaryOfReport(report),
  };
  const agreement = await replicaAgreement(client, topic, [...leaders.keys()], args.rf, args.dataOnHost);
  addAgreementTo(trial, agreement);
  if (caught.caughtUp === false) {
    trial.suspect = true;
    trial.note = `replicas had not caught up 30 s after the load: ${caught.detail}`;
  }
  return trial;
}
