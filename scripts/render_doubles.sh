#!/usr/bin/env bash
# Renders the double-letter set: pages of English words, about half of them with a doubled letter
# ("tree", "will", "committee", "accommodation"), a comma before a space in two lines of three and
# one with no space after it in one line of five; twelve lines to a page, each page in four of
# twelve Debian fonts and eight sizes (12 to 32 px: from small print to 11 pt drawn at 200 dpi).
# The text is service/ocr/testdata/doubles/text.txt (written by gen.go beside it); the pages go to
# out/doubles (not committed), page<NN>-<font>-<size>.png beside page<NN>.txt.
#
#   scripts/render_doubles.sh [OUT_DIR]
#   OCRGATE_DOUBLES=$PWD/out/doubles go test -tags integration -run TestDoubleLettersPages -v ./service/ocr/
#
# The test logs the doubled letters read as one and the spaces after commas lost, per font and in
# all. Needs ImageMagick's convert and Debian's fonts-dejavu-core, fonts-dejavu-extra and
# fonts-urw-base35 (apt-get install, as root).
set -euo pipefail
out="${1:-out/doubles}"
text="$(dirname "${BASH_SOURCE[0]}")/../service/ocr/testdata/doubles/text.txt"
convert=/usr/bin/convert
command -v "$convert" >/dev/null || convert=convert
mkdir -p "$out"
rm -f "$out"/page*.png "$out"/page*.txt

fonts=("DejaVu Sans" "DejaVu Serif" "DejaVu Sans Condensed" "Nimbus Roman" "Nimbus Sans"
  "Nimbus Sans Narrow" "C059" "P052" "URW Bookman" "Nimbus Mono PS" "DejaVu Sans Mono" "URW Gothic")
sizes=(12 14 16 18 20 24 28 32)
per=12
lines=$(wc -l < "$text")
pages=$(( (lines + per - 1) / per ))
for ((p = 0; p < pages; p++)); do
  page=$(printf 'page%02d' "$p")
  sed -n "$((p * per + 1)),$(((p + 1) * per))p" "$text" > "$out/$page.txt"
  for k in 0 1 2 3; do
    f=${fonts[$(( (p + 5 * k) % ${#fonts[@]} ))]}
    s=${sizes[$(( (p / 2 + 3 * k) % ${#sizes[@]} ))]}
    file=$(fc-match -f '%{file}' "$f")
    # One label per line, stacked: a many-line label with line spacing trips ImageMagick's
    # size limit.
    args=()
    while IFS= read -r line; do
      args+=( "(" -font "$file" -pointsize "$s" label:"$line" -bordercolor white -border "0x$((s / 4))" ")" )
    done < "$out/$page.txt"
    "$convert" -background white -fill black "${args[@]}" -gravity West -append \
      -bordercolor white -border 40x40 -colorspace Gray -depth 8 -strip "$out/$page-${f// /}-$s.png"
  done
done
echo "$(ls "$out"/page*.png | wc -l) pages in $out"
