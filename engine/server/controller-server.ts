// The controller over HTTP: brokers heartbeat here and learn their assignments in the answer;
// leaders send AlterPartition (ISR changes) here. It runs on the host, outside the brokers, so
// it survives broker faults (like Kafka's separate controller quorum).
import http from 'node:http';
import { Controller, type AlterPartitionRequest, type ControllerOptions, BrokerError } from '../replication/index.ts';
import { settingDefault } from '../settings/index.ts';
import { ClientGoneError, parseQuery, readJsonBody, sendError, sendJson, toBrokerError } from './http-util.ts';

export interface ControllerServerOptions extends Partial<ControllerOptions> {
  port: number;
  host?: string;
  /** How often tick() fences silent brokers and elects leaders. */
  tickMs?: number;
}

export interface ControllerServer {
  url: string;
  controller: Controller;
  close(): Promise<void>;
}

function obj(body: unknown, route: string): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BrokerError('INVALID_REQUEST', `${route}: expected a JSON object body`);
  }
  return body as Record<string, unknown>;
}

function intField(o: Record<string, unknown>, field: string, route: string, min = 0): number {
  const v = o[field];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) {
    throw new BrokerError('INVALID_REQUEST', `${route}: field ${field} must be an integer >= ${min}, got ${JSON.stringify(v)}`, { field });
  }
  return v;
}

function stringField(o: Record<string, unknown>, field: string, route: string): string {
  const v = o[field];
  if (typeof v !== 'string' || v === '') throw new BrokerError('INVALID_REQUEST', `${route}: field ${field} must be a non-empty string`, { field });
  return v;
}

function booleanField(o: Record<string, unknown>, field: string, route: string): boolean {
  const v = o[field];
  if (typeof v !== 'boolean') throw new BrokerError('INVALID_REQUEST', `${route}: field ${field} must be true or false, got ${JSON.stringify(v)}`, { field });
  return v;
}

function intArray(o: Record<string, unknown>, field: string, route: string): number[] {
  const v = o[field];
  if (!Array.isArray(v) || !v.every((x) => Number.isSafeInteger(x) && x >= 0)) {
    throw new BrokerError('INVALID_REQUEST', `${route}: field ${field} must be an array of broker ids`, { field });
  }
  return v as number[];
}

export function createControllerHandler(controller: Controller): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const route = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    parseQuery(q < 0 ? '' : url.slice(q + 1), []);
    const method = req.method ?? 'GET';
    if (method === 'POST' && path === '/v1/controller/heartbeat') {
      const o = obj(await readJsonBody(req), 'heartbeat');
      const kafka = o.kafka === undefined ? undefined : stringField(o, 'kafka', 'heartbeat');
      const incarnation = o.incarnation === undefined ? undefined : stringField(o, 'incarnation', 'heartbeat');
      const clean = o.cleanShutdown === undefined ? undefined : booleanField(o, 'cleanShutdown', 'heartbeat');
      return sendJson(res, 200, controller.heartbeat(intField(o, 'brokerId', 'heartbeat'), stringField(o, 'url', 'heartbeat'), kafka, incarnation, clean));
    }
    if (method === 'POST' && path === '/v1/controller/alter-partition') {
      const o = obj(await readJsonBody(req), 'alter-partition');
      const r = 'alter-partition';
      const request: AlterPartitionRequest = {
        topic: stringField(o, 'topic', r),
        partition: intField(o, 'partition', r),
        brokerId: intField(o, 'brokerId', r),
        leaderEpoch: intField(o, 'leaderEpoch', r),
        partitionEpoch: intField(o, 'partitionEpoch', r),
        isr: intArray(o, 'isr', r),
      };
      return sendJson(res, 200, controller.alterPartition(request));
    }
    if (method === 'POST' && path === '/v1/controller/topics') {
      const o = obj(await readJsonBody(req), 'topics');
      const r = 'topics';
      const name = stringField(o, 'name', r);
      const partitions = intField(o, 'partitions', r, 1);
      const rf = o.replicationFactor === undefined ? 1 : intField(o, 'replicationFactor', r, 1);
      const brokerIds =
        o.brokerIds === undefined
          ? controller
              .state()
              .brokers.filter((b) => b.alive)
              .map((b) => b.id)
              .sort((a, b) => a - b)
          : intArray(o, 'brokerIds', r);
      controller.createTopic(name, partitions, rf, brokerIds);
      return sendJson(res, 200, { name, partitions: controller.state().partitions.filter((p) => p.topic === name) });
    }
    if (method === 'POST' && path === '/v1/controller/reassign') {
      const o = obj(await readJsonBody(req), 'reassign');
      const r = 'reassign';
      return sendJson(res, 200, controller.reorderReplicas(stringField(o, 'topic', r), intField(o, 'partition', r), intArray(o, 'replicas', r)));
    }
    if (method === 'POST' && path === '/v1/controller/elect-preferred') {
      const o = obj(await readJsonBody(req), 'elect-preferred');
      const r = 'elect-preferred';
      return sendJson(res, 200, controller.electPreferred(stringField(o, 'topic', r), intField(o, 'partition', r)));
    }
    if (method === 'GET' && path === '/v1/controller/state') return sendJson(res, 200, controller.state());
    if (method === 'GET' && path === '/v1/health') return sendJson(res, 200, { status: 'ok', role: 'controller', pid: process.pid });
    throw new BrokerError(
      'INVALID_REQUEST',
      `no route ${method} ${path}: expected POST /v1/controller/heartbeat, POST /v1/controller/alter-partition, POST /v1/controller/topics, POST /v1/controller/reassign, POST /v1/controller/elect-preferred or GET /v1/controller/state`,
    );
  };
  return (req, res) => {
    route(req, res).catch((err: unknown) => {
      if (err instanceof ClientGoneError) return void res.destroy();
      sendError(res, toBrokerError(err), !req.complete);
    });
  };
}

export async function startControllerServer(opts: ControllerServerOptions): Promise<ControllerServer> {
  const controller = new Controller({
    sessionTimeoutMs: opts.sessionTimeoutMs ?? 1500,
    uncleanLeaderElection: opts.uncleanLeaderElection ?? false,
    eligibleLeaderReplicas: opts.eligibleLeaderReplicas ?? settingDefault<boolean>('eligible.leader.replicas'),
    ...(opts.minInsyncReplicas !== undefined ? { minInsyncReplicas: opts.minInsyncReplicas } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });
  const server = http.createServer(
    { keepAliveTimeout: 30_000, headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1000, noDelay: true },
    createControllerHandler(controller),
  );
  server.on('clientError', (_err, socket) => socket.destroy());
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(new Error(`controller on ${host}:${opts.port}: cannot listen: ${err.message}`));
    server.once('error', onError);
    server.listen(opts.port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const tick = setInterval(() => controller.tick(), opts.tickMs ?? 100);
  let closed: Promise<void> | null = null;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    controller,
    close() {
      closed ??= new Promise<void>((resolve) => {
        clearInterval(tick);
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
