#!/usr/bin/env bash
# job_memory.sh [PAGES] [NOISE_MIB] — what a big document costs `ocrgate serve` as a job.
#
# Writes a scanned PDF of PAGES copies of testdata/receipts/img/thermal.jpg at 200 dpi, each page
# also holding NOISE_MIB of random gray pixels (incompressible, unfiltered) drawn one point wide
# off the page, so the file is as big as the noise makes it and each page reads as the receipt.
# Starts ./bin/ocrgate serve (make build) with jobs on in a fresh directory, on a free loopback
# port, submits the PDF raw to POST /jobs, waits for the job, and prints the resident memory at
# rest and at its peak (sampled every 100 ms), and the anonymous and file-backed parts at the peak.
#
#   scripts/job_memory.sh 10 20   # a 200 MiB document
#   scripts/job_memory.sh 10 0    # the same pages without the noise
set -euo pipefail
PAGES=${1:-10}
NOISE=${2:-20}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DIR=$(mktemp -d)
PID=
cleanup() { [[ -n $PID ]] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$DIR"; }
trap cleanup EXIT

python3 - "$DIR/doc.pdf" "$PAGES" "$NOISE" testdata/receipts/img/thermal.jpg <<'PY'
import os, struct, sys
out, pages, noise, jpg = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
data = open(jpg, 'rb').read()
i = 2
while True:  # the JPEG's size, from its frame header
    m, n = data[i + 1], struct.unpack('>H', data[i + 2:i + 4])[0]
    if m in (0xC0, 0xC1, 0xC2):
        h, w = struct.unpack('>HH', data[i + 5:i + 9])
        break
    i += 2 + n
pw, ph = w * 72 / 200, h * 72 / 200
side = max(8, int((noise << 20) ** 0.5))
f = open(out, 'wb')
f.write(b'%PDF-1.7\n%\xe2\xe3\xcf\xd3\n')
offs = {}
def obj(n, dict_, stream=None):
    offs[n] = f.tell()
    f.write(b'%d 0 obj\n' % n)
    if stream is None:
        f.write(dict_ + b'\nendobj\n')
    else:
        f.write(dict_[:-2] + b' /Length %d >>\nstream\n' % len(stream))
        f.write(stream)
        f.write(b'\nendstream\nendobj\n')
kids = [3 + 4 * k for k in range(pages)]
obj(1, b'<< /Type /Catalog /Pages 2 0 R >>')
obj(2, b'<< /Type /Pages /Kids [%s] /Count %d >>' % (b' '.join(b'%d 0 R' % k for k in kids), pages))
for n in kids:
    obj(n, b'<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /S %d 0 R /N %d 0 R >> >> /Contents %d 0 R >>' % (pw, ph, n + 2, n + 3, n + 1))
    obj(n + 1, b'<< >>', b'q %.2f 0 0 %.2f 0 0 cm /S Do Q q 1 0 0 1 -20 -20 cm /N Do Q' % (pw, ph))
    obj(n + 2, b'<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode >>' % (w, h), data)
    obj(n + 3, b'<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 >>' % (side, side), os.urandom(side * side))
total = 3 + 4 * pages
x = f.tell()
f.write(b'xref\n0 %d\n0000000000 65535 f \n' % total)
for n in range(1, total):
    f.write(b'%010d 00000 n \n' % offs[n])
f.write(b'trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n' % (total, x))
PY

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
OCRGATE_ADDR=127.0.0.1:$PORT OCRGATE_JOBS_DIR=$DIR/jobs OCRGATE_LOG_LEVEL=warn ./bin/ocrgate serve >"$DIR/log" 2>&1 &
PID=$!
until curl -sf "localhost:$PORT/readyz" >/dev/null; do
  kill -0 "$PID" 2>/dev/null || { cat "$DIR/log"; exit 1; }
  sleep 0.5
done
sleep 3
mem() { awk '/VmRSS/{r=$2}/RssAnon/{a=$2}/RssFile/{f=$2}END{if (r) print int(r/1024), int(a/1024), int(f/1024)}' "/proc/$PID/status" 2>/dev/null; }
read -r REST _ _ < <(mem)
echo 0 0 0 >"$DIR/peak"
(
  peak=0
  while m=$(mem) && [[ -n $m ]]; do
    read -r r _ _ <<<"$m"
    if ((r > peak)); then peak=$r; echo "$m" >"$DIR/peak"; fi
    sleep 0.1
  done
) &
SIZE=$(stat -c %s "$DIR/doc.pdf")
T0=$(date +%s.%N)
ID=$(curl -sf -X POST --data-binary @"$DIR/doc.pdf" -H 'Content-Type: application/pdf' "localhost:$PORT/jobs" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
T1=$(date +%s.%N)
while :; do
  J=$(curl -sf "localhost:$PORT/jobs/$ID?wait=30s")
  S=$(python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["state"], j["pages"]["done"], j["pages"]["total"], j["pages"]["failed"])' <<<"$J")
  case $S in succeeded* | failed* | canceled*) break ;; esac
done
T2=$(date +%s.%N)
read -r PEAK ANON FILE <"$DIR/peak"
printf 'document: %d pages, %.1f MiB; submitted in %.1f s, read in %.1f s: %s (state, pages done, total, failed)\n' \
  "$PAGES" "$(bc -l <<<"$SIZE/1048576")" "$(bc -l <<<"$T1-$T0")" "$(bc -l <<<"$T2-$T1")" "$S"
echo "resident memory: $REST MiB at rest, $PEAK MiB at the peak (+$((PEAK - REST)) MiB; anonymous $ANON MiB, file-backed $FILE MiB)"
