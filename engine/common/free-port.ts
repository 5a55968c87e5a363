// A loopback TCP port for a server that binds it later (a QEMU hostfwd, a Kafka JVM).
//
// listen(0) hands out a port from the kernel's ephemeral range, and closing the probe frees it for
// anyone: every outgoing connect() on the machine also takes its local port from that range, so
// under parallel load the port is often gone by the time QEMU binds it ("Could not set up host
// forwarding rule"). Ports below the ephemeral range are never picked for outgoing connections, so
// a port found free there stays free unless another process listens on it deliberately.
import net from 'node:net';
import { readFileSync } from 'node:fs';

const LOWEST = 10_000;
const recentlyHanded = new Set<number>();

/** The kernel's ephemeral range [low, high], from /proc; Linux's default where unreadable. */
export function ephemeralPortRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // not Linux: fall through
  }
  return [32_768, 60_999];
}

function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const bound = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(bound));
    });
  });
}

/** A port on 127.0.0.1 that nothing listens on now, below the ephemeral range where the range leaves room. */
export async function freePort(): Promise<number> {
  const [low] = ephemeralPortRange();
  if (low - LOWEST >= 1000) {
    for (let attempt = 0; attempt < 200; attempt++) {
      const candidate = LOWEST + Math.floor(Math.random() * (low - LOWEST));
      if (recentlyHanded.has(candidate)) continue;
      const port = await tryListen(candidate);
      if (port !== undefined) return remember(port);
    }
  }
  const port = await tryListen(0);
  if (port === undefined) throw new Error('freePort: could not bind any port on 127.0.0.1');
  return remember(port);
}

function remember(port: number): number {
  recentlyHanded.add(port);
  if (recentlyHanded.size > 4096) recentlyHanded.delete(recentlyHanded.values().next().value!);
  return port;
}
