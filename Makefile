# ocrgate — the README's two commands are `make run` and `make test`; both fetch what is missing.
GO      ?= go
BIN     ?= bin/ocrgate
DATASET ?= ../shared/datasets/sroie-dev

# ONNX Runtime is loaded through cgo.
export CGO_ENABLED = 1

.PHONY: all models proto-tools proto build run test bench bench-triton bench-cost load soak soak-hostile docker-cpu docker-gpu deploy-check vet fmt clean

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

## load: 8 concurrent clients (4× what the 2-core default admits) for 60 s against a fresh service
load: models build
	$(GO) run ./scripts/loadgen -bin $(BIN) -dataset $(DATASET) -c 8 -d 60s

## soak: 1000 requests one after another; RSS after the first 100 and after all 1000
soak: models build
	$(GO) run ./scripts/loadgen -bin $(BIN) -dataset $(DATASET) -c 1 -n 1000 -d 60m -checkpoint 100

## soak-hostile: peak and final RSS over 300 receipts, then over 300 requests of which every
## fourth is a hostile file (4 clients, a fresh service each)
soak-hostile: models build
	$(GO) run ./scripts/loadgen -bin $(BIN) -dataset $(DATASET) -c 4 -n 300 -d 30m -mix receipts
	$(GO) run ./scripts/loadgen -bin $(BIN) -dataset $(DATASET) -c 4 -n 300 -d 30m -mix hostile

## bench-cost: the memory cost model against the peak RSS of each image in a fresh process
bench-cost: models
	$(GO) test -run x -bench CostModel -benchtime 1x ./service/ocr/

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
