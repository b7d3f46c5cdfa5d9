# pds: make help lists the targets.
SHELL := /bin/bash
GO ?= go
PDS_ADDR ?= 127.0.0.1:8080
BIN := bin/pds
SAMPLE_IN := sample-input
VAR := var
SAMPLE_SNAP := $(VAR)/sample-snapshot
DEMO_KEYS := $(VAR)/demo.keys
DEMO_KEY := $(VAR)/demo.key
# Lint tools are installed into .tools/ (ignored by git) on first use.
TOOLS := .tools
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)
# What `pds version` says, set with the linker so that a build without the Go
# toolchain's VCS stamp (-buildvcs=false, a tree without .git) still names its
# commit. PDS_VERSION is the release tag of HEAD, else devel; override either.
PDS_VERSION ?= $(shell git describe --tags --exact-match 2>/dev/null || echo devel)
PDS_COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
MODIFIED = $(shell test -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo true)
BUILDINFO := github.com/productdata/pds/internal/buildinfo
LDFLAGS = -X $(BUILDINFO).version=$(PDS_VERSION) -X $(BUILDINFO).commit=$(PDS_COMMIT) -X $(BUILDINFO).modified=$(MODIFIED)

.PHONY: help build cross test-arm64 test-windows tools tools-check fleet run test lint fmt load image-test bench bench-go bench-http bench-ingest bench-resolve bench-search bench-serve bench-off bench-off-nightly bench-size bench-delta bench-export bench-memcg bench-scale compare-ingest compare-get fuzz conformance sample clean

help: ## list the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

build: ## build bin/pds (its version and commit set by the linker)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/pds

# The platforms pds builds for; docs/platforms.md says what each supports.
CROSS := linux/amd64 linux/arm64 darwin/arm64 darwin/amd64 windows/amd64

cross: ## build bin/cross/OS-ARCH/pds[.exe] for every platform (CGO_ENABLED=0) and go vet every package, tests included, for each
	@set -e; for t in $(CROSS); do \
		os=$${t%/*}; arch=$${t#*/}; ext=; if [ $$os = windows ]; then ext=.exe; fi; \
		echo "cross: $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -o bin/cross/$$os-$$arch/pds$$ext ./cmd/pds; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) vet ./...; \
	done

test-arm64: ## the tests of the packages that touch the OS and the disk, and a smoke of bin/cross/linux-arm64/pds (ingest, sign, publish, pull, serve, a request), under qemu-user (installed from Debian when missing); CI runs it
	bash scripts/platforms.sh arm64

test-windows: ## osfile's and kv's tests and the same smoke with pds.exe, under Wine (installed from Debian when missing); CI runs it; docs/platforms.md says what Wine cannot run
	bash scripts/platforms.sh windows

$(SAMPLE_SNAP)/manifest.json: $(wildcard $(SAMPLE_IN)/*.ndjson) | build
	@rm -rf $(SAMPLE_SNAP)
	@mkdir -p $(VAR)
	$(BIN) ingest --in $(SAMPLE_IN) --out $(SAMPLE_SNAP) --quiet

$(DEMO_KEY): | build
	@mkdir -p $(VAR)
	@rm -f $(DEMO_KEYS)
	@$(BIN) keys add --keys $(DEMO_KEYS) --tenant demo --scopes identifiers:validate,digital-links:parse,products:read,products:resolve,products:search,sources:read,mcp 2>/dev/null > $(DEMO_KEY).tmp && mv $(DEMO_KEY).tmp $(DEMO_KEY)

run: build $(SAMPLE_SNAP)/manifest.json $(DEMO_KEY) ## serve the bundled sample on 127.0.0.1:8080 (PDS_ADDR overrides) with a demo key
	@echo "demo API key: $$(cat $(DEMO_KEY))"
	@echo "try:  curl -s -H \"Authorization: Bearer $$(cat $(DEMO_KEY))\" http://$(PDS_ADDR)/v1/products/09520123456788/dpp"
	$(BIN) serve --snapshot $(SAMPLE_SNAP) --keys $(DEMO_KEYS) --addr $(PDS_ADDR)

tools: ## install what the tests run for real, when missing: versitygw (go install), minisign, chromium, node (apt), the MCP SDK, browser-test packages and DuckDB (npm, into .tools/)
	bash scripts/tools.sh

tools-check: ## prove make tools installs every tool the tests use: run it with empty tool folders, then check each tool is found (CI runs it)
	bash scripts/tools-check.sh

test: tools ## go vet and every test with -race (what CI runs)
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...

lint: $(STATICCHECK) ## gofmt check, go vet and staticcheck (installed into .tools/ on first use; CI runs it)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

$(STATICCHECK):
	@mkdir -p $(TOOLS)/bin
	GOBIN=$(CURDIR)/$(TOOLS)/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(TOOLS)/bin/staticcheck $@

fmt: ## gofmt every Go file
	gofmt -w $$(git ls-files '*.go')

sample: build ## regenerate the bundled sample input (sample-input) with pds gen
	rm -rf $(SAMPLE_IN)
	$(BIN) gen --products 300 --seed 1 --showcase --out $(SAMPLE_IN)

bench: bench-go bench-http bench-ingest bench-resolve bench-search bench-serve bench-off bench-off-nightly bench-size bench-delta bench-export bench-memcg ## every benchmark; figures go to BENCHMARKS.md

bench-go: ## in-process Go benchmarks of the hot paths (GS1 syntax, view Get, REST GET, resolve of 1000, ingest of 10k records) with allocations; table to BENCHMARKS.md
	bash scripts/bench-go.sh

bench-http: build ## ingest 1M products, identity/passport/evidence GETs under wrk vs a minimal net/http baseline
	bash scripts/bench-http.sh

bench-ingest: build ## pds ingest of 200k products vs a PostgreSQL 15 load (COPY into jsonb, keys, subject and trigram indexes) of the same files
	bash scripts/bench-ingest.sh

bench-resolve: build ## bulk resolve under wrk vs PostgreSQL = ANY (pgbench); then a 10M-line resolve stream and pds resolve, against the batch call
	bash scripts/bench-resolve.sh

bench-serve: build ## pds serve on the 1M snapshot: start to /readyz 200 (verification included), RSS while serving
	bash scripts/bench-serve.sh

bench-scale: build ## SCALE (10M) products beside BASE_SCALE (1M): full build with records, a night of NIGHT (10,000) products, its bundle applied by a replica that keeps the base, then bench-resolve, bench-serve and bench-memcg at SCALE (STAGES picks; each stage checks the disk first); to BENCHMARKS.md
	bash scripts/bench-scale.sh

bench-memcg: build ## pds serve on the N_BIG-product snapshot inside a MEM_MB (1024) memory cgroup, page cache dropped: random identity GETs and resolve calls, ids/s, p99, disk reads a lookup (needs root); to BENCHMARKS.md
	bash scripts/bench-memcg.sh

bench-delta: build ## 1% and 5% of 1M products changed (one in seven of them deleted, DELETE_ONE_IN=0: changed only; about as many added, ADD_PER10K=0: none): the incremental build, delta size, bytes and objects a replica fetches by delta and whole, apply time; to BENCHMARKS.md
	bash scripts/bench-delta.sh

bench-export: build ## pds export of the 1M snapshot to Parquet: time, peak RSS, the file's size against the snapshot's; to BENCHMARKS.md
	bash scripts/bench-export.sh

bench-size: build ## bytes a product of whole snapshots of 200k and 1M generated products (seed 1), per file, per folder and in all; to BENCHMARKS.md
	bash scripts/bench-size.sh

bench-search: build ## typo'd manufacturer search vs PostgreSQL pg_trgm
	bash scripts/bench-search.sh

load: build ## 60 s at twice saturation on identity and resolve with a slow-client attack alongside, then two connection floods; figures to BENCHMARKS.md (not in make test)
	bash scripts/load.sh

image-test: ## the deploy/Dockerfile image under podman: read-only as 65532, a signed pull over TLS inside it, a request, SIGTERM (CI runs it; not in make test)
	bash scripts/image-test.sh

bench-off: build ## import + ingest of a synthetic 1M-record Open Food Facts dump: records/s, peak RSS, 3M projection
	bash scripts/bench-off.sh

bench-off-nightly: build ## the Open Food Facts nightly job at 1M records: a daily delta imported, built incrementally, signed, published, pulled; to BENCHMARKS.md
	bash scripts/bench-off-nightly.sh

compare-ingest: build ## A=REF [B=REF, default bin/pds]: alternating 200k builds by two pds (a file or a git revision); medians of wall, CPU, peak RSS
	bash scripts/compare-ingest.sh

compare-get: build ## A=REF [B=REF] [SNAP_A=DIR SNAP_B=DIR]: GETs by two pds (or of two snapshots), each run after a baseline run of its own; medians of ratio and server CPU a request
	bash scripts/compare-get.sh

fuzz: ## run every fuzz target for FUZZTIME each (default 10m)
	bash scripts/fuzz.sh $${FUZZTIME:-10m}

fleet: build ## versitygw origin, 3 followers + pds serve behind nginx, wrk load while three builds are published, the last by delta; the build key rotated mid-run, the retired key refused
	bash scripts/fleet.sh

conformance: build ## the public MCP conformance suite against a loopback server
	bash scripts/conformance.sh

clean: ## remove built binaries and snapshots
	rm -rf bin $(VAR)
