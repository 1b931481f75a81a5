# ocrgate — the README's two commands are `make run` and `make test`; both fetch what is missing.
GO      ?= go
BIN     ?= bin/ocrgate
DATASET ?= ../shared/datasets/sroie-dev

# ONNX Runtime is loaded through cgo.
export CGO_ENABLED = 1

.PHONY: all models proto-tools proto build run test bench bench-triton bench-models bench-concurrency receipts-dataset load soak docker-cpu docker-gpu deploy-check vet fmt clean

all: build

## models: fetch the models and ONNX Runtime into $OCRGATE_HOME (default ~/.ocrgate) when missing
models:
	@scripts/fetch_models.sh

## proto-tools: pinned protoc (Debian protobuf-compiler, installed with apt-get as root) and
## protoc-gen-go / protoc-gen-go-grpc (go install) into bin/tools
proto-tools:
	@scripts/gen_proto.sh --tools

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

## test: fetch what is missing, run every test with the race detector
test: models proto-tools
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 30m ./...

## bench: per-stage times, images/s and overhead ratio over the SROIE dev receipts
bench: models build
	./$(BIN) bench -dataset $(DATASET)

## bench-triton: the Triton path (gRPC on loopback) beside the embedded runtime, same receipts
bench-triton: models
	$(GO) test -run x -bench TritonOverhead -benchtime 2x ./service/triton/

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

## load: 8 concurrent clients (4× what the 2-core default admits) for 60 s against a fresh service
load: models build
	$(GO) run ./scripts/loadgen -bin $(BIN) -dataset $(DATASET) -c 8 -d 60s

## soak: 1000 requests one after another; RSS after the first 100 and after all 1000
soak: models build
	$(GO) run ./scripts/loadgen -bin $(BIN) -dataset $(DATASET) -c 1 -n 1000 -d 60m -checkpoint 100

## docker-cpu, docker-gpu: build the container image ocrgate:<variant>-<version>
docker-cpu docker-gpu: models
	scripts/build_docker_image.sh $(@:docker-%=%)

## deploy-check: Dockerfile, build script, compose files and Helm chart tests
deploy-check:
	$(GO) test -race -count=1 ./helm/... ./scripts/...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
