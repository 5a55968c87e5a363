import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { deviceForPath, mountForPath, nearestExisting, parseMountinfo, splitDev } from './device.ts';

// Captured from this machine, plus a mount point with an escaped space.
const MOUNTINFO = `27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,size=12334524k
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k
44 27 8:17 /data /srv/my\\040data rw,relatime shared:5 master:1 - xfs /dev/sdb1 rw
`;

describe('parseMountinfo / mountForPath', () => {
  const entries = parseMountinfo(MOUNTINFO);

  it('reads fields, skipping optional fields and decoding octal escapes', () => {
    expect(entries).toHaveLength(5);
    expect(entries[4]).toEqual({ majorMinor: '8:17', root: '/data', mountPoint: '/srv/my data', fsType: 'xfs', source: '/dev/sdb1' });
  });

  it('picks the deepest containing mount, and the later of two mounts on one point', () => {
    expect(mountForPath(entries, '/dev/shm/x', '0:27')?.majorMinor).toBe('0:27');
    expect(mountForPath(entries, '/dev/shm', '0:99')?.majorMinor).toBe('0:27');
    expect(mountForPath(entries, '/srv/my data/log', '8:17')?.fsType).toBe('xfs');
    expect(mountForPath(entries, '/srv/my datax', '254:0')?.mountPoint).toBe('/');
    expect(mountForPath(entries, '/work', '254:0')?.source).toBe('/dev/vda');
  });

  it('rejects a malformed line with the line in the message', () => {
    expect(() => parseMountinfo('27 1 254:0 / /\n')).toThrow(/malformed line .*"27 1 254:0 \/ \/"/);
  });
});

describe('splitDev', () => {
  it('decodes glibc dev_t, including minors above 255', () => {
    expect(splitDev(0xfe00n)).toEqual({ major: 254, minor: 0 });
    expect(splitDev(0x10301n)).toEqual({ major: 259, minor: 1 });
    expect(splitDev(0x10082cn)).toEqual({ major: 8, minor: 300 }); // makedev(8, 300)
  });
});

describe('deviceForPath', () => {
  it('finds the block device of /tmp, agreeing with findmnt and sysfs', async () => {
    const info = await deviceForPath('/tmp');
    expect(info.device).not.toBeNull();
    // /proc/diskstats: major minor name ...; the device must be one of its names.
    const diskstatsNames = readFileSync('/proc/diskstats', 'utf8').trim().split('\n').map((l) => l.trim().split(/\s+/)[2]);
    expect(diskstatsNames).toContain(info.device);
    const st = statSync('/tmp', { bigint: true });
    const { major, minor } = splitDev(st.dev);
    expect(info.majorMinor).toBe(`${major}:${minor}`);
    expect(readFileSync(`/sys/dev/block/${info.majorMinor}/uevent`, 'utf8')).toContain(`DEVNAME=${info.device}`);
    const fm = await execa('findmnt', ['-n', '-o', 'FSTYPE,TARGET', '--target', '/tmp']);
    const [fsType, target] = fm.stdout.trim().split(/\s+/);
    expect(info.fsType).toBe(fsType);
    expect(info.mountPoint).toBe(target);
  });

  it('says /dev/shm (tmpfs) has no block device instead of throwing', async () => {
    const info = await deviceForPath('/dev/shm');
    expect(info.device).toBeNull();
    expect(info.fsType).toBe('tmpfs');
    expect(info.mountPoint).toBe('/dev/shm');
    expect(info.note).toMatch(/no block device/);
  });

  it('resolves a temp dir and symlinks; errors name a missing path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durolab-dev-'));
    try {
      const tmpDevice = (await deviceForPath('/tmp')).device;
      expect((await deviceForPath(dir)).device).toBe(tmpDevice);
      // A link on tmpfs pointing at the disk: the target's device counts.
      const link = join('/dev/shm', `durolab-link-${process.pid}`);
      symlinkSync(dir, link);
      try {
        expect((await deviceForPath(link)).device).toBe(tmpDevice);
      } finally {
        rmSync(link, { force: true });
      }
      await expect(deviceForPath(join(dir, 'nope'))).rejects.toThrow(`deviceForPath: cannot resolve ${join(dir, 'nope')}`);
      expect(await nearestExisting(join(dir, 'a', 'b'))).toBe(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
