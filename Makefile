# ocrgate — the README's two commands are `make run` and `make test`; both fetch what is missing.
GO      ?= go
BIN     ?= bin/ocrgate
# DATASET: the images the benchmarks and load tests read, a directory in SROIE's layout (img/, box/,
# key/). The default is the team's development set beside the checkout, where it exists; the tests
# never read it (they read testdata/), and testdata/receipts is a small dataset of its own.
DATASET ?= ../shared/datasets/sroie-dev
PRED    ?= out/pred
SCORER  ?= internal/ocrscore/ocr_score.py
FUZZTIME ?= 1m
# TEST_TIMEOUT: the longest one package's tests may run in make test (a machine shared with other
# builds may need more)
TEST_TIMEOUT ?= 45m

# The linters, pinned: golangci-lint v2.15.0 runs .golangci.yml (the standard set, with staticcheck
# 2026.2.2, which analyzes Go 1.26 code; depguard's layout rules; errorlint; bodyclose). go install
# builds it with the local toolchain into bin/tools.
GOLANGCI_LINT_VERSION := 2.15.0
GOLANGCI_LINT         := bin/tools/golangci-lint

# ONNX Runtime is loaded through cgo.
export CGO_ENABLED = 1

.PHONY: all models models-test proto-tools browser-tools lint-tools lint python qpdf poppler proto build run test test-short check fuzz score golden receipts bench bench-accuracy bench-forms bench-triton bench-models bench-concurrency bench-cost pages receipts-dataset load soak soak-hostile soak-mixed docker-cpu docker-gpu deploy-check image-test docs vet fmt clean

all: build

## models: fetch the models and ONNX Runtime into $OCRGATE_HOME (default ~/.ocrgate) when missing
models:
	@scripts/fetch_models.sh

## models-test: make models with the language packs the tests read (TEST_LANGS)
TEST_LANGS ?= ja,ko,zh-Hant,en
models-test:
	@OCRGATE_LANGS=$(TEST_LANGS) scripts/fetch_models.sh

## proto-tools: pinned protoc (Debian protobuf-compiler, installed with apt-get as root) and
## protoc-gen-go / protoc-gen-go-grpc (go install) into bin/tools
proto-tools:
	@scripts/gen_proto.sh --tools

## browser-tools: Debian's chromium (apt-get, as root) and the pinned playwright-core (npm ci) for
## the demo page's browser test
browser-tools:
	@scripts/browser_tools.sh

## proto: regenerate tritonclient/inferencepb after editing tritonclient/proto
proto:
	@scripts/gen_proto.sh

## build: compile the service into bin/ocrgate and its benchmark tool into bin/ocrgate-bench
build:
	$(GO) build -trimpath -o $(BIN) ./cmd/ocrgate
	$(GO) build -trimpath -o $(dir $(BIN))ocrgate-bench ./cmd/ocrgate-bench

## run: fetch what is missing, build, serve on :5000 with the embedded runtime
run: models build
	./$(BIN) serve

## lint-tools: the pinned golangci-lint (go install into bin/tools, when missing or another version)
lint-tools:
	@$(GOLANGCI_LINT) version --short 2>/dev/null | grep -qxE 'v?$(GOLANGCI_LINT_VERSION)' || { \
	  echo "installing golangci-lint v$(GOLANGCI_LINT_VERSION) into bin/tools"; \
	  cd / && GOBIN=$(CURDIR)/bin/tools GOFLAGS=-mod=mod $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v$(GOLANGCI_LINT_VERSION); }

## lint: golangci-lint with .golangci.yml over both modules: the service module with the integration
## tests, the deployment module with the image tests
lint: lint-tools
	$(GOLANGCI_LINT) run ./...
	cd deploy && ../$(GOLANGCI_LINT) run --build-tags image ./...

## python: python3 for the accuracy tests' scorer (Debian's package, with apt-get as root, when missing)
python:
	@command -v python3 >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "python3 missing: installing Debian's python3"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3; \
	  else echo "python3 is missing: install it (the accuracy tests run internal/ocrscore/ocr_score.py)" >&2; exit 2; fi; }

## qpdf: qpdf for the searchable PDF tests' `qpdf --check` (Debian's package, with apt-get as root,
## when missing)
qpdf:
	@command -v qpdf >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "qpdf missing: installing Debian's qpdf"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qpdf; \
	  else echo "qpdf is missing: install it (the searchable PDF tests run qpdf --check)" >&2; exit 2; fi; }

## poppler: poppler-utils (pdftotext, pdftoppm) for the searchable PDF tests, which read the text
## layer back and draw the page with and without it (Debian's package, with apt-get as root, when
## missing)
poppler:
	@{ command -v pdftotext >/dev/null 2>&1 && command -v pdftoppm >/dev/null 2>&1; } || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "poppler-utils missing: installing Debian's poppler-utils"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends poppler-utils; \
	  else echo "pdftotext and pdftoppm are missing: install poppler-utils (the searchable PDF tests run them)" >&2; exit 2; fi; }

## check: gofmt, go mod tidy, the linters (make lint: both modules) and generated code that is
## current: `make proto` must leave tritonclient/inferencepb as committed (fails on any difference)
check: lint-tools proto-tools
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then \
	  echo "gofmt: not formatted (run make fmt):" >&2; echo "$$unformatted" >&2; exit 1; fi
	$(GO) mod tidy -diff
	cd deploy && $(GO) mod tidy -diff
	@$(MAKE) --no-print-directory lint
	@$(MAKE) --no-print-directory proto
	@git diff --exit-code -- tritonclient/inferencepb && \
	  test -z "$$(git status --porcelain --untracked-files=all -- tritonclient/inferencepb)" || { \
	  echo "tritonclient/inferencepb is not what tritonclient/proto generates: make proto rewrote it; commit the result" >&2; exit 1; }

## test: the full tier. Fetch what is missing, check, then vet and run every test with the race
## detector: the service module with the integration tests (the real models on ONNX Runtime, the
## receipts in testdata/, the Python scorer), then the deployment module. Nothing outside the
## repository is read but the models and ONNX Runtime it fetches into $OCRGATE_HOME.
test: models-test proto-tools browser-tools python qpdf poppler check
	$(GO) vet -tags integration ./...
	$(GO) test -tags integration -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	cd deploy && $(GO) vet -tags image ./... && $(GO) test -race -count=1 ./...

## docs: regenerate docs/configuration.md from the settings table (a test fails when it is stale)
docs:
	$(GO) generate ./service/config

## test-short: the fast tier: no models, no ONNX Runtime, no dataset, no network (internal/testenv
## skips what needs them)
test-short:
	$(GO) test -short -count=1 ./...

## fuzz: every fuzz target for FUZZTIME each (nightly use, not CI)
fuzz:
	scripts/fuzz.sh $(FUZZTIME)

## score: score predictions written by `ocrgate bench -out $(PRED)` with the project's scorer
score:
	python3 $(SCORER) ocr $(DATASET) $(PRED)

## golden: rewrite the golden text of testdata/receipts (service/server/testdata/golden) from the
## current pipeline
golden: models
	$(GO) test -tags integration -count=1 -run '^TestAccuracyReceipts$$' ./service/server/ -update

## receipts: render testdata/receipts again (images, truth, README) with cmd/ocrgate-receipts; needs
## Debian's fonts-dejavu-core, downloads nothing. Then review the images, make golden and the floors.
receipts:
	$(GO) run ./cmd/ocrgate-receipts

## bench: per-stage times, images/s and overhead ratio over DATASET
bench: models build
	./$(BIN) bench -dataset $(DATASET)

## bench-accuracy: accuracy (ocr_score.py: detection, words, characters) and speed over a whole
## dataset, DATASET (default ../shared/datasets/sroie-dev where it exists; without one it says how
## to get one); predictions kept in PRED. The tests check the same on testdata/receipts only.
bench-accuracy: models build
	@scripts/bench_accuracy.sh "$(DATASET)" "$(PRED)"

## bench-forms: word F1 (case-insensitive) and the share of truth words missed entirely over forms
## in FUNSD's layout, FORMS (default ../corpus37/training_data: images/<id>.png,
## annotations/<id>.json); predictions kept in PRED. Fetched forms are never committed.
FORMS ?= ../corpus37/training_data
bench-forms: models build
	bin/ocrgate-bench -forms "$(FORMS)" -images $(if $(PRED),-out "$(PRED)")

## bench-triton: the Triton path (gRPC on loopback) beside the embedded runtime, same receipts
bench-triton: models
	$(GO) test -run x -bench TritonOverhead -benchtime 2x ./service/tritonrt/

## bench-models: each model as fetched against as prepared, alternating call by call
bench-models: models
	$(GO) test -run x -bench Models -benchtime 10x ./internal/modelprep/

## bench-concurrency: throughput and p50 latency with 2 requests in flight against 1, alternating
bench-concurrency: models build
	./$(BIN) bench -dataset $(DATASET) -c 2 -rounds 3

## receipts-dataset: out/sroie-receipts, the 15 sroie-dev receipts that are not 600-dpi A4 scans
## (links, not copies), for ../shared/peers/compare.sh out/sroie-receipts 3
receipts-dataset:
	@rm -rf out/sroie-receipts && mkdir -p out/sroie-receipts/img out/sroie-receipts/box out/sroie-receipts/key
	@for f in $(DATASET)/img/*.jpg; do id=$$(basename $$f .jpg); \
	  case " 282 293 311 433 525 " in *" $$id "*) continue;; esac; \
	  for d in img box key; do for g in $(DATASET)/$$d/$$id.*; do ln -s "$$(cd $$(dirname $$g) && pwd)/$$(basename $$g)" out/sroie-receipts/$$d/; done; done; \
	done
	@echo "out/sroie-receipts: $$(ls out/sroie-receipts/img | wc -l) receipts"

## pages: every page of the PDFs and TIFFs under CORPUS sent alone (auto; MODES=auto,always,unchecked
## for more), each compared with pdftotext's reading of it: source, word F1, line merges, lost
## lines, CPU-s (OUT=DIR keeps the table and the answers; BEFORE=pages.tsv prints the changes)
MODES  ?= auto
pages: models build
	@test -n "$(CORPUS)" || { echo 'make pages CORPUS=DIR: name the directory of PDFs and TIFFs'; exit 2; }
	$(GO) run ./cmd/ocrgate-pages -bin $(BIN) -modes $(MODES) $(if $(OUT),-out $(OUT)) $(if $(BEFORE),-before $(BEFORE)) $(CORPUS)

## load: 8 concurrent clients (4× what the 2-core default admits) for 60 s against a fresh service
load: models build
	$(GO) run ./cmd/ocrgate-loadgen -bin $(BIN) -dataset $(DATASET) -c 8 -d 60s

## soak: 1000 requests one after another; RSS after the first 100 and after all 1000
soak: models build
	$(GO) run ./cmd/ocrgate-loadgen -bin $(BIN) -dataset $(DATASET) -c 1 -n 1000 -d 60m -checkpoint 100

## soak-hostile: peak and final RSS over 300 receipts, then over 300 requests of which every
## fourth is a hostile file, then over 300 receipts while heads without bodies, hang-ups, slow
## bodies and multipart floods attack the connections (4 clients, a fresh service each)
soak-hostile: models build
	$(GO) run ./cmd/ocrgate-loadgen -bin $(BIN) -dataset $(DATASET) -c 4 -n 300 -d 30m -mix receipts
	$(GO) run ./cmd/ocrgate-loadgen -bin $(BIN) -dataset $(DATASET) -c 4 -n 300 -d 30m -mix hostile
	$(GO) run ./cmd/ocrgate-loadgen -bin $(BIN) -dataset $(DATASET) -c 4 -n 300 -d 30m -mix http

## soak-mixed: 10 minutes at 8 clients: receipts, every fourth request a hostile file (images,
## TIFFs, PDFs), HTTP attacks beside (heads without bodies, hang-ups, slow bodies, multipart
## floods), and panics injected into recognizer batches, image decodes and document pages by a
## binary built with -tags faults (cmd/ocrgate/faults.go); reports the 5xx beside the panics the
## service counted, peak RSS and the memory budget, goroutines and fds before and after
soak-mixed: models
	$(GO) build -trimpath -tags faults -o bin/ocrgate-faults ./cmd/ocrgate
	$(GO) run ./cmd/ocrgate-loadgen -bin bin/ocrgate-faults -dataset $(DATASET) -c 8 -d 10m -mix soak \
	  -faults 'recognizer batch=200,image decode=100,document page=10'

## bench-cost: the memory cost model against the peak RSS of each image in a fresh process
bench-cost: models
	$(GO) test -run x -bench CostModel -benchtime 1x ./service/ocr/

## docker-cpu, docker-gpu: build the container image ocrgate:<variant>-<version>
docker-cpu docker-gpu: models
	scripts/build_docker_image.sh $(@:docker-%=%)

## deploy-check: Dockerfile, build script, compose files and Helm chart tests (their own module, deploy/)
deploy-check:
	cd deploy && $(GO) test -race -count=1 ./...

## image-test: the images for real (root; about 20 minutes, most of it building): a container engine
## (scripts/container_engine.sh: docker when its daemon answers, else podman with runc, installed
## with apt-get when missing), the base images (present, pulled, or made by
## scripts/offline_base_images.sh when no registry serves them), the cpu and gpu images built with
## scripts/build_docker_image.sh and the Triton test stand-in (cmd/triton-standin); then the cpu
## image run alone under a memory limit, compose.yaml with the stand-in in Triton's place, and the
## chart's Deployment with podman kube play (deploy/image); the NATS image (scripts/build_docker_image.sh
## nats) and the chart with jobs on, three NATS servers and three ocrgate pods, one killed during a
## job. Prints build times, sizes and checks.
image-test: models
	@engine="$$(scripts/container_engine.sh)" && cd deploy && \
	  DOCKER="$$engine" $(GO) test -tags image -count=1 -v -timeout 80m ./image/

fmt:
	gofmt -w .

clean:
	rm -rf bin
