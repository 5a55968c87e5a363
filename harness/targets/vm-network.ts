// How the VM target's brokers, the host controller and the host's clients reach each other,
// all on the host's loopback. Every guest runs QEMU user networking with restrict=on, so a
// guest reaches only what is forwarded:
//   host -> broker N:   127.0.0.1:hostPort(N)  --hostfwd-->  guest N, port guestPort(N)
//   guest -> broker M:  10.0.2.100:guestPort(M) --guestfwd (busybox nc)--> 127.0.0.1:hostPort(M)
//   guest -> controller: 10.0.2.100:CONTROLLER_GUEST_PORT --guestfwd--> 127.0.0.1:controllerPort
// Brokers listen on distinct guest ports so one shared guest-side address (10.0.2.100) can
// name every peer: the port tells the forwards apart. A broker advertises its guest-side URL
// (what the controller hands to the other brokers); the host keeps the host-side URL.
// guestfwd over -netdev stream: measured 9.4 vs 12.6 ms per sequential request and 233 vs
// 194 req/s with 8 connections (notes/vm-power-cut.md), and no second NIC or L2 addressing to
// set up; keep-alive connections persist through one nc process.
import type { GuestForward, HostForward } from '../vm/index.ts';
import { freePort } from '../../engine/common/free-port.ts';

/** The address every guest uses for "the host's loopback" (a free address on slirp's 10.0.2.0/24). */
export const HOST_ALIAS_IP = '10.0.2.100';
/** Guest port of the guest agent (forwarded to a free host port by the Vm launcher). */
export const AGENT_GUEST_PORT = 7070;
/** Guest-side port of the controller forward. */
export const CONTROLLER_GUEST_PORT = 9090;
/** Broker N listens on BROKER_GUEST_PORT_BASE + N in its guest. */
export const BROKER_GUEST_PORT_BASE = 9100;

export interface BrokerAddress {
  id: number;
  guestPort: number;
  hostPort: number;
  /** What the host (load, checker, metrics) uses. */
  hostUrl: string;
  /** What other brokers and the controller use (advertised). */
  guestUrl: string;
}

export interface NetworkPlan {
  controllerHostPort: number;
  /** The controller as the guests reach it. */
  controllerGuestUrl: string;
  brokers: Map<number, BrokerAddress>;
}

export function brokerGuestPort(id: number): number {
  const port = BROKER_GUEST_PORT_BASE + id;
  if (!Number.isInteger(id) || id < 0 || port > 65535 || port === AGENT_GUEST_PORT || port === CONTROLLER_GUEST_PORT) {
    throw new Error(`VM target: broker id ${id} gives no usable guest port (${BROKER_GUEST_PORT_BASE} + id must stay below 65536)`);
  }
  return port;
}

/**
 * Picks the host ports up front: every guest's guestfwd list names every broker's host port,
 * and QEMU fixes its forwards at start, so they must be known before the first VM boots.
 * The same ports are reused when a broker's VM is booted again after a power cut.
 */
export async function planNetwork(brokerIds: number[], controllerHostPort: number): Promise<NetworkPlan> {
  const brokers = new Map<number, BrokerAddress>();
  const taken = new Set<number>([controllerHostPort]);
  for (const id of brokerIds) {
    const guestPort = brokerGuestPort(id);
    let hostPort = await freePort();
    // freePort closes its probe socket: two calls can return the same port.
    while (taken.has(hostPort)) hostPort = await freePort();
    taken.add(hostPort);
    brokers.set(id, {
      id,
      guestPort,
      hostPort,
      hostUrl: `http://127.0.0.1:${hostPort}`,
      guestUrl: `http://${HOST_ALIAS_IP}:${guestPort}`,
    });
  }
  return { controllerHostPort, controllerGuestUrl: `http://${HOST_ALIAS_IP}:${CONTROLLER_GUEST_PORT}`, brokers };
}

/** Forwards of broker `id`'s VM: its own broker port in, the controller and every broker (itself too) out. */
export function forwardsFor(plan: NetworkPlan, id: number): { hostfwd: HostForward[]; guestfwd: GuestForward[] } {
  const self = plan.brokers.get(id);
  if (!self) throw new Error(`VM target: no broker ${id} in the network plan (brokers: ${[...plan.brokers.keys()].join(', ')})`);
  return {
    hostfwd: [{ hostPort: self.hostPort, guestPort: self.guestPort }],
    guestfwd: [
      { guestIp: HOST_ALIAS_IP, guestPort: CONTROLLER_GUEST_PORT, hostPort: plan.controllerHostPort },
      ...[...plan.brokers.values()].map((b) => ({ guestIp: HOST_ALIAS_IP, guestPort: b.guestPort, hostPort: b.hostPort })),
    ],
  };
}
