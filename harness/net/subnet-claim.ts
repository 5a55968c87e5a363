// Which /24 of 198.18.0.0/15 a lab takes. Two harnesses (other agents, parallel test files) may
// pick at the same moment, and the kernel would happily give two bridges the same address, so
// the claim is a listening socket in the abstract unix namespace, `\0durolab-net-<subnet>`:
// binding it is atomic, a second bind answers EADDRINUSE, and the kernel releases it when its
// process dies, even by SIGKILL (no stale lock to break). A subnet some root-namespace
// interface already has an address in (a leftover not swept yet) is skipped too.
import net from 'node:net';
import os from 'node:os';
import { labAddresses, SUBNET_COUNT } from './lab-names.ts';

export interface SubnetClaim {
  index: number;
  release: () => void;
}

function subnetsInUse(): Set<string> {
  const used = new Set<string>();
  for (const addrs of Object.values(os.networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && /^198\.1[89]\./.test(a.address)) used.add(a.address.split('.').slice(0, 3).join('.'));
  }
  return used;
}

function tryBind(name: string): Promise<net.Server | null> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((s) => s.destroy());
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(null) : reject(err)));
    server.listen(`\0${name}`, () => {
      server.unref();
      resolve(server);
    });
  });
}

/** Claims a free lab subnet for this process until release() (or the process's end). */
export async function claimSubnet(start: number): Promise<SubnetClaim> {
  const used = subnetsInUse();
  for (let i = 0; i < SUBNET_COUNT; i++) {
    const index = (start + i) % SUBNET_COUNT;
    const { prefix } = labAddresses(index);
    if (used.has(prefix)) continue;
    const server = await tryBind(`durolab-net-${prefix}`);
    if (server) return { index, release: () => server.close() };
  }
  throw new Error(`lab network: all ${SUBNET_COUNT} /24 subnets of 198.18.0.0/15 are claimed by running labs or in use on this host`);
}
