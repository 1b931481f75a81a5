#!/usr/bin/env bash
# bench_accuracy.sh — accuracy and speed over a whole dataset: every image through the embedded
# pipeline (bin/ocrgate bench), its answers scored by the project's scorer (ocr_score.py, embedded in
# the binary; see internal/ocrscore). The tests check the same on the four receipts the repository
# renders (testdata/receipts); the figures over a real dataset are this benchmark's.
#
#   scripts/bench_accuracy.sh DATASET [PRED_DIR]     (make bench-accuracy DATASET=...)
#
# DATASET is a directory in SROIE's layout: img/<id>.jpg, box/<id>.csv (or .txt), key/<id>.json.
# PRED_DIR (default out/pred) keeps one prediction file per image, for a look or for the scorer.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dataset="${1:-}"
pred="${2:-out/pred}"
bin="${OCRGATE_BIN:-bin/ocrgate}"

howto() {
  cat >&2 <<'HOWTO'
A dataset is a directory in SROIE's layout:
  img/<id>.jpg     the images
  box/<id>.csv     ground truth, one text segment a line: x1,y1,x2,y2,x3,y3,x4,y4,TEXT
  key/<id>.json    key fields (company, date, address, total)
Give it as DATASET=DIR. The team keeps its 20-receipt development set at
../shared/datasets/sroie-dev beside the checkout (the default where it exists);
testdata/receipts in the repository is a small one (4 receipts it renders itself). SROIE is published by
the ICDAR 2019 Robust Reading Challenge on Scanned Receipts OCR and Information Extraction.
HOWTO
}

if [[ -z "$dataset" ]]; then
  echo "bench-accuracy: no dataset given" >&2; howto; exit 2
fi
if [[ ! -d "$dataset/img" || ! -d "$dataset/box" ]]; then
  echo "bench-accuracy: $dataset is not a dataset with img/ and box/" >&2; howto; exit 2
fi
[[ -x "$bin" ]] || { echo "bench-accuracy: no $bin: run make build first" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "bench-accuracy: python3 is needed for the scorer (make python)" >&2; exit 2; }

# The scorer the repository carries is a copy of the team's; say when they have drifted apart.
shared_scorer="$ROOT/../shared/tools/ocr_score.py"
if [[ -f "$shared_scorer" ]] && ! cmp -s "$shared_scorer" "$ROOT/internal/ocrscore/ocr_score.py"; then
  echo "bench-accuracy: warning: internal/ocrscore/ocr_score.py differs from $shared_scorer; copy the shared one over it (internal/ocrscore/README.md)" >&2
fi

rm -rf "$pred"
mkdir -p "$pred"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$bin" bench -dataset "$dataset" -out "$pred" | tee "$out"
# bench prints the score when it could score; without it this is no accuracy benchmark.
grep -q '^score (ocr_score.py):' "$out" || { echo "bench-accuracy: the answers were not scored (see above)" >&2; exit 1; }
echo "predictions: $pred (python3 internal/ocrscore/ocr_score.py ocr $dataset $pred -v scores them per image)"
