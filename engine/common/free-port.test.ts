import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { ephemeralPortRange, freePort } from './free-port.ts';

describe('freePort', () => {
  it('hands out distinct loopback ports below the ephemeral range, each bindable by the caller', async () => {
    const [low, high] = ephemeralPortRange();
    expect(low).toBeLessThan(high);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      if (low - 10_000 >= 1000) expect(port).toBeLessThan(low);
      await new Promise<void>((resolve, reject) => {
        const srv = net.createServer();
        srv.once('error', reject);
        srv.listen(port, '127.0.0.1', () => srv.close(() => resolve()));
      });
    }
  });

  it('outgoing connections never take a port it handed out (they draw from the ephemeral range)', async () => {
    const srv = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const { port: target } = srv.address() as net.AddressInfo;
    const handed = new Set(await Promise.all(Array.from({ length: 10 }, () => freePort())));
    const [low, high] = ephemeralPortRange();
    const localPorts: number[] = [];
    for (let i = 0; i < 50; i++) {
      const sock = net.connect(target, '127.0.0.1');
      await new Promise<void>((r) => sock.once('connect', () => r()));
      localPorts.push(sock.localPort!);
      sock.destroy();
    }
    srv.close();
    for (const p of localPorts) {
      expect(p).toBeGreaterThanOrEqual(low);
      expect(p).toBeLessThanOrEqual(high);
      expect(handed.has(p)).toBe(false);
    }
  });
});
