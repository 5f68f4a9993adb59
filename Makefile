# Switchboard — `make help` lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
# go.mod names the Go release with the current standard-library fixes; a Go
# older than that fetches it through the module proxy (GOTOOLCHAIN=auto), even
# where the machine's environment says GOTOOLCHAIN=local.
export GOTOOLCHAIN := auto
FUNCTIONS := $(notdir $(wildcard functions/*))
# The config: CONFIG=…, else $SWITCHBOARD_CONFIG, else switchboard.yaml here
# when it exists, else the example (the CLI's rule too: devrt.ConfigFile).
CONFIG ?= $(or $(SWITCHBOARD_CONFIG),$(firstword $(wildcard switchboard.yaml) switchboard.example.yaml))
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
FUZZTIME ?= 30s
FUZZ := shared/platform/config:FuzzParse shared/tools/workspace:FuzzResolve shared/usecases/approvals:FuzzVerify shared/tools/nctool:FuzzScope \
	shared/platform/scrub:FuzzScrub shared/platform/untrusted:FuzzFrame shared/httpapi:FuzzDecodeInvokeRequest \
	shared/platform/textsplit:FuzzSplit shared/platform/safehtml:FuzzTextAndAttr shared/platform/safehtml:FuzzSVG shared/usecases/wake:FuzzScrubThenSplit \
	shared/adapters/dynamo/ddb:FuzzMarshalAgreesWithAttributeValue shared/adapters/dynamo/ddb:FuzzPutItemIsTheSDKs \
	shared/adapters/dynamo/ddb:FuzzGetItemAnswerReadsAsTheSDKReadsIt
LDFLAGS := -s -w -X github.com/switchboard-dev/switchboard/shared/app.Version=$(VERSION)
# The function binaries' build tags (deploy.BuildTags; the guard tests list
# what each function links with them).
LAMBDA_TAGS := lambda.norpc,grpcnotrace

.DEFAULT_GOAL := help
.PHONY: help dev test unit infra-test bench build synth deploy invoke fuzz clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  make %-8s %s\n",$$1,$$2}'
	@echo "  settings: CONFIG=$(CONFIG) ADDR=$(ADDR) S3_ADDR=$(S3_ADDR) DYNALITE_PORT=$(DYNALITE_PORT) DATA=$(DATA)"

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

ADDR ?= 127.0.0.1:8080
S3_ADDR ?= 127.0.0.1:8702
DYNALITE_PORT ?= 8701
DATA ?= .data
export DYNALITE_PORT
# The CLI, built once per make run (the Go cache makes a rebuild quick). The
# recipes run the binary, not `go run`: go run ends with status 1 after its
# program exits on Ctrl-C, and make would then report an error.
BIN := bin/switchboard

dev: node_modules/.installed ## run Switchboard locally on ADDR (dynalite on DYNALITE_PORT, in-process S3 on S3_ADDR, data in DATA; Ctrl-C stops all)
	$(GO) build -o $(BIN) ./cmd/switchboard
	DYNALITE_PATH=$(DATA)/dynalite scripts/dynalite.sh $(BIN) dev --config $(CONFIG) --addr $(ADDR) --s3-addr $(S3_ADDR) --data $(DATA)

test: node_modules/.installed ## run every test: vet, staticcheck, govulncheck, unit, store (dynalite), end-to-end, infra
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	GO=$(GO) scripts/vulncheck.sh # offline Go vulnerability database, pinned in the script
	scripts/nextcloud-test.sh run bash -c 'set -o pipefail; $(GO) test -count=1 -json ./... | node scripts/gotest-summary.cjs' # with a real Nextcloud when SWITCHBOARD_NEXTCLOUD_TARBALL is set; ends with the skipped tests and why
	$(GO) test -count=1 -run '^$$' -bench . -benchtime 1x ./... # every benchmark runs once, so none can rot
	cd infra && $(GO) test -count=1 ./...

unit: ## run the Go tests of the root module only (quick)
	$(GO) test ./...

bench: node_modules/.installed ## run the benchmarks (stores on dynalite, handlers)
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200x ./...

fuzz: ## run each fuzz test for 30 s (FUZZTIME=10s to shorten)
	@set -e; for spec in $(FUZZ); do \
	  pkg=$${spec%%:*}; fn=$${spec##*:}; echo "fuzz $$fn in $$pkg"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./$$pkg; \
	done

# make build copies CONFIG into every zip, so it must hold secret references
# only (check-config --for aws). The repository's example is the one
# exception: a dev demo whose inline values are public, built for sizes and
# LocalStack (checked --for dev); make deploy refuses it.
CHECK_FOR = $(if $(filter $(abspath switchboard.example.yaml),$(abspath $(CONFIG))),dev,aws)

# Zip budgets: 4 MiB, the receivers 3.5 MiB (they answer webhooks within
# seconds). mcp holds 4 MiB with the Go MCP SDK (0.47 MiB of its zip)
# since the stores call DynamoDB without the SDK's client
# (docs/performance.md). telemetry-export, the one function with the
# OpenTelemetry SDK's OTLP exporter (protobuf and gRPC), holds it too:
# grpcnotrace keeps the template engines out (4.85 → 3.62 MiB measured;
# docs/telemetry.md).
build: ## build one arm64 zip per function into build/, print the sizes and fail over budget (refuses a config with inline secrets)
	@$(GO) run ./cmd/switchboard check-config --for $(CHECK_FOR) --config $(CONFIG)
	@[ "$(CHECK_FOR)" = aws ] || echo "  (the example's inline demo secrets are fine for a local build; make deploy refuses them)"
	@rm -rf build/functions && mkdir -p build/functions
	@for fn in $(FUNCTIONS); do \
	  mkdir -p build/functions/$$fn && \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags $(LAMBDA_TAGS) -trimpath -ldflags "$(LDFLAGS)" \
	    -o build/functions/$$fn/bootstrap ./functions/$$fn && \
	  cp $(CONFIG) build/functions/$$fn/config.yaml && \
	  (cd build/functions/$$fn && rm -f ../../$$fn.zip && zip -q -X -9 ../../$$fn.zip bootstrap config.yaml) || exit 1; \
	done
	@echo "function zips (config: $(CONFIG); budget 4 MiB, the receivers 3.5 MiB):"; over_any=; for fn in $(FUNCTIONS); do \
	  zip=$$(stat -c %s build/$$fn.zip); bin=$$(stat -c %s build/functions/$$fn/bootstrap); \
	  budget=4194304; case $$fn in rocketchat-webhook|telegram-webhook|approvals) budget=3670016;; esac; \
	  over=; [ $$zip -le $$budget ] || { over="  OVER BUDGET"; over_any="$$over_any $$fn"; }; \
	  printf '  %-20s zip %8s bytes (%s MiB)  bootstrap %9s bytes%s\n' $$fn $$zip $$(awk "BEGIN{printf \"%.2f\", $$zip/1048576}") $$bin "$$over"; \
	done; \
	if [ -n "$$over_any" ]; then echo "make build: over budget:$$over_any (see docs/performance.md for where the bytes go)" >&2; exit 1; fi

synth: node_modules/.installed build ## synthesize the CDK app offline into infra/cdk.out
	cd infra && ../node_modules/.bin/cdk synth -q

deploy: node_modules/.installed build ## cdk deploy to the account in your AWS credentials (refuses inline secrets)
	@$(GO) run ./cmd/switchboard check-config --for aws --config $(CONFIG)
	@if [ -n "$$SWITCHBOARD_CONFIG_FILE" ]; then $(GO) run ./cmd/switchboard check-config --for aws --config "$$(cd infra && realpath -m -- "$$SWITCHBOARD_CONFIG_FILE")"; fi
	cd infra && ../node_modules/.bin/cdk deploy

invoke: node_modules/.installed ## run a Lambda handler locally: make invoke FN=jobs EVENT=events/jobs/heartbeat.json
	@test -n "$(FN)" -a -n "$(EVENT)" || { echo "usage: make invoke FN=<function> EVENT=events/<function>/<file>.json"; exit 2; }
	$(GO) build -o $(BIN) ./cmd/switchboard
	@# Beside a running make dev (its $(DATA)/dev.json) the CLI uses that dev's DynamoDB; else dynalite starts here.
	$(if $(wildcard $(DATA)/dev.json),,scripts/dynalite.sh) $(BIN) invoke --fn $(FN) --event $(EVENT) --config $(CONFIG) --data $(DATA)

clean: ## remove build output and local data
	rm -rf build bin infra/cdk.out $(DATA)
