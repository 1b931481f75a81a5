#!/usr/bin/env bash
# build_docker_image.sh — builds the ocrgate container image:
#
#   scripts/build_docker_image.sh [--dry-run] cpu|gpu
#
# 1. reads the version from service/version.go (`const Version = "x.y.z"`, the only place it is written);
# 2. stages into build/docker/ (gitignored, inside the build context):
#      models/                    everything in $OCRGATE_HOME/models (default ~/.ocrgate/models)
#      lib/libonnxruntime.so.1    from $OCRGATE_HOME/lib
#      model_repository/<variant> the Triton repository (scripts/make_model_repository.sh <variant>)
# 3. docker build --build-arg VARIANT=<variant> --build-arg VERSION=<version> -t ocrgate:<variant>-<version> .
# 4. prints the tag, ocrgate:<variant>-<version>, as the last line of its output (all docker output
#    goes to stderr, so stdout is the tag alone).
#
# --dry-run checks the same things (argument, version, staged files present) and prints the commands
# it would run, one per line, then the tag, without running them. DOCKER names the docker CLI to use
# (default: docker).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OCRGATE_HOME="${OCRGATE_HOME:-$HOME/.ocrgate}"
DOCKER="${DOCKER:-docker}"
STAGE="build/docker"                     # relative to $ROOT, the build context
# Files the image cannot work without (the prepared models scripts/fetch_models.sh writes, which
# the service and the Triton repository load); everything else in models/ is copied along.
REQUIRED_MODELS=(
  ch_PP-OCRv4_det_infer.prepared.onnx
  ch_PP-OCRv4_rec_infer.prepared.onnx
  ch_PP-OCRv4_rec_infer.int8.onnx
  ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx
  ppocr_keys_v1.txt
)

usage() {
  echo "usage: scripts/build_docker_image.sh [--dry-run] cpu|gpu" >&2
  exit 1
}

die() {
  echo "build_docker_image: $*" >&2
  exit 1
}

dry_run=false
variant=""
for arg in "$@"; do
  case "$arg" in
    --dry-run) dry_run=true ;;
    cpu | gpu) [[ -z "$variant" ]] || usage; variant="$arg" ;;
    *) usage ;;
  esac
done
[[ -n "$variant" ]] || usage

# version_of FILE — the string in `const Version = "..."`.
version_of() {
  sed -n 's/^const Version = "\([^"]*\)"$/\1/p' "$1"
}
version="$(version_of "$ROOT/service/version.go")"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]] ||
  die "cannot read the version from service/version.go (want a line: const Version = \"x.y.z\"), got '$version'"
tag="ocrgate:${variant}-${version}"

missing=()
for f in "${REQUIRED_MODELS[@]}"; do
  [[ -f "$OCRGATE_HOME/models/$f" ]] || missing+=("$OCRGATE_HOME/models/$f")
done
[[ -f "$OCRGATE_HOME/lib/libonnxruntime.so.1" ]] || missing+=("$OCRGATE_HOME/lib/libonnxruntime.so.1")
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "build_docker_image: missing files the image needs:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  die "run scripts/fetch_models.sh first (it installs them into $OCRGATE_HOME; OCRGATE_HOME moves it)"
fi

if ! $dry_run && ! command -v "$DOCKER" >/dev/null 2>&1; then
  die "'$DOCKER' not found: install Docker (with BuildKit, Docker 23 or later) or set DOCKER"
fi

# run CMD... — runs a command (its stdout to stderr), or prints it in --dry-run mode.
run() {
  if $dry_run; then
    local out
    printf -v out '%q ' "$@"
    echo "${out% }"
  else
    "$@" >&2
  fi
}

cd "$ROOT"
if $dry_run; then echo "cd $(printf '%q' "$ROOT")"; fi
run rm -rf "$STAGE"
run mkdir -p "$STAGE/models" "$STAGE/lib" "$STAGE/model_repository"
run cp -R "$OCRGATE_HOME/models/." "$STAGE/models/"
run cp "$OCRGATE_HOME/lib/libonnxruntime.so.1" "$STAGE/lib/libonnxruntime.so.1"
run env OCRGATE_HOME="$OCRGATE_HOME" scripts/make_model_repository.sh "$variant" "$STAGE/model_repository/$variant"
run env DOCKER_BUILDKIT=1 "$DOCKER" build \
  --build-arg "VARIANT=$variant" \
  --build-arg "VERSION=$version" \
  -t "$tag" \
  .
echo "$tag"
