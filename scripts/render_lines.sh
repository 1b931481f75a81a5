#!/usr/bin/env bash
# Renders the rendered-line test set (service/ocr/testdata/lines): receipt words, amounts and IDs
# with runs of repeated digits, letters and asterisks, in several of Debian's fonts and sizes,
# black on white, from about 150 to 1 200 px wide. The PNGs are committed, so the tests need
# neither ImageMagick nor the fonts; run this again only to change the set.
#
# Needs ImageMagick's convert and Debian's fonts-dejavu-core, fonts-dejavu-extra,
# fonts-liberation2, fonts-freefont-ttf and fonts-urw-base35 (apt-get install, as root).
set -euo pipefail
out="${1:-service/ocr/testdata/lines}"
convert=/usr/bin/convert
command -v "$convert" >/dev/null || convert=convert
mkdir -p "$out"
rm -f "$out"/*.png "$out"/lines.tsv

# font (by fc-match name): point sizes; a line outside 150-1 200 px is left out
fonts=(
  "DejaVu Sans Condensed:20 30 44"
  "DejaVu Sans Mono:15 24 38"
  "Liberation Sans:18 28 42"
  "Liberation Serif:17 27 40"
  "Liberation Mono:16 25 36"
  "FreeSans:19 29 46"
  "Nimbus Sans Narrow:21 31 48"
  "Nimbus Mono PS:17 26 39"
)
texts=(
  "1000.00"
  "7757****6336"
  "2,000,000"
  "committee"
  "CARD NO: 7757****6336 APPROVED AMOUNT RM 444.00"
  "TOTAL RM 1,111.10"
  "INVOICE NO: 0000118833"
  "GST REG NO: 001122334455"
  "patterns"
  "Mississippi"
  "accommodation"
  "bookkeeper"
  "SUBTOTAL 88.00"
  "CASH 100.00 CHANGE 12.00"
  "Date: 11/11/2018 Time: 22:22:00"
  "ROUNDING ADJ -0.01"
  "Receipt No. 000777"
  "TEL: 03-3311 1100"
  "Qty 3 x 22.20 = 66.60"
  "************"
  "THANK YOU PLEASE COME AGAIN"
  "SST 6% 0.66"
  "coffee 2 x 5.50 11.00"
  "balloon 99.99"
)
i=0
printf 'file\ttext\n' > "$out/lines.tsv"
for f in "${fonts[@]}"; do
  name="${f%%:*}"; sizes="${f#*:}"
  file=$(fc-match -f '%{file}' "$name")
  for size in $sizes; do
    for t in "${texts[@]}"; do
      # Every font and size gets every third text, shifted, so each text appears in several fonts
      # and the set stays small.
      if (( (i % 3) != 0 )); then i=$((i+1)); continue; fi
      png=$(printf 'line%03d.png' "$i")
      "$convert" -background white -fill black -font "$file" -pointsize "$size" label:"$t" \
        -bordercolor white -border 12x10 -colorspace Gray -depth 8 -strip "$out/$png"
      w=$(identify -format '%w' "$out/$png")
      if (( w < 150 || w > 1200 )); then rm "$out/$png"; i=$((i+1)); continue; fi
      printf '%s\t%s\n' "$png" "$t" >> "$out/lines.tsv"
      i=$((i+1))
    done
    i=$((i+1)) # shift the pattern for the next size
  done
done
# The wide line of receipt words that lost its middle in detection: 1 017 × 50 px.
long="JUMBO MEAL SET 2 x 18.90 37.80 ICED LEMON TEA 3 x 4.50 13.50 SERVICE CHARGE 10% 5.13"
"$convert" -background white -fill black -font "$(fc-match -f '%{file}' 'DejaVu Sans Condensed')" \
  -size 1017x50 -gravity center label:"$long" -colorspace Gray -depth 8 -strip "$out/wide1017.png"
printf '%s\t%s\n' wide1017.png "$long" >> "$out/lines.tsv"
# The issue's clean receipt line that the direction classifier turned upside down: DejaVu Sans
# Condensed at 20 pt.
"$convert" -background white -fill black -font "$(fc-match -f '%{file}' 'DejaVu Sans Condensed')" -pointsize 20 \
  label:"CARD NO: 7757****6336 APPROVED AMOUNT RM 444.00" -bordercolor white -border 12x12 \
  -colorspace Gray -depth 8 -strip "$out/card20.png"
printf '%s\t%s\n' card20.png "CARD NO: 7757****6336 APPROVED AMOUNT RM 444.00" >> "$out/lines.tsv"
echo "$(($(wc -l < "$out/lines.tsv") - 1)) lines in $out"
