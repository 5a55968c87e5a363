#!/usr/bin/env bash
# `make nats`: nats-server at the version Jepsen's NATS 2.12.1 analysis tested, built from the Go
# module proxy with `go install` into the cache `make kafka` uses (~/.cache/durolab, or
# $DUROLAB_CACHE): <cache>/nats-server-<version>/bin/nats-server. Debian's nats-server (2.9.x)
# predates sync_interval (2.10), the setting the lab's flush maps to. Idempotent: a cached binary
# that answers `--version` with the pinned version is kept.
set -euo pipefail
VERSION=2.12.1
CACHE="${DUROLAB_CACHE:-$HOME/.cache/durolab}"
DIR="$CACHE/nats-server-$VERSION"
BIN="$DIR/bin/nats-server"
if [ -x "$BIN" ] && "$BIN" --version 2>/dev/null | grep -qx "nats-server: v$VERSION"; then
  echo "nats-server v$VERSION: cached at $BIN"
  exit 0
fi
# Go may be installed outside a non-login shell's PATH (the machine images put it in /usr/local/go).
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "make nats: needs Go (1.24 or later) to build nats-server v$VERSION from the Go module proxy (Debian: golang-go, or https://go.dev/dl/)" >&2
  exit 1
fi
# nats-server 2.12's go.mod asks for Go 1.24 (Debian 12's golang-go is 1.19).
GOVERSION="$(go env GOVERSION 2>/dev/null || true)"
if ! printf '%s\n' "$GOVERSION" | awk -F'[go.]' '{ exit !($3 > 1 || ($3 == 1 && $4 >= 24)) }'; then
  echo "make nats: needs Go 1.24 or later to build nats-server v$VERSION (found ${GOVERSION:-no version}; https://go.dev/dl/)" >&2
  exit 1
fi
echo "nats-server v$VERSION: go install github.com/nats-io/nats-server/v2@v$VERSION into $DIR/bin (a minute or two)"
TMP="$DIR/bin.tmp.$$"
rm -rf "$TMP"
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
GOBIN="$TMP" CGO_ENABLED=0 go install "github.com/nats-io/nats-server/v2@v$VERSION"
"$TMP/nats-server" --version | grep -qx "nats-server: v$VERSION" || { echo "make nats: the built binary does not answer --version with v$VERSION: $("$TMP/nats-server" --version)" >&2; exit 1; }
# Renamed into place: an interrupted build never leaves a half binary at $BIN.
mkdir -p "$DIR/bin"
mv -f "$TMP/nats-server" "$BIN"
echo "nats-server v$VERSION: installed at $BIN"
