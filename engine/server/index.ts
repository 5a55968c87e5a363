// engine/server: the broker's HTTP transport and process, the controller's HTTP server, and the
// local cluster the harness drives. Replication logic lives in engine/replication.
export { Broker, type BrokerOptions } from './broker.ts';
export type { BrokerHost, OpenFailure } from './broker-host.ts';
export { startCluster, defaultBrokerCommand, type BrokerPlacement, type Cluster, type ClusterBroker, type ClusterOptions, type LeaderInfo, type TopicSpec } from './cluster.ts';
export { startControllerServer, createControllerHandler, type ControllerServer, type ControllerServerOptions } from './controller-server.ts';
export { HttpControllerLink, LocalControllerLink, type ControllerLink, type HeartbeatAnswer } from './controller-link.ts';
export { FollowerFetcher, type FetcherOptions, type FetcherStats } from './fetcher.ts';
export { request, requestJson, errorFromAnswer, newKeepAliveAgent, type HttpAnswer, type RequestOptions } from './http-client.ts';
export { RECORD_BATCH_TYPE } from './http-util.ts';
export { PRODUCE_TYPES, batchFromJson } from './broker-http.ts';
export {
  brokerSettings,
  controllerSettings,
  loadRawSettings,
  applySetFlags,
  parseProperties,
  parseJsonSettings,
  parseTopicSpec,
  rawToSetFlags,
  settingsHelp,
  DEFAULT_BROKER_SETTINGS,
  DEFAULT_CONTROLLER_SETTINGS,
  type BrokerSettings,
  type ControllerSettings,
  type HttpSettings,
  type RawSettings,
} from './config.ts';
