#!/usr/bin/env bash
# Renders the language test set (service/ocr/testdata/langs): each line of ja.txt, ko.txt and
# zh-Hant.txt as one PNG, black on white, alternately in Noto Sans CJK and Noto Serif CJK of the
# language's own cut (JP, KR, TC), 40 px. The PNGs are committed beside the texts, so the tests need
# neither ImageMagick nor the fonts (the tests make the degraded copies themselves); run this again
# only to change the set.
#
# Needs ImageMagick's convert and Debian's fonts-noto-cjk (apt-get install, as root).
set -euo pipefail
dir="${1:-service/ocr/testdata/langs}"
convert=/usr/bin/convert
command -v "$convert" >/dev/null || convert=convert
rm -f "$dir"/*.png

for pair in ja:JP ko:KR zh-Hant:TC; do
  lang=${pair%%:*} cut=${pair##*:}
  n=0
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    face=Noto-Sans-CJK-$cut
    [ $((n % 2)) = 1 ] && face=Noto-Serif-CJK-$cut
    "$convert" -background white -fill black -font "$face" -pointsize 40 label:"$line" \
      -bordercolor white -border 24 -type Grayscale -depth 8 "$(printf '%s/%s-%02d.png' "$dir" "$lang" "$n")"
    n=$((n + 1))
  done <"$dir/$lang.txt"
done
