#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages the tests use, when any is missing: fio (engine
# baseline), sysstat (iostat cross-check), e2fsprogs (mkfs.ext4, debugfs), qemu-system-x86 and
# busybox-static (power-cut VMs), chromium (report test). Needs root (or sudo).
set -euo pipefail
packages=(curl fio sysstat e2fsprogs qemu-system-x86 busybox-static chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "missing packages: ${missing[*]} (no apt-get here: install them with your package manager)" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
    echo "missing packages: ${missing[*]}; run as root: apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
