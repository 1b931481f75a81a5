#!/usr/bin/env bash
# Renders the vertical-text test set (service/ocr/testdata/vertical): Chinese set in columns,
# read top to bottom and right to left, and the same lines set across, turned on their side.
# The PNGs and truth.tsv are committed, so the tests need neither ImageMagick nor the fonts;
# run this again only to change the set.
#
# Needs ImageMagick's convert and Debian's fonts-noto-cjk (apt-get install, as root).
set -euo pipefail
out="${1:-service/ocr/testdata/vertical}"
convert=/usr/bin/convert
command -v "$convert" >/dev/null || convert=convert
mkdir -p "$out"
rm -f "$out"/*.png "$out"/truth.tsv

lines=(春天的早晨阳光明媚 公园里有很多人散步 孩子们在草地上玩耍 老人们坐在树下聊天 湖面上飘着几只小船 大家都很开心快乐)
label="营业执照注册号码"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
down() { sed 's/./&\n/g; s/\n$//' <<<"$1"; } # one character a line

# name, text (lines separated by |), rotation the page answers
row() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$out/truth.tsv"; }

# A page of six columns, right to left, in two faces.
for font in Noto-Sans-CJK-SC:sans Noto-Serif-CJK-SC:serif; do
  face=${font%%:*} name=${font##*:}
  cols=()
  for i in "${!lines[@]}"; do
    "$convert" -background white -fill black -font "$face" -pointsize 30 -interline-spacing -4 \
      label:"$(down "${lines[$i]}")" -gravity north -extent 72x380 "$tmp/c$i.png"
    cols=("$tmp/c$i.png" "${cols[@]}") # the first line is the rightmost column
  done
  "$convert" "${cols[@]}" +append +repage -bordercolor white -border 24 -depth 8 -type Grayscale "$out/columns-$name.png"
  row "columns-$name.png" "$(IFS='|'; echo "${lines[*]}")" 0
done

# The same lines set across, upright and turned on their side (not columns: the page turns).
"$convert" -background white -fill black -font Noto-Sans-CJK-SC -pointsize 30 -interline-spacing 14 \
  label:"$(printf '%s\n' "${lines[@]}")" -bordercolor white -border 24 -depth 8 -type Grayscale "$tmp/across.png"
"$convert" "$tmp/across.png" -rotate 90 "$out/across-90.png"
"$convert" "$tmp/across.png" -rotate 270 "$out/across-270.png"
row across-90.png "$(IFS='|'; echo "${lines[*]}")" 270
row across-270.png "$(IFS='|'; echo "${lines[*]}")" 90

# A vertical label, its characters set apart (the detector boxes them one by one), and set tight.
"$convert" -background white -fill black -font Noto-Sans-CJK-SC -pointsize 28 -interline-spacing 12 \
  label:"$(down "$label")" -bordercolor white -border 18 -depth 8 -type Grayscale "$out/label-loose.png"
"$convert" -background white -fill black -font Noto-Serif-CJK-SC -pointsize 28 -interline-spacing -4 \
  label:"$(down "$label")" -bordercolor white -border 18 -depth 8 -type Grayscale "$out/label-tight.png"
row label-loose.png "$label" 0
row label-tight.png "$label" 0
