// The target registry's row for target `external`: a Kafka cluster the lab did not start.
import { externalSettingRefusal } from '../kafka/settings-map.ts';
import { KAFKA_BASE_SETTINGS } from '../kafka/kafka-kind.ts';
import type { TargetKindSpec } from '../target-kind.ts';
import { externalFaultActions, externalFaultIssues } from './external-faults.ts';

export const EXTERNAL_KIND: TargetKindSpec = {
  summary: "a Kafka cluster the lab did not start (external.bootstrap), faults through the scenario's command templates (kill/restart, pause/resume, partition/heal, powerCut)",
  system: 'kafka',
  install: 'nothing here: your own Kafka cluster, reachable from this machine, and for faults the commands (ssh) that act on its hosts',
  systemLabel: 'Apache Kafka',
  capabilities: {
    // Per kind: the templates it runs, or the Admin API (move-leader): external/external-faults.ts.
    faultActions: externalFaultActions(),
    // Its hosts are not this one: vm.* settings are refused (refuseSetting), never written here.
    sysctls: 'guest',
    recoveryTimeoutMs: 120_000,
    dataOnHost: false,
    guestProbes: false,
    watchFigures: true,
    vmOptions: false,
    faultDisk: null,
    drivers: ['kafka'],
    hostProcesses: false,
    baseSettings: KAFKA_BASE_SETTINGS,
    ownBlock: { key: 'external', expected: 'bootstrap: [host:port, ...]' },
    refuseSetting: externalSettingRefusal,
    refuseFault: (fault, { external }) => externalFaultIssues(fault, external),
    refuseLabNetwork: 'its brokers run on hosts the lab did not start (their network is theirs; network faults there go through command templates)',
  },
  notInMainSuite: 'it runs against a Kafka cluster the lab did not start (external.bootstrap and command templates); a clean checkout has none (harness/targets/external/*.test.ts start one for their own checks)',
  load: async ({ scenario, log }) => (await import('./external-target.ts')).externalTarget(scenario.external, (line) => log(`[external] ${line}`)),
};
