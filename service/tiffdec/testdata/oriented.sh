#!/bin/sh
# Regenerates the Orientation set: pages stored turned or mirrored, with the Orientation tag (274)
# that says how to show them, as a scanner or fax server writes a page fed sideways or a sheet
# scanned through its back. ImageMagick stores each source page of make.sh (run that first: it
# writes src-*.png) transformed, libtiff's tiffcp compresses it and tiffset writes the tag, and
# ImageMagick's -auto-orient, which honours the tag, must give back the source page pixel for
# pixel: the set's meaning does not rest on this project's reading of the tag. oriented.tsv lists
# file (#page for a page after the first), orientation and the upright source page.
set -eu
cd "$(dirname "$0")"
IM=/usr/bin/convert
for tool in tiffcp tiffset "$IM" /usr/bin/compare; do
	command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install libtiff-tools imagemagick)" >&2; exit 2; }
done
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
rm -f orient-*.tif oriented.tsv
: > oriented.tsv

# stored O SRC OUT: SRC transformed so that orientation O shows it upright, uncompressed.
stored() {
	case $1 in
	1) op= ;; 2) op=-flop ;; 3) op="-rotate 180" ;; 4) op=-flip ;; 5) op=-transpose ;;
	6) op="-rotate -90" ;; 7) op=-transverse ;; 8) op="-rotate 90" ;;
	esac
	case $2 in
	# bilevel as a fax stores it: 1 bit, 0 is white
	src-bilevel.png) $IM "$2" $op -negate -depth 1 -type Bilevel -compress None "$3"; tiffset -s 262 0 "$3" ;;
	src-gray.png) $IM "$2" $op -depth 8 -type Grayscale -compress None "$3" ;;
	*) $IM "$2" $op -depth 8 -type TrueColor -compress None "$3" ;;
	esac
	tiffset -s 274 "$1" "$3"
}
# upright FILE SRC: ImageMagick shows FILE (its first page) exactly as SRC.
upright() {
	$IM "$1[0]" -auto-orient -depth 8 "PNG24:$T/back.png"
	$IM "$2" -depth 8 "PNG24:$T/src.png"
	ae=$(/usr/bin/compare -metric AE "$T/back.png" "$T/src.png" null: 2>&1 || true)
	[ "$ae" = 0 ] || { echo "$1 does not show $2 upright ($ae pixels differ)" >&2; exit 1; }
}
# one NAME O SRC tiffcp-args...: a one-page file.
one() {
	name=$1 o=$2 src=$3; shift 3
	stored "$o" "$src" "$T/base.tif"
	tiffcp "$@" "$T/base.tif" "$name.tif"
	upright "$name.tif" "$src"
	printf '%s.tif\t%d\t%s\n' "$name" "$o" "$src" >> oriented.tsv
}
one orient-bw-g4-6     6 src-bilevel.png -c g4     # a fax fed sideways
one orient-bw-g4-2     2 src-bilevel.png -c g4     # scanned through its back: mirrored
one orient-bw-g3-5     5 src-bilevel.png -c g3:2d  # transposed
one orient-gray8-lzw-3 3 src-gray.png -c lzw       # upside down
one orient-gray8-zip-8 8 src-gray.png -c zip
one orient-rgb-lzw-7   7 src-color.png -c lzw      # transversed, colour
one orient-gray8-lzw-4 4 src-gray.png -c lzw -t -w 64 -l 64 # flipped, in tiles

# A stack of three pages, each its own way up: upright gray, a G4 fax page turned 90°, a colour
# page upside down. tiffcp carries each page's tag over.
stored 1 src-gray.png "$T/a.tif"
stored 6 src-bilevel.png "$T/b.tif"
stored 3 src-color.png "$T/c.tif"
tiffcp -c lzw "$T/a.tif" "$T/a2.tif"
tiffcp -c g4 "$T/b.tif" "$T/b2.tif"
tiffcp -c lzw "$T/c.tif" "$T/c2.tif"
tiffcp "$T/a2.tif" "$T/b2.tif" "$T/c2.tif" orient-multipage.tif
p=0
for spec in 1:src-gray.png 6:src-bilevel.png 3:src-color.png; do
	o=${spec%%:*} src=${spec#*:}
	tiffcp "orient-multipage.tif,$p" "$T/one.tif"
	upright "$T/one.tif" "$src"
	if [ $p = 0 ]; then f=orient-multipage.tif; else f="orient-multipage.tif#$((p + 1))"; fi
	printf '%s\t%d\t%s\n' "$f" "$o" "$src" >> oriented.tsv
	p=$((p + 1))
done
# A fax at standard resolution, 204 × 98 dpi: a page of 12-point print at 204 dpi (src-fax.png,
# 800 × 306 px) squeezed to 98/204 of its height, thresholded and coded as G3 2D, as a fax machine
# sends it. A reader shows it at square pixels, twice as tall as stored: its source's size.
$IM -size 800x306 xc:white -font DejaVu-Sans -pointsize 34 -fill black \
	-annotate +24+56 'REMITTANCE 80317 DATE 14/05/2025' \
	-annotate +24+126 'Account number 7757 0041 6336' \
	-annotate +24+196 'Amount paid EUR 1,000.00' \
	-annotate +24+266 'Reference committee fees' -colorspace Gray -depth 8 -type Grayscale src-fax.png
$IM src-fax.png -resize '800x147!' -threshold 55% -negate -depth 1 -type Bilevel -compress None "$T/fax.tif"
tiffset -s 262 0 "$T/fax.tif"
tiffcp -c g3:2d:fill "$T/fax.tif" fax-std-g3.tif
tiffset -s 282 204 fax-std-g3.tif
tiffset -s 283 98 fax-std-g3.tif
tiffset -s 296 2 fax-std-g3.tif
printf 'fax-std-g3.tif\t1\tsrc-fax.png\n' >> oriented.tsv
du -ch orient-*.tif fax-*.tif | tail -1
