#!/usr/bin/env bash
# gen_proto.sh — regenerates tritonclient/inferencepb from tritonclient/proto with pinned tools.
#
#   scripts/gen_proto.sh           regenerate the committed Go code (make proto)
#   scripts/gen_proto.sh --tools   only install the pinned tools (make proto-tools)
#
# `make check` (and so `make test` and CI) runs `make proto` and fails when the committed code
# differs from what it generates (git diff --exit-code).
#
# Generated files record the tool versions in their headers, so every tool is pinned and checked:
#   protoc              Debian bookworm's protobuf-compiler package (installed with apt-get when
#                       missing and we are root; otherwise the script says what to install)
#   protoc-gen-go       `go install` at a pinned version into bin/tools (gitignored)
#   protoc-gen-go-grpc  likewise
set -euo pipefail

PROTOC_VERSION="3.21.12"                 # `protoc --version` prints "libprotoc 3.21.12"
PROTOC_GEN_GO_VERSION="v1.36.12"         # same release as google.golang.org/protobuf in go.mod
PROTOC_GEN_GO_GRPC_VERSION="v1.6.2"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/bin/tools"
PROTO_DIR="$ROOT/tritonclient/proto"
OUT_PKG="tritonclient/inferencepb"
MODULE="github.com/ocrgate/ocrgate"

log() { printf 'gen_proto: %s\n' "$*" >&2; }
die() { log "$*"; exit 2; }

usage() {
  echo "usage: scripts/gen_proto.sh [--tools]" >&2
  exit 2
}

ensure_protoc() {
  if ! command -v protoc >/dev/null 2>&1; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
      log "protoc missing: installing Debian's protobuf-compiler"
      DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends protobuf-compiler >&2
    else
      die "protoc is missing: install protobuf-compiler $PROTOC_VERSION (Debian bookworm: sudo apt-get install protobuf-compiler), then run again"
    fi
  fi
  local got
  got="$(protoc --version)"
  if [[ "$got" != "libprotoc $PROTOC_VERSION" ]]; then
    die "protoc is '$got', want 'libprotoc $PROTOC_VERSION' (Debian bookworm's protobuf-compiler); another version writes other headers into the generated code"
  fi
}

# ensure_plugin NAME MODULE_PATH VERSION WANT_VERSION_OUTPUT
ensure_plugin() {
  local name="$1" pkg="$2" version="$3" want="$4"
  if [[ -x "$TOOLS/$name" ]] && [[ "$("$TOOLS/$name" --version 2>/dev/null)" == "$want" ]]; then
    return
  fi
  command -v go >/dev/null 2>&1 || die "go is not on PATH; it is needed to install $name"
  log "installing $name $version into bin/tools"
  mkdir -p "$TOOLS"
  # Outside the module, so go.mod is neither read nor changed.
  (cd / && GOBIN="$TOOLS" GOFLAGS=-mod=mod go install "$pkg@$version") >&2 ||
    die "go install $pkg@$version failed (it needs the Go module proxy, or the module in the module cache)"
  local got
  got="$("$TOOLS/$name" --version 2>/dev/null || true)"
  [[ "$got" == "$want" ]] || die "$name reports '$got' after install, want '$want'"
}

ensure_tools() {
  ensure_protoc
  ensure_plugin protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go \
    "$PROTOC_GEN_GO_VERSION" "protoc-gen-go $PROTOC_GEN_GO_VERSION"
  ensure_plugin protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc \
    "$PROTOC_GEN_GO_GRPC_VERSION" "protoc-gen-go-grpc ${PROTOC_GEN_GO_GRPC_VERSION#v}"
}

# generate OUT_ROOT — writes OUT_ROOT/tritonclient/inferencepb/*.go
generate() {
  local out="$1"
  mkdir -p "$out/$OUT_PKG"
  (cd "$PROTO_DIR" && protoc \
    --plugin=protoc-gen-go="$TOOLS/protoc-gen-go" \
    --plugin=protoc-gen-go-grpc="$TOOLS/protoc-gen-go-grpc" \
    -I . \
    --go_out="$out" --go_opt=module="$MODULE" \
    --go-grpc_out="$out" --go-grpc_opt=module="$MODULE" \
    grpc_service.proto model_config.proto)
}

mode="${1:-generate}"
[[ $# -le 1 ]] || usage
case "$mode" in
  generate)
    ensure_tools
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    generate "$tmp"
    mkdir -p "$ROOT/$OUT_PKG"
    rm -f "$ROOT/$OUT_PKG"/*.pb.go
    cp "$tmp/$OUT_PKG"/*.pb.go "$ROOT/$OUT_PKG/"
    log "wrote $OUT_PKG"
    ;;
  --tools)
    ensure_tools
    ;;
  *)
    usage
    ;;
esac
