// /init of the initramfs: a busybox shell script that brings up the virtio devices and the
// network and runs the guest agent. It never syncs: if the agent dies, the VM powers off
// with `poweroff -f -n` (no sync), so a crash cannot flush what a power cut would have lost.

/** Static guest address on QEMU user networking's subnet (slirp's DHCP would give the same). */
export const GUEST_IP = '10.0.2.15';
/** First line /init prints; the launcher waits for it to tell a booting guest from a hung one. */
export const INIT_MARKER = 'durolab-init: up';
export const AGENT_MARKER = 'durolab-agent: listening';
/** Where the agent mounts the data disk (/dev/vda). */
export const GUEST_DATA_MOUNT = '/data';

export function renderInitScript(modules: string[]): string {
  for (const m of modules) if (!/^[A-Za-z0-9_-]+$/.test(m)) throw new Error(`init script: bad module name '${m}'`);
  return `#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
mount -t devtmpfs devtmpfs /dev
exec 0</dev/console 1>/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs -o mode=0755 tmpfs /run
echo "${INIT_MARKER} $(cut -d' ' -f1 /proc/uptime)s"
for m in ${modules.join(' ')}; do
  insmod /durolab/modules/$m.ko || echo "durolab-init: insmod $m failed"
done
ip link set lo up
ip addr add ${GUEST_IP}/24 dev eth0 && ip link set eth0 up || echo "durolab-init: no eth0"
port=
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    durolab.agent_port=*) port="\${arg#*=}" ;;
    durolab.name=*) hostname "\${arg#*=}" ;;
  esac
done
echo "durolab-init: modules and network up $(cut -d' ' -f1 /proc/uptime)s; agent port $port"
/usr/bin/node /durolab/dist/vm-agent.mjs --port "$port" --device /dev/vda --mount-point ${GUEST_DATA_MOUNT}
echo "durolab-init: agent exited with status $?; powering off without sync"
poweroff -f -n
sleep 5
echo "durolab-init: poweroff failed"
`;
}
