#!/bin/sh
# Writes the reference pages BenchmarkDecodeCPU measures Plan.CPU against into OUT (default
# /tmp/tiffdec-bench): real scans in the layouts scanners and fax servers write, made with
# libtiff's tiffcp (Debian's libtiff-tools) and ImageMagick from receipt photos of
# ../shared/datasets (fetched material, for measuring only: nothing here is committed) and an A4
# page at 300 dpi made from one of them. Run from the repository root:
#   sh service/tiffdec/testdata/bench.sh [OUT]
#   TIFF_BENCH_DIR=/tmp/tiffdec-bench go test -run x -bench DecodeCPU -benchtime 3x ./service/tiffdec/
set -eu
OUT=${1:-/tmp/tiffdec-bench}
SRC=../shared/datasets/sroie-dev/img
IM=/usr/bin/convert
for tool in tiffcp "$IM"; do
	command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install libtiff-tools imagemagick)" >&2; exit 2; }
done
[ -d "$SRC" ] || { echo "no $SRC: run from the repository root, with the shared datasets beside it" >&2; exit 2; }
mkdir -p "$OUT"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT

# The sources: a small and a large receipt photo as they are, and an A4 page at 300 dpi.
small=$(ls -S "$SRC"/*.jpg | tail -1)
large=$(ls -S "$SRC"/*.jpg | head -1)
$IM "$small" -type TrueColor -depth 8 -compress none "$T/small-rgb.tif"
$IM "$large" -type TrueColor -depth 8 -compress none "$T/large-rgb.tif"
$IM "$large" -resize 2480x3508 -background white -gravity center -extent 2480x3508 -type TrueColor -depth 8 -compress none "$T/a4-rgb.tif"
for s in small large a4; do
	$IM "$T/$s-rgb.tif" -colorspace Gray -depth 8 -type Grayscale -compress none "$T/$s-gray.tif"
	$IM "$T/$s-gray.tif" -threshold 60% -depth 1 -compress none "$T/$s-bw.tif"
	$IM "$T/$s-rgb.tif" +dither -colors 256 -type Palette -compress none "$T/$s-pal.tif"
	$IM "$T/$s-rgb.tif" -colorspace CMYK -depth 8 -compress none "$T/$s-cmyk.tif"
done
# A fax: the A4 page at 1728 px a row, fine resolution.
$IM "$T/a4-gray.tif" -resize 1728x2292! -threshold 60% -depth 1 -compress none "$T/fax-bw.tif"

for s in small large a4; do
	for c in none packbits lzw lzw:2 zip zip:2; do
		n=$(echo "$c" | tr ':' '-')
		tiffcp -c "$c" "$T/$s-rgb.tif" "$OUT/$s-rgb-$n.tif"
		tiffcp -c "$c" "$T/$s-gray.tif" "$OUT/$s-gray-$n.tif"
	done
	# JPEG strips are whole MCU rows: 16 rows a strip, as libtiff writes them by default.
	tiffcp -c jpeg:90 -r 16 "$T/$s-rgb.tif" "$OUT/$s-rgb-jpeg.tif"
	tiffcp -c jpeg:90 -r 16 "$T/$s-gray.tif" "$OUT/$s-gray-jpeg.tif"
	tiffcp -c jpeg:r:90 -r 16 "$T/$s-rgb.tif" "$OUT/$s-rgb-jpeg-rgb.tif"
	tiffcp -c lzw -t -w 256 -l 256 "$T/$s-rgb.tif" "$OUT/$s-rgb-lzw-tiles.tif"
	tiffcp -c zip -p separate "$T/$s-rgb.tif" "$OUT/$s-rgb-zip-planar.tif"
	tiffcp -c lzw "$T/$s-pal.tif" "$OUT/$s-pal-lzw.tif"
	tiffcp -c lzw "$T/$s-cmyk.tif" "$OUT/$s-cmyk-lzw.tif"
	for c in none packbits lzw zip g3:1d g3:2d g3:2d:fill g4; do
		n=$(echo "$c" | tr ':' '-')
		tiffcp -c "$c" "$T/$s-bw.tif" "$OUT/$s-bw-$n.tif"
	done
	tiffcp -c g4 -f lsb2msb "$T/$s-bw.tif" "$OUT/$s-bw-g4-lsb.tif"
	tiffcp -c g3:2d -r 1 "$T/$s-bw.tif" "$OUT/$s-bw-g3-2d-rows1.tif"
done
for c in g3:1d g3:2d g4; do
	tiffcp -c "$c" "$T/fax-bw.tif" "$OUT/fax-$(echo "$c" | tr ':' '-').tif"
done
ls "$OUT" | wc -l | xargs echo "reference pages in $OUT:"
