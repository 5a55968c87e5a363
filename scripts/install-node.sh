#!/usr/bin/env bash
# Installs the Node.js that durolab runs on (.node-version: Node 24, an LTS line supported until
# April 2028) into ~/.cache/durolab/node-v<version>, from the npm registry's node-linux-<arch>
# package (the official build, shipped inside a registry package: no download from nodejs.org).
# The Makefile puts its bin/ first on PATH for every target; bin/durolab.mjs re-runs itself under
# it when started by an older node. Prints the bin directory. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version="$(tr -d ' \n' < "$root/.node-version")"
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "install-node: no node-linux package for machine $(uname -m) (x86_64 and aarch64 have one); install Node $version yourself and put it first on PATH" >&2; exit 1 ;;
esac
cache="${DUROLAB_CACHE:-$HOME/.cache/durolab}"
prefix="$cache/node-v$version"
bin="$prefix/node_modules/node-linux-$arch/bin"
if [ -x "$bin/node" ] && [ "$("$bin/node" --version 2>/dev/null)" = "v$version" ]; then
  echo "$bin"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  # Any npm fetches the package; Debian's brings one (and an older node that only runs it).
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm; } >&2
  else
    echo "install-node: npm is needed once to fetch node-linux-$arch@$version from the npm registry: install npm (apt-get install npm) and run make again" >&2
    exit 1
  fi
fi
mkdir -p "$prefix"
echo "installing Node $version (npm package node-linux-$arch) into $prefix" >&2
npm install --prefix "$prefix" --no-save --no-audit --no-fund --no-package-lock "node-linux-$arch@$version" >&2
got="$("$bin/node" --version 2>/dev/null || true)"
if [ "$got" != "v$version" ]; then
  echo "install-node: $bin/node printed '${got:-nothing}', expected v$version" >&2
  exit 1
fi
echo "$bin"
