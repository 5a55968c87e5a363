# durolab: `make bench` runs the main job, `make test` runs the tests. Both install what
# they need on a fresh Debian/Ubuntu machine.
SHELL := /bin/bash
SCENARIO ?= io-modes
DURATION ?=
DRIVER ?=
REPEAT ?=
NODE_MODULES_STAMP := node_modules/.package-lock.json

.PHONY: all deps system-deps build test typecheck bench bench-engine bench-broker bench-crash-states bench-fault-disk bench-peers bench-recovery report publish scenarios-check docs findings vm-image kafka nats clean

all: build

# System packages first: npm ci's prepare step (scripts/build.mjs) compiles native code — the
# CRC-32C addon and librdkafka for @confluentinc/kafka-javascript (scripts/build-rdkafka.mjs,
# a few minutes once) — against the -dev packages scripts/install-system-deps.sh installs.
$(NODE_MODULES_STAMP): package.json package-lock.json | system-deps
	npm ci --no-audit --no-fund

deps: $(NODE_MODULES_STAMP)

system-deps:
	bash scripts/install-system-deps.sh

build: deps
	node scripts/build.mjs

typecheck: deps
	npx tsc --noEmit -p tsconfig.json

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
