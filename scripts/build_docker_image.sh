#!/usr/bin/env bash
# build_docker_image.sh — builds the ocrgate container image, or the NATS image of its jobs:
#
#   scripts/build_docker_image.sh [--dry-run] cpu|gpu
#   scripts/build_docker_image.sh [--dry-run] nats
#
# nats: deploy/nats/Dockerfile compiles nats-server from the version go.mod pins and tags it
# ocrgate-nats:<that version> (the chart's nats.image default); steps 1 and 2 below do not apply.
#
# 1. reads the version from service/server/version.go (`const Version = "x.y.z"`, the only place it is written);
# 2. stages into build/docker/<variant>/ (gitignored, inside the build context) what the image holds
#    under /opt/ocrgate:
#      models/                    the models the service loads, from $OCRGATE_HOME/models (default
#                                 ~/.ocrgate/models): the prepared detector, classifier and
#                                 recognizers and the dictionary, not the originals they were
#                                 prepared from (nothing in the image reads those)
#      lib/libonnxruntime.so.1    from $OCRGATE_HOME/lib
#      model_repository/          the variant's Triton repository (scripts/make_model_repository.sh),
#                                 each model.onnx a hard link to the identical file in models/, so
#                                 the image stores the ONNX files once
# 3. <engine> build --build-arg VARIANT=<variant> --build-arg VERSION=<version> -t ocrgate:<variant>-<version> .
#    with --format docker when the engine is podman (its default OCI format drops the HEALTHCHECK),
#    and --build-arg for each of GOPROXY, GOSUMDB, GOPRIVATE, GONOSUMDB that is set (a module proxy
#    of your own behind a firewall);
# 4. prints the tag, ocrgate:<variant>-<version>, as the last line of its output (all engine output
#    goes to stderr, so stdout is the tag alone), and the build time on stderr.
#
# --dry-run checks the same things (argument, version, staged files present) and prints the commands
# it would run, one per line, then the tag, without running them. DOCKER names the engine's CLI:
# docker, podman or a wrapper of either; unset, it is docker when a Docker daemon answers, else
# podman when it is installed, else docker. No registry for the base images (golang, debian):
# scripts/offline_base_images.sh makes them on this machine.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OCRGATE_HOME="${OCRGATE_HOME:-$HOME/.ocrgate}"
# Files the image needs from $OCRGATE_HOME/models (the prepared models scripts/fetch_models.sh
# writes, which the service and the Triton repository load, the dictionary and the word list);
# nothing else is copied.
REQUIRED_MODELS=(
  ch_PP-OCRv4_det_infer.prepared.onnx
  ch_PP-OCRv4_rec_infer.prepared.onnx
  ch_PP-OCRv4_rec_infer.int8.onnx
  ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx
  ppocr_keys_v1.txt
  words.txt
)
# The language packs OCRGATE_LANGS names (docs/languages.md): each one's prepared recognizer and
# dictionary, in models/ for the embedded runtime and, by make_model_repository.sh, as
# ppocr_rec_<lang> in the Triton repository, which the chart's model-copy init container copies
# whole. The image's service loads them when its OCRGATE_LANGS names them too.
IFS=',' read -r -a pack_langs <<<"${OCRGATE_LANGS:-}"
for lang in "${pack_langs[@]}"; do
  case "${lang// /}" in
    ja) REQUIRED_MODELS+=(rec_japan_PP-OCRv3_infer.prepared.onnx dict_japan.txt) ;;
    ko) REQUIRED_MODELS+=(rec_korean_PP-OCRv3_infer.prepared.onnx dict_korean.txt) ;;
    zh-Hant) REQUIRED_MODELS+=(rec_chinese_cht_PP-OCRv3_infer.prepared.onnx dict_chinese_cht.txt) ;;
    en) REQUIRED_MODELS+=(en_PP-OCRv4_rec.prepared.onnx dict_en.txt) ;;
    ch | "") ;;
    *) echo "build_docker_image: OCRGATE_LANGS names $lang; the language packs are ja, ko, zh-Hant and en" >&2; exit 1 ;;
  esac
done
# Go settings passed to the build stage when set.
GO_BUILD_ARGS=(GOPROXY GOSUMDB GOPRIVATE GONOSUMDB)

usage() {
  echo "usage: scripts/build_docker_image.sh [--dry-run] cpu|gpu|nats" >&2
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
    cpu | gpu | nats) [[ -z "$variant" ]] || usage; variant="$arg" ;;
    *) usage ;;
  esac
done
[[ -n "$variant" ]] || usage

# version_of FILE — the string in `const Version = "..."`.
version_of() {
  sed -n 's/^const Version = "\([^"]*\)"$/\1/p' "$1"
}
version="$(version_of "$ROOT/service/server/version.go")"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$ ]] ||
  die "cannot read the version from service/server/version.go (want a line: const Version = \"x.y.z\"), got '$version'"
tag="ocrgate:${variant}-${version}"
STAGE="build/docker/$variant"             # relative to $ROOT, the build context

if [[ "$variant" == nats ]]; then
  # The NATS image: the nats-server version go.mod pins, nothing staged.
  nats_version="$(sed -n 's#^[[:space:]]*github.com/nats-io/nats-server/v2 v\([^[:space:]]*\)$#\1#p' "$ROOT/go.mod")"
  [[ "$nats_version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
    die "cannot read the nats-server version from go.mod (github.com/nats-io/nats-server/v2 vX.Y.Z), got '$nats_version'"
  tag="ocrgate-nats:${nats_version}"
  REQUIRED_MODELS=()
fi

missing=()
for f in "${REQUIRED_MODELS[@]}"; do
  [[ -f "$OCRGATE_HOME/models/$f" ]] || missing+=("$OCRGATE_HOME/models/$f")
done
[[ "$variant" == nats || -f "$OCRGATE_HOME/lib/libonnxruntime.so.1" ]] || missing+=("$OCRGATE_HOME/lib/libonnxruntime.so.1")
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "build_docker_image: missing files the image needs:" >&2
  printf '  %s\n' "${missing[@]}" >&2
  die "run scripts/fetch_models.sh first (it installs them into $OCRGATE_HOME; OCRGATE_HOME moves it)"
fi

# The engine: DOCKER, or docker when its daemon answers, or podman.
if [[ -z "${DOCKER:-}" ]]; then
  DOCKER=docker
  if ! $dry_run && ! { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; } &&
    command -v podman >/dev/null 2>&1; then
    DOCKER=podman
  fi
fi
if ! $dry_run && ! command -v "$DOCKER" >/dev/null 2>&1; then
  die "'$DOCKER' not found: install Docker (with BuildKit, Docker 23 or later) or podman, or set DOCKER"
fi

if [[ "$variant" == nats ]]; then
  build_args=(build -f deploy/nats/Dockerfile --build-arg "NATS_VERSION=$nats_version")
else
  build_args=(build --build-arg "VARIANT=$variant" --build-arg "VERSION=$version")
fi
for v in "${GO_BUILD_ARGS[@]}"; do
  [[ -z "${!v:-}" ]] || build_args+=(--build-arg "$v=${!v}")
done
# Podman (buildah) writes OCI images unless told otherwise, and the OCI image config has no
# HEALTHCHECK: ask for Docker's format.
if ! $dry_run && "$DOCKER" --version 2>/dev/null | grep -qi podman; then
  build_args+=(--format docker)
fi
build_args+=(-t "$tag" .)

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

# link_duplicates REPO MODELS — replaces each REPO/*/1/model.onnx by a hard link to the file of
# MODELS with the same bytes, so that one COPY stores it once.
link_duplicates() {
  local m f
  for m in "$1"/*/1/model.onnx; do
    for f in "$2"/*.onnx; do
      if cmp -s "$m" "$f"; then
        ln -f "$f" "$m"
        break
      fi
    done
  done
}

cd "$ROOT"
if $dry_run; then echo "cd $(printf '%q' "$ROOT")"; fi
if [[ "$variant" == nats ]]; then
  start=$SECONDS
  run env DOCKER_BUILDKIT=1 "$DOCKER" "${build_args[@]}"
  $dry_run || echo "build_docker_image: built $tag in $((SECONDS - start)) s with $DOCKER" >&2
  echo "$tag"
  exit 0
fi
run rm -rf "$STAGE"
run mkdir -p "$STAGE/models" "$STAGE/lib" "$STAGE/model_repository"
for f in "${REQUIRED_MODELS[@]}"; do
  run cp "$OCRGATE_HOME/models/$f" "$STAGE/models/$f"
done
run cp "$OCRGATE_HOME/lib/libonnxruntime.so.1" "$STAGE/lib/libonnxruntime.so.1"
run env OCRGATE_HOME="$OCRGATE_HOME" scripts/make_model_repository.sh "$variant" "$STAGE/model_repository"
run link_duplicates "$STAGE/model_repository" "$STAGE/models"
start=$SECONDS
run env DOCKER_BUILDKIT=1 "$DOCKER" "${build_args[@]}"
$dry_run || echo "build_docker_image: built $tag in $((SECONDS - start)) s with $DOCKER" >&2
echo "$tag"
