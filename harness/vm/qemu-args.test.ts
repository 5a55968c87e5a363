import { describe, expect, it } from 'vitest';
import { FileDisk } from './disk.ts';
import { buildQemuArgs, kernelCommandLine, type QemuArgsInput } from './qemu-args.ts';

const base = (over: Partial<QemuArgsInput> = {}): QemuArgsInput => ({
  name: 'b1',
  accel: 'tcg',
  kernel: '/img/vmlinuz',
  initrd: '/img/initrd.cpio',
  disk: new FileDisk('/w/disk,1.img', 256),
  memoryMiB: 1024,
  serialLogPath: '/w/b1.serial.log',
  agentPort: 7070,
  hostfwd: [{ hostPort: 40001, guestPort: 7070 }, { hostPort: 40002, guestPort: 9092 }],
  guestfwd: [{ guestIp: '10.0.2.100', guestPort: 9000, hostPort: 41000 }],
  busybox: '/usr/bin/busybox',
  bios: '/usr/share/qemu/qboot.rom',
  ...over,
});

const opt = (args: string[], flag: string): string[] => args.flatMap((a, i) => (a === flag ? [args[i + 1]!] : []));

describe('QEMU command line', () => {
  it('keeps all traffic on the host loopback: restrict=on, hostfwd bound to 127.0.0.1, guestfwd to 127.0.0.1', () => {
    const args = buildQemuArgs(base());
    const [netdev] = opt(args, '-netdev');
    expect(netdev).toBe(
      'user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:40001-:7070,hostfwd=tcp:127.0.0.1:40002-:9092,' +
        'guestfwd=tcp:10.0.2.100:9000-cmd:/usr/bin/busybox nc 127.0.0.1 41000',
    );
    expect(opt(args, '-device')).toEqual(['virtio-net-pci,netdev=n0']);
  });

  it('uses the fast TCG setup, a file serial console, and escapes commas in the disk path', () => {
    const args = buildQemuArgs(base());
    expect(opt(args, '-cpu')).toEqual(['qemu64,+rdrand']);
    expect(opt(args, '-bios')).toEqual(['/usr/share/qemu/qboot.rom']);
    expect(opt(args, '-drive')).toEqual(['file=/w/disk,,1.img,format=raw,if=virtio,cache=writeback']);
    expect(opt(args, '-chardev')).toEqual(['file,id=ser0,path=/w/b1.serial.log']);
    expect(opt(args, '-append')[0]).toBe('console=ttyS0 quiet panic=-1 durolab.agent_port=7070 durolab.name=b1');
    expect(args).toEqual(expect.arrayContaining(['-no-reboot', '-nodefaults']));
    expect(opt(buildQemuArgs(base({ accel: 'kvm', bios: undefined })), '-cpu')).toEqual(['host']);
    expect(buildQemuArgs(base({ bios: undefined }))).not.toContain('-bios');
  });

  it('resumes a saved guest through a shell-quoted exec: migration, and offers QMP only when asked', () => {
    const plain = buildQemuArgs(base());
    expect(plain).not.toContain('-incoming');
    expect(plain).not.toContain('-qmp');
    const resumed = buildQemuArgs(base({ incomingState: "/c/it's here/t.state", qmpSocket: '/tmp/q,1.sock' }));
    expect(opt(resumed, '-incoming')).toEqual([`exec:cat '/c/it'\\''s here/t.state'`]);
    expect(opt(resumed, '-qmp')).toEqual(['unix:/tmp/q,,1.sock,server=on,wait=off']);
  });

  it('rejects forwards that would leave the guest network or make no sense', () => {
    expect(() => buildQemuArgs(base({ guestfwd: [{ guestIp: '192.168.1.5', guestPort: 1, hostPort: 2 }] }))).toThrow(/must be a free address on 10\.0\.2\.0\/24/);
    expect(() => buildQemuArgs(base({ guestfwd: [{ guestIp: '10.0.2.2', guestPort: 1, hostPort: 2 }] }))).toThrow(/not \.2 gateway/);
    expect(() => buildQemuArgs(base({ hostfwd: [{ hostPort: 0, guestPort: 7070 }] }))).toThrow(/ports in 1\.\.65535/);
    expect(() => kernelCommandLine({ name: 'a b', agentPort: 1 })).toThrow(/must match/);
    expect(() => buildQemuArgs(base({ busybox: '/opt/my box/busybox' }))).toThrow(/must not contain commas or spaces/);
  });
});
