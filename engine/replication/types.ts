// Types shared by the partition logic, the controller and the HTTP layer in engine/server.

/** The controller's view of one partition, as brokers receive it in heartbeat answers. */
export interface PartitionAssignment {
  topic: string;
  partition: number;
  /** Assigned replicas, preferred leader first. */
  replicas: number[];
  /** Broker id of the leader; -1 = no leader (offline). */
  leader: number;
  /** Bumped by the controller on every leader change (KIP-101 leader epoch). */
  leaderEpoch: number;
  /** Bumped on every change of this record (leader or ISR); fences stale AlterPartition requests. */
  partitionEpoch: number;
  isr: number[];
  /**
   * KIP-966 eligible leader replicas: replicas out of the ISR that hold everything committed,
   * electable when the ISR is empty. Present when the controller runs with eligible.leader.replicas.
   */
  elr?: number[];
  /** KIP-966: the leader when the ISR became empty (Kafka keeps it in lastKnownElr); absent when none. */
  lastKnownLeader?: number;
}

/** Kafka's AlterPartition: the leader asks the controller to commit a new ISR. */
export interface AlterPartitionRequest {
  topic: string;
  partition: number;
  brokerId: number;
  leaderEpoch: number;
  partitionEpoch: number;
  isr: number[];
}

export type { Acks } from '../settings/values.ts';
