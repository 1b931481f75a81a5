#!/bin/sh
# Regenerates the TIFF test set in this folder with libtiff's own tools (tiffcp, tiff2rgba,
# fax2tiff: Debian's libtiff-tools) and ImageMagick (Debian's imagemagick, which writes the
# first uncompressed TIFFs and the PNGs), from pages of text it renders itself. Each TIFF's
# reference pixels are what libtiff's tiff2rgba decodes it to, stored as PNG (shared between
# files that decode to the same pixels). The manifest lists file, reference, source page and
# what the test expects. Run from anywhere: sh make.sh (needs python3 for the few files the
# tools cannot write: Deflate under code 32946, old-style JPEG, uncompressed subsampled YCbCr,
# a corrupt page).
set -eu
cd "$(dirname "$0")"
IM=/usr/bin/convert
for tool in tiffcp tiff2rgba tiffinfo tiffset "$IM" python3; do
	command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install libtiff-tools imagemagick)" >&2; exit 2; }
done
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
rm -f ./*.tif ref-*.png src-*.png manifest.tsv

font=DejaVu-Sans
text() { # text W H POINTSIZE fg bg out: four lines of an invoice, amounts in their own column
	$IM -size "$1x$2" "xc:$5" -font $font -pointsize "$3" -fill "$4" -interword-spacing 10 \
		-annotate +14+30 'INVOICE 20417 DATE 12/03/2024' \
		-annotate +14+62 'Widget assembly kit' -annotate +300+62 '29.00' \
		-annotate +14+94 'Delivery to Warsaw' -annotate +300+94 '8.00' \
		-annotate +14+126 'TOTAL DUE EUR' -annotate +300+126 '45.51' "$6"
}
text 400 146 19 black white "$T/page.png"
$IM "$T/page.png" -colorspace Gray -depth 8 -type Grayscale src-gray.png
$IM "$T/page.png" -colorspace Gray -threshold 55% -type Bilevel src-bilevel.png
text 400 146 19 '#1a2a7a' '#f6eecf' "$T/color.png"
$IM "$T/color.png" -fill '#b01818' -draw 'rectangle 240,112 280,130' -type TrueColor -depth 8 src-color.png

# Bases: uncompressed, one strip per 8 rows at most as ImageMagick writes them.
$IM src-gray.png -depth 8 -type Grayscale -compress None "$T/gray8.tif"
$IM src-gray.png -depth 16 -type Grayscale -compress None "$T/gray16.tif"
$IM src-gray.png -depth 4 -type Grayscale -compress None "$T/gray4.tif"
$IM src-gray.png -depth 2 -type Grayscale -compress None "$T/gray2.tif"
# WhiteIsZero: the pixels negated, then the tag set with libtiff's tiffset.
$IM src-gray.png -negate -depth 8 -type Grayscale -compress None "$T/gray8w.tif"
tiffset -s 262 0 "$T/gray8w.tif"
$IM src-bilevel.png -negate -depth 1 -type Bilevel -compress None "$T/bw.tif"
tiffset -s 262 0 "$T/bw.tif"
$IM src-bilevel.png -depth 1 -type Bilevel -compress None "$T/bwb.tif"
$IM src-color.png -depth 8 -type TrueColor -compress None "$T/rgb.tif"
$IM src-color.png -depth 16 -type TrueColor -compress None "$T/rgb16.tif"
$IM src-color.png -alpha set -channel A -fx '0.85' +channel -depth 8 -type TrueColorAlpha -compress None "$T/rgba.tif"
$IM src-color.png -colors 200 -type Palette -depth 8 -compress None "$T/pal8.tif"
$IM src-color.png -colors 16 -type Palette -depth 4 -compress None "$T/pal4.tif"
$IM src-color.png -colorspace CMYK -depth 8 -compress None "$T/cmyk.tif"

: > manifest.tsv
# add NAME SOURCE TOLERANCE: decode NAME.tif with tiff2rgba and record its reference.
add() {
	tiff2rgba -c none "$1.tif" "$T/rgba-out.tif"
	$IM "$T/rgba-out.tif" -background white -alpha remove -alpha off -depth 8 -type TrueColor "PNG24:$T/ref.png"
	sum=$($IM "$T/ref.png" -format '%#' info: | cut -c1-12)
	[ -f "ref-$sum.png" ] || cp "$T/ref.png" "ref-$sum.png"
	printf '%s.tif\tref-%s.png\t%s\t%s\n' "$1" "$sum" "$2" "$3" >> manifest.tsv
}
cp_() { # cp_ NAME SRCBASE SOURCE TOLERANCE tiffcp-args...
	n=$1 base=$2 src=$3 tol=$4; shift 4
	tiffcp "$@" "$T/$base.tif" "$n.tif"
	add "$n" "$src" "$tol"
}
# Gray, 8 bits, every lossless compression, strips and tiles, both byte orders.
cp_ gray8-none        gray8 src-gray.png 0 -c none -r 32
cp_ gray8-packbits    gray8 src-gray.png 0 -c packbits
cp_ gray8-lzw         gray8 src-gray.png 0 -c lzw
cp_ gray8-lzw-pred    gray8 src-gray.png 0 -c lzw:2 -B
cp_ gray8-zip         gray8 src-gray.png 0 -c zip -r 16
cp_ gray8-zip-pred    gray8 src-gray.png 0 -c zip:2
cp_ gray8-tiles-lzw   gray8 src-gray.png 0 -c lzw -t -w 64 -l 64
cp_ gray8-jpeg        gray8 src-gray.png 3 -c jpeg:90 -r 16
cp_ gray8-miniswhite  gray8w src-gray.png 0 -c lzw
cp_ gray16-zip-pred   gray16 src-gray.png 1 -c zip:2
cp_ gray16-lzw-be     gray16 src-gray.png 1 -c lzw -B -r 16
cp_ gray4-lzw         gray4 src-gray.png 0 -c lzw
cp_ gray2-packbits    gray2 src-gray.png 0 -c packbits
# Deflate under Adobe's code 32946, which libtiff reads as Deflate.
python3 - "$T/gray8.tif" gray8-deflate32946.tif <<'PY'
import struct, subprocess, sys
subprocess.run(["tiffcp", "-c", "zip", sys.argv[1], sys.argv[2]], check=True)
b = bytearray(open(sys.argv[2], "rb").read())
bo = "<" if b[:2] == b"II" else ">"
ifd = struct.unpack(bo + "I", b[4:8])[0]
n = struct.unpack(bo + "H", b[ifd:ifd + 2])[0]
for i in range(n):
    e = ifd + 2 + 12 * i
    if struct.unpack(bo + "H", b[e:e + 2])[0] == 259:
        struct.pack_into(bo + "H", b, e + 8, 32946)
open(sys.argv[2], "wb").write(b)
PY
add gray8-deflate32946 src-gray.png 0
# Bilevel: uncompressed, PackBits, CCITT G3 1D and 2D with and without EOL fill bits, G4, both
# fill orders, and min-is-black.
cp_ bw-none           bw src-bilevel.png 0 -c none
cp_ bw-packbits       bw src-bilevel.png 0 -c packbits
cp_ bw-lzw-minisblack bwb src-bilevel.png 0 -c lzw
cp_ bw-g3-1d          bw src-bilevel.png 0 -c g3:1d
cp_ bw-g3-1d-fill     bw src-bilevel.png 0 -c g3:1d:fill
cp_ bw-g3-2d          bw src-bilevel.png 0 -c g3:2d -r 40
cp_ bw-g3-2d-fill     bw src-bilevel.png 0 -c g3:2d:fill
cp_ bw-g3-2d-lsb      bw src-bilevel.png 0 -c g3:2d:fill -f lsb2msb
cp_ bw-g4             bw src-bilevel.png 0 -c g4
cp_ bw-g4-lsb-tiles   bw src-bilevel.png 0 -c g4 -f lsb2msb -t -w 128 -l 64
# Colour: RGB (8 and 16 bits, contiguous and planar, with predictor), JPEG as YCbCr (subsampled)
# and as RGB, in strips and tiles, RGBA, palettes of 8 and 4 bits, CMYK.
$IM src-color.png -crop 120x146+0+0 +repage -depth 8 -type TrueColor -compress None "$T/rgbcrop.tif"
cp_ rgb-none-crop     rgbcrop - 0 -c none -r 8
cp_ rgb-lzw           rgb src-color.png 0 -c lzw
cp_ rgb-lzw-pred      rgb src-color.png 0 -c lzw:2
cp_ rgb-zip-planar    rgb src-color.png 0 -c zip -p separate
cp_ rgb-packbits-tile rgbcrop - 0 -c packbits -t -w 96 -l 48
cp_ rgb-lzw-tiles     rgb src-color.png 0 -c lzw -t -w 96 -l 48
cp_ rgb-jpeg-ycbcr    rgb src-color.png 4 -c jpeg:90 -r 32
cp_ rgb-jpeg-ycbcr-tiles rgb src-color.png 4 -c jpeg:90 -t -w 128 -l 128
cp_ rgb-jpeg-rgb      rgb src-color.png 4 -c jpeg:r:90 -r 16
cp_ rgb16-lzw-pred    rgb16 src-color.png 1 -c lzw:2
cp_ rgba-lzw          rgba src-color.png 1 -c lzw
cp_ pal8-lzw          pal8 src-color.png 0 -c lzw
cp_ pal4-packbits     pal4 src-color.png 0 -c packbits
cp_ cmyk-lzw          cmyk src-color.png 0 -c lzw
cp_ cmyk-zip-planar   cmyk src-color.png 0 -c zip -p separate
# YCbCr subsampled (Deflate) 2×2 and old-style JPEG (compression 6, the whole image one
# JPEG stream at JPEGInterchangeFormat): written by hand (tools write neither), read by libtiff.
python3 - src-color.png <<'PY'
import struct, subprocess, sys
def rgb_pixels(png):
    out = subprocess.run(["/usr/bin/convert", png, "-depth", "8", "rgb:-"], check=True, capture_output=True).stdout
    w, h = map(int, subprocess.run(["/usr/bin/convert", png, "-format", "%w %h", "info:"], check=True, capture_output=True, text=True).stdout.split())
    return w, h, out
def tiff(path, w, h, entries, data):
    # entries: (tag, type, count, value-bytes); data is placed after the header.
    head = 8
    blob = bytearray(b"II*\x00" + struct.pack("<I", 0)) + data
    if len(blob) % 2: blob += b"\x00"
    extra = bytearray()
    ifd_off = len(blob)
    n = len(entries)
    extra_base = ifd_off + 2 + 12 * n + 4
    ents = bytearray()
    for tag, typ, count, val in sorted(entries):
        if len(val) <= 4:
            ents += struct.pack("<HHI", tag, typ, count) + val.ljust(4, b"\x00")
        else:
            ents += struct.pack("<HHII", tag, typ, count, extra_base + len(extra))
            extra += val
            if len(extra) % 2: extra += b"\x00"
    struct.pack_into("<I", blob, 4, ifd_off)
    blob += struct.pack("<H", n) + ents + struct.pack("<I", 0) + extra
    open(path, "wb").write(blob)
S = lambda *v: struct.pack("<%dH" % len(v), *v)
L = lambda *v: struct.pack("<%dI" % len(v), *v)
R = lambda *v: b"".join(struct.pack("<II", a, b) for a, b in v)
w, h, rgb = rgb_pixels(sys.argv[1])
# YCbCr 4:2:0 units (TIFF 6.0 section 21), JFIF full-range coefficients.
def ycc(r, g, b):
    y = 0.299 * r + 0.587 * g + 0.114 * b
    return y, 128 + (b - y) / 1.772, 128 + (r - y) / 1.402
clip = lambda v: max(0, min(255, int(round(v))))
import zlib
data = bytearray()
for uy in range(0, h, 2):
    for ux in range(0, w, 2):
        ys, cbs, crs = [], [], []
        for j in range(2):
            for i in range(2):
                x, y = min(ux + i, w - 1), min(uy + j, h - 1)
                p = 3 * (y * w + x)
                Y, Cb, Cr = ycc(*rgb[p:p + 3])
                ys.append(clip(Y)); cbs.append(Cb); crs.append(Cr)
        data += bytes(ys) + bytes([clip(sum(cbs) / 4), clip(sum(crs) / 4)])
data = zlib.compress(bytes(data), 9)
tiff("ycbcr-zip-420.tif", w, h, [
    (256, 3, 1, S(w)), (257, 3, 1, S(h)), (258, 3, 3, S(8, 8, 8)), (259, 3, 1, S(8)), (262, 3, 1, S(6)),
    (273, 4, 1, L(8)), (277, 3, 1, S(3)), (278, 3, 1, S(h)), (279, 4, 1, L(len(data))),
    (284, 3, 1, S(1)), (530, 3, 2, S(2, 2)), (531, 3, 1, S(1)),
    (532, 5, 6, R((0, 1), (255, 1), (128, 1), (255, 1), (128, 1), (255, 1))),
], data)
jpg = subprocess.run(["/usr/bin/convert", sys.argv[1], "-quality", "90", "-sampling-factor", "2x2", "jpg:-"], check=True, capture_output=True).stdout
tiff("ojpeg.tif", w, h, [
    (256, 3, 1, S(w)), (257, 3, 1, S(h)), (258, 3, 3, S(8, 8, 8)), (259, 3, 1, S(6)), (262, 3, 1, S(6)),
    (273, 4, 1, L(8)), (277, 3, 1, S(3)), (278, 3, 1, S(h)), (279, 4, 1, L(len(jpg))),
    (284, 3, 1, S(1)), (512, 3, 1, S(1)), (513, 4, 1, L(8)), (514, 4, 1, L(len(jpg))), (530, 3, 2, S(2, 2)),
], jpg)
PY
add ycbcr-zip-420 src-color.png 2
add ojpeg src-color.png 4

# Several pages: gray LZW, a 4-bit palette, G4 bilevel (the fax server's mix); the same file
# with page 2's LZW data overwritten by codes used before they are defined (libtiff refuses that
# page and reads the others).
tiffcp -c lzw "$T/gray8.tif" "$T/p1.tif"
tiffcp -c lzw "$T/pal4.tif" "$T/p2.tif"
tiffcp -c g4 "$T/bw.tif" "$T/p3.tif"
tiffcp "$T/p1.tif" "$T/p2.tif" "$T/p3.tif" multipage.tif
python3 - multipage.tif multipage-corrupt.tif <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
ifd = struct.unpack("<I", b[4:8])[0]
def entries(ifd):
    n = struct.unpack("<H", b[ifd:ifd + 2])[0]
    out = {}
    for i in range(n):
        tag, typ, count, val = struct.unpack("<HHII", b[ifd + 2 + 12 * i: ifd + 14 + 12 * i])
        out[tag] = (typ, count, val)
    return out, struct.unpack("<I", b[ifd + 2 + 12 * n: ifd + 6 + 12 * n])[0]
_, ifd = entries(ifd)
e, _ = entries(ifd)  # page 2
typ, count, val = e[273]
offs = [val] if count == 1 else list(struct.unpack("<%dI" % count, b[val:val + 4 * count]))
for off in offs:
    # a clear code, one literal, then code 4000 (never defined): 9-bit codes, MSB first
    bits = "100000000" + "001000001" + format(4000 >> 3, "09b")
    bits += "0" * (-len(bits) % 8)
    for i in range(0, len(bits), 8):
        b[off + i // 8] = int(bits[i:i + 8], 2)
open(sys.argv[2], "wb").write(b)
PY
for p in 0 1 2; do
	tiffcp "multipage.tif,$p" "$T/one.tif"
	tiff2rgba -c none "$T/one.tif" "$T/rgba-out.tif"
	$IM "$T/rgba-out.tif" -background white -alpha remove -alpha off -depth 8 -type TrueColor "PNG24:$T/ref.png"
	sum=$($IM "$T/ref.png" -format '%#' info: | cut -c1-12)
	[ -f "ref-$sum.png" ] || cp "$T/ref.png" "ref-$sum.png"
	src=src-gray.png; [ $p = 1 ] && src=src-color.png; [ $p = 2 ] && src=src-bilevel.png
	printf 'multipage.tif#%d\tref-%s.png\t%s\t0\n' $((p + 1)) "$sum" "$src" >> manifest.tsv
	[ $p = 1 ] && sum=corrupt
	printf 'multipage-corrupt.tif#%d\t%s\t%s\t0\n' $((p + 1)) "$( [ $p = 1 ] && echo corrupt || echo "ref-$sum.png")" "$src" >> manifest.tsv
done
if tiffinfo -D multipage-corrupt.tif >/dev/null 2>&1; then echo "libtiff read the corrupt page" >&2; exit 1; fi

# Valid files this reader refuses as unsupported (415), never as corrupt: 12-bit gray is written
# by hand below; floating point and LZMA/Zstandard by the tools.
$IM src-gray.png -crop 32x8+0+0 +repage -depth 32 -define quantum:format=floating-point -compress None unsup-float32.tif 2>/dev/null || test -s unsup-float32.tif
tiffcp -c lzma "$T/gray8.tif" unsup-lzma.tif
tiffcp -c zstd "$T/gray8.tif" unsup-zstd.tif
python3 - <<'PY'
import struct
w, h = 16, 4
data = bytes(w * h * 12 // 8)
ents = [(256, 3, 1, w), (257, 3, 1, h), (258, 3, 1, 12), (259, 3, 1, 1), (262, 3, 1, 1),
        (273, 4, 1, 8), (277, 3, 1, 1), (278, 3, 1, h), (279, 4, 1, len(data))]
b = bytearray(b"II*\x00" + struct.pack("<I", 8 + len(data))) + data
b += struct.pack("<H", len(ents))
for tag, typ, count, v in ents:
    b += struct.pack("<HHI", tag, typ, count) + (struct.pack("<HH", v, 0) if typ == 3 else struct.pack("<I", v))
b += struct.pack("<I", 0)
open("unsup-gray12.tif", "wb").write(b)
PY
for f in unsup-*.tif; do printf '%s\tunsupported\t-\t0\n' "$f" >> manifest.tsv; done
# The Orientation set (its own script, which reads the source pages written above).
sh ./oriented.sh
du -ch ./*.tif ./*.png | tail -1
