# durolab: `make bench` runs the main job, `make test` runs the tests. Both install what
# they need on a fresh Debian/Ubuntu machine.
SHELL := /bin/bash
SCENARIO ?= io-modes
DURATION ?=
DRIVER ?=
REPEAT ?=
NODE_MODULES_STAMP := node_modules/.package-lock.json
# The Node.js durolab runs on (.node-version, Node 24 LTS), installed from the npm registry by
# scripts/install-node.sh and first on PATH for every recipe below (npm, npx and node alike).
NODE_VERSION := $(shell tr -d ' \n' < .node-version)
NODE_ARCH := $(if $(filter aarch64 arm64,$(shell uname -m)),arm64,x64)
NODE_BIN := $(or $(DUROLAB_CACHE),$(HOME)/.cache/durolab)/node-v$(NODE_VERSION)/node_modules/node-linux-$(NODE_ARCH)/bin
export PATH := $(NODE_BIN):$(PATH)

.PHONY: all deps system-deps node build test typecheck layers bench bench-engine bench-broker bench-crash-states bench-fault-disk bench-peers bench-recovery report publish scenarios-check docs findings vm-image kafka nats clean

all: build

# System packages first: npm ci's prepare step (scripts/build.mjs) compiles native code — the
# CRC-32C addon and librdkafka for @confluentinc/kafka-javascript (scripts/build-rdkafka.mjs,
# a few minutes once) — against the -dev packages scripts/install-system-deps.sh installs.
# npm ci runs again when .node-version changes, so native code is built against that Node.
$(NODE_MODULES_STAMP): package.json package-lock.json .node-version | system-deps $(NODE_BIN)/node
	npm ci --no-audit --no-fund

$(NODE_BIN)/node: .node-version
	bash scripts/install-node.sh >/dev/null && touch $@

node: $(NODE_BIN)/node

deps: $(NODE_MODULES_STAMP)

system-deps:
	bash scripts/install-system-deps.sh

build: deps
	node scripts/build.mjs

typecheck: deps
	npx tsc --noEmit -p tsconfig.json

# Every import of engine/ and harness/ against docs/architecture.md's Floors table (test/layers.test.ts checks the same).
layers: $(NODE_BIN)/node
	node scripts/layers.mjs

test: system-deps build typecheck kafka nats
	npx vitest run
	npx vitest run --config vitest.vm.config.ts
	sync
	npx vitest run --config vitest.solo.config.ts

bench: build
	node bin/durolab.mjs bench $(SCENARIO) $(if $(DURATION),--duration $(DURATION)) $(if $(REPEAT),--repeat $(REPEAT)) $(if $(DRIVER),--driver $(DRIVER)) $(BENCH_FLAGS)

bench-engine: build
	node bin/durolab.mjs engine bench

bench-broker: build
	node bin/durolab.mjs bench-broker

# Crash states checked per minute (one recorded VM trial, then N states on the host; needs QEMU).
bench-crash-states: build kafka
	node bin/durolab.mjs bench-crash-states $(BENCH_FLAGS)

# What the host route's fault disk costs Kafka and durolab's broker against a plain directory.
bench-fault-disk: build kafka
	node bin/durolab.mjs bench-fault-disk $(BENCH_FLAGS)

report: build
	node bin/durolab.mjs report $(RUN)

# A static site of every run under results/ (index, run pages, compare pages, claims) in site/.
publish: build
	node bin/durolab.mjs publish $(PUBLISH_FLAGS)

scenarios-check: build
	node bin/durolab.mjs scenario check

# The README's settings table, regenerated from engine/settings/registry.ts.
# The generated parts of docs/ (settings, scenario reference, fault kinds, systems); `make test` checks them.
docs: build
	node bin/durolab.mjs docs

# docs/findings.md's tables from the newest run of each scenario under results/.
findings: build
	node bin/durolab.mjs docs --findings results

vm-image: build
	node bin/durolab.mjs vm-image

# Apache Kafka's jars (harness/targets/kafka/pom.xml) from Maven Central into ~/.cache/durolab.
kafka: build
	node bin/durolab.mjs kafka install

# nats-server v2.12.1 (the version Jepsen's NATS analysis tested) built with `go install` from the
# Go module proxy into ~/.cache/durolab (target: nats; Debian's 2.9 has no sync_interval).
nats:
	bash scripts/install-nats.sh

clean:
	rm -rf dist

# durolab's broker vs Apache Kafka under the same Kafka-client load (RF 1/3, acks 1/all, closed loop
# and fixed rate, median of 3, ratios and PASS/FAIL), to results/peers/. BENCH_FLAGS=--quick for a smoke test.
bench-peers: build kafka
	node bin/durolab.mjs bench-peers $(BENCH_FLAGS)

bench-recovery: build kafka
	node bin/durolab.mjs bench-recovery $(BENCH_FLAGS)
