// The VM target's forwarding plan: every guest reaches the controller and every broker
// through one guest-side address, on the host's loopback only.
import { describe, expect, it } from 'vitest';
import { buildQemuArgs } from '../vm/qemu-args.ts';
import { FileDisk } from '../vm/index.ts';
import { AGENT_GUEST_PORT, CONTROLLER_GUEST_PORT, HOST_ALIAS_IP, brokerGuestPort, forwardsFor, planNetwork } from './vm-network.ts';

describe('VM target network plan', () => {
  it('gives each broker its own host port and guest port, and every guest a forward to the controller and to every broker', async () => {
    const plan = await planNetwork([1, 2, 3], 40000);
    const hostPorts = [...plan.brokers.values()].map((b) => b.hostPort);
    expect(new Set([...hostPorts, 40000]).size).toBe(4);
    expect(plan.controllerGuestUrl).toBe(`http://${HOST_ALIAS_IP}:${CONTROLLER_GUEST_PORT}`);
    const b2 = plan.brokers.get(2)!;
    expect(b2).toEqual({ id: 2, guestPort: 9102, hostPort: b2.hostPort, hostUrl: `http://127.0.0.1:${b2.hostPort}`, guestUrl: 'http://10.0.2.100:9102' });

    const f = forwardsFor(plan, 2);
    expect(f.hostfwd).toEqual([{ hostPort: b2.hostPort, guestPort: 9102 }]);
    expect(f.guestfwd).toEqual([
      { guestIp: HOST_ALIAS_IP, guestPort: CONTROLLER_GUEST_PORT, hostPort: 40000 },
      ...[1, 2, 3].map((id) => ({ guestIp: HOST_ALIAS_IP, guestPort: 9100 + id, hostPort: plan.brokers.get(id)!.hostPort })),
    ]);
    expect(() => forwardsFor(plan, 9)).toThrow(/no broker 9 in the network plan \(brokers: 1, 2, 3\)/);

    // As QEMU gets it: user networking restricted, every forward bound to the host's loopback.
    const args = buildQemuArgs({
      name: 'broker-2',
      accel: 'tcg',
      kernel: '/k',
      initrd: '/i',
      disk: new FileDisk('/d.img', 64),
      memoryMiB: 512,
      serialLogPath: '/s.log',
      agentPort: AGENT_GUEST_PORT,
      hostfwd: f.hostfwd,
      guestfwd: f.guestfwd,
      busybox: '/usr/bin/busybox',
    });
    const netdev = args[args.indexOf('-netdev') + 1]!;
    expect(netdev).toMatch(/^user,id=n0,restrict=on,/);
    expect(netdev).toContain(`hostfwd=tcp:127.0.0.1:${b2.hostPort}-:9102`);
    expect(netdev).toContain(`guestfwd=tcp:10.0.2.100:9090-cmd:/usr/bin/busybox nc 127.0.0.1 40000`);
    for (const m of netdev.matchAll(/cmd:\S+ nc (\S+) \d+/g)) expect(m[1]).toBe('127.0.0.1');
  });

  it('refuses broker ids whose guest port would collide or overflow', () => {
    expect(brokerGuestPort(0)).toBe(9100);
    expect(() => brokerGuestPort(-1)).toThrow(/broker id -1 gives no usable guest port/);
    expect(() => brokerGuestPort(60_000)).toThrow(/below 65536/);
  });
});
