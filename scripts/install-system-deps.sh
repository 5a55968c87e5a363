#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the tests use, when any is missing: fio (engine
# baseline), sysstat (iostat cross-check), e2fsprogs (mkfs.ext4, debugfs), qemu-system-x86 and
# busybox-static (power-cut VMs), qemu-utils (qemu-io/qemu-img: the NBD disk and blklogwrites recorder tests), chromium (report test), kcat (Kafka protocol witness), mount (mount -o loop, losetup: the
# ENOSPC test), kmod (modprobe loop), gcc and libisal-dev (the CRC-32C addon over ISA-L, built
# by scripts/build-native.mjs), g++, make, python3, pkg-config, libssl-dev and zlib1g-dev (librdkafka
# and @confluentinc/kafka-javascript's binding, built from source against these by
# scripts/build-rdkafka.mjs), openjdk-17-jdk-headless and maven (target: kafka runs Apache Kafka
# from Maven Central; javac builds its crash-state recovery checker, harness/targets/kafka/recovery-check),
# qemu-system-common's qemu-storage-daemon comes with qemu-system-x86 (the host route's fault disk),
# iproute2 (ip, tc: the lab network's namespaces, veths, bridge and rate caps) and nftables (nft: its
# partitions, packet loss and no-forwarding table, harness/net/), openssh-server and openssh-client (sshd in
# lab namespaces and ssh: the external target's command templates over ssh). Needs root (or sudo). Under CI=true a test whose tool
# is missing fails (test/requirements.ts), so everything they use is listed here.
set -euo pipefail
packages=(curl fio sysstat e2fsprogs qemu-system-x86 qemu-utils busybox-static chromium mount kmod kcat gcc libisal-dev g++ make python3 pkg-config libssl-dev zlib1g-dev openjdk-17-jdk-headless maven iproute2 nftables openssh-server openssh-client)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# The VM image fetches the Debian cloud kernel with `apt-get download` when /boot has no
# readable kernel: that needs package lists, which a fresh machine may not have yet.
need_lists=0
apt-cache show linux-image-cloud-amd64 >/dev/null 2>&1 || need_lists=1
# Loop devices: the ENOSPC test mounts a small ext4 image with `mount -o loop` as root.
if [ ! -e /dev/loop-control ] && [ "$(id -u)" -eq 0 ] && command -v modprobe >/dev/null 2>&1; then
  modprobe loop || echo "note: modprobe loop failed: the ENOSPC test (mount -o loop) will fail under CI=true" >&2
fi
[ ${#missing[@]} -eq 0 ] && [ $need_lists -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "missing packages: ${missing[*]} (no apt-get here: install them with your package manager)" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo=(sudo); elif [ ${#missing[@]} -eq 0 ]; then
    echo "note: no apt package lists for linux-image-cloud-amd64; the VM image will need a readable /boot/vmlinuz-* or 'apt-get update' as root" >&2
    exit 0
  else
    echo "missing packages: ${missing[*]:-none} (or no package lists); run as root: apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
