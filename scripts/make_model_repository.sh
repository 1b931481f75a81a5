#!/usr/bin/env bash
# make_model_repository.sh — lays out a Triton model repository for ocrgate's models:
#
#   scripts/make_model_repository.sh cpu|gpu OUT
#
# writes OUT/<model>/config.pbtxt (from model_repository/<variant>/) and OUT/<model>/1/model.onnx
# for ppocr_det, ppocr_rec and ppocr_cls: the prepared models scripts/fetch_models.sh writes into
# $OCRGATE_HOME/models (default ~/.ocrgate/models), the same bytes the embedded runtime loads, so
# Triton serves the graph that was benchmarked (standard ONNX operators; opset 11 for det, 10 for
# the int8 recognizer, 9 for the others). The GPU variant serves the recognizer's float graph. Serve it with: tritonserver --model-repository=OUT. Running it again replaces those
# three models and leaves anything else in OUT alone.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODELS_DIR="${OCRGATE_HOME:-$HOME/.ocrgate}/models"

# Triton model name | prepared ONNX file in $MODELS_DIR. The CPU repository serves the recognizer's
# int8 variant (the embedded runtime's default, integer kernels on CPU); GPU providers have no
# QLinearConv kernel, so the GPU repository serves the float graph.
MODELS=(
  "ppocr_det|ch_PP-OCRv4_det_infer.prepared.onnx"
  "ppocr_rec|ch_PP-OCRv4_rec_infer.int8.onnx|cpu"
  "ppocr_rec|ch_PP-OCRv4_rec_infer.prepared.onnx|gpu"
  "ppocr_cls|ch_ppocr_mobile_v2.0_cls_infer.prepared.onnx"
)
# The language packs OCRGATE_LANGS names (comma-separated: ja, ko, zh-Hant, en), one recognizer
# each, float on both variants (docs/languages.md).
IFS=',' read -r -a langs <<<"${OCRGATE_LANGS:-}"
for lang in "${langs[@]}"; do
  case "${lang// /}" in
    ja) MODELS+=("ppocr_rec_ja|rec_japan_PP-OCRv3_infer.prepared.onnx") ;;
    ko) MODELS+=("ppocr_rec_ko|rec_korean_PP-OCRv3_infer.prepared.onnx") ;;
    zh-Hant) MODELS+=("ppocr_rec_zh-Hant|rec_chinese_cht_PP-OCRv3_infer.prepared.onnx") ;;
    en) MODELS+=("ppocr_rec_en|en_PP-OCRv4_rec.prepared.onnx") ;;
    ch | "") ;;
    *) echo "make_model_repository: OCRGATE_LANGS names $lang; the language packs are ja, ko, zh-Hant and en" >&2; exit 1 ;;
  esac
done

usage() {
  echo "usage: scripts/make_model_repository.sh cpu|gpu OUT" >&2
  exit 1
}

[[ $# -eq 2 ]] || usage
variant="$1" out="$2"
case "$variant" in cpu | gpu) ;; *) usage ;; esac
[[ -n "$out" ]] || usage

# selected VARIANT — the entries for this variant: name|file
selected() {
  local entry name file only
  for entry in "${MODELS[@]}"; do
    IFS='|' read -r name file only <<<"$entry"
    if [[ -z "$only" || "$only" == "$1" ]]; then echo "$name|$file"; fi
  done
}
mapfile -t MODELS < <(selected "$variant")

for entry in "${MODELS[@]}"; do
  file="${entry#*|}"
  if [[ ! -f "$MODELS_DIR/$file" ]]; then
    echo "make_model_repository: $MODELS_DIR/$file is missing: run scripts/fetch_models.sh, which fetches and prepares the models (or set OCRGATE_HOME)" >&2
    exit 1
  fi
done

for entry in "${MODELS[@]}"; do
  name="${entry%%|*}" file="${entry#*|}"
  config="$ROOT/model_repository/$variant/$name/config.pbtxt"
  [[ -f "$config" ]] || { echo "make_model_repository: $config is missing" >&2; exit 1; }
  rm -rf "${out:?}/$name"
  mkdir -p "$out/$name/1"
  cp "$config" "$out/$name/config.pbtxt"
  # A copy, not a link: the repository is often mounted into a container that cannot follow links
  # out of it.
  cp "$MODELS_DIR/$file" "$out/$name/1/model.onnx"
done
echo "make_model_repository: wrote $variant repository to $out" >&2
