// How a broker talks to its controller: over HTTP to the cluster's controller, or in-process
// for a standalone broker (a private Controller that only this broker heartbeats to).
import type http from 'node:http';
import { Controller, type AlterPartitionRequest, type HeartbeatAnswer, type PartitionAssignment } from '../replication/index.ts';
import { newKeepAliveAgent, requestJson } from './http-client.ts';

export type { HeartbeatAnswer };

export interface ControllerLink {
  readonly description: string;
  /** `incarnation`: this broker process's id for this start; `cleanShutdown`: its previous run ended cleanly (Controller.registerBroker). */
  heartbeat(brokerId: number, url: string, kafka?: string, incarnation?: string, cleanShutdown?: boolean): Promise<HeartbeatAnswer>;
  alterPartition(req: AlterPartitionRequest): Promise<PartitionAssignment>;
  close(): void;
}

export class HttpControllerLink implements ControllerLink {
  readonly description: string;
  private readonly agent: http.Agent = newKeepAliveAgent(4);

  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs: number,
  ) {
    this.description = baseUrl;
  }

  heartbeat(brokerId: number, url: string, kafka?: string, incarnation?: string, cleanShutdown?: boolean): Promise<HeartbeatAnswer> {
    return requestJson<HeartbeatAnswer>(`${this.baseUrl}/v1/controller/heartbeat`, {
      json: { brokerId, url, ...(kafka ? { kafka } : {}), ...(incarnation ? { incarnation } : {}), ...(cleanShutdown !== undefined ? { cleanShutdown } : {}) },
      agent: this.agent,
      timeoutMs: this.timeoutMs,
    });
  }

  alterPartition(req: AlterPartitionRequest): Promise<PartitionAssignment> {
    return requestJson<PartitionAssignment>(`${this.baseUrl}/v1/controller/alter-partition`, {
      json: req,
      agent: this.agent,
      timeoutMs: this.timeoutMs,
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * Standalone broker: an in-process controller holding this broker's topics at RF 1. It is
 * never ticked, so the broker can never fence itself (there is no one else to elect).
 */
export class LocalControllerLink implements ControllerLink {
  readonly description = 'in-process (standalone)';
  readonly controller: Controller;

  constructor(brokerId: number, url: string, topics: ReadonlyArray<{ name: string; partitions: number }>) {
    // Every start is a new controller: there is no earlier incarnation, and RF 1 has no one else to elect.
    this.controller = new Controller({ sessionTimeoutMs: 1 << 30, uncleanLeaderElection: false, eligibleLeaderReplicas: false });
    this.controller.registerBroker(brokerId, url);
    for (const t of topics) this.controller.createTopic(t.name, t.partitions, 1, [brokerId]);
  }

  async heartbeat(brokerId: number, url: string, kafka?: string, incarnation?: string, cleanShutdown?: boolean): Promise<HeartbeatAnswer> {
    return this.controller.heartbeat(brokerId, url, kafka, incarnation, cleanShutdown);
  }

  async alterPartition(req: AlterPartitionRequest): Promise<PartitionAssignment> {
    return this.controller.alterPartition(req);
  }

  close(): void {}
}
