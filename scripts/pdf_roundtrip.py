#!/usr/bin/env python3
"""Round trip of a searchable PDF: how its text layer reads back against the answer.

For each file: `ocrgate ocr --format hocr` gives the answer's words and boxes, `ocrgate ocr
--format pdf` the searchable PDF, and poppler's `pdftotext -bbox-layout` the words the PDF gives
back. On the pages the answer OCR'd, it prints the word F1 (words as multisets) and the share of
the answer's words found on their box (the same word, IoU >= 0.5), and sizes and times.

Usage: scripts/pdf_roundtrip.py [--bin bin/ocrgate] FILE...
"""
import argparse, collections, html, re, subprocess, sys, tempfile, time, os

def hocr_pages(data):
    pages = []
    for m in re.finditer(r'<div class="ocr_page"[^>]*title="([^"]*)"[^>]*>(.*?)(?=<div class="ocr_page"|</body>)', data, re.S):
        title, body = m.group(1), m.group(2)
        bbox = [int(v) for v in re.search(r"bbox (\d+) (\d+) (\d+) (\d+)", title).groups()]
        src = re.search(r"x_source (\S+)", title)
        words = []
        for w in re.finditer(r'<span class="ocrx_word"[^>]*title="bbox (\d+) (\d+) (\d+) (\d+)[^"]*"[^>]*>([^<]*)</span>', body):
            words.append((html.unescape(w.group(5)), [int(v) for v in w.groups()[:4]]))
        pages.append({"w": bbox[2], "h": bbox[3], "source": src.group(1).rstrip(";") if src else "", "words": words})
    return pages

def pdf_pages(path):
    out = subprocess.run(["pdftotext", "-bbox-layout", path, "-"], capture_output=True, text=True, check=True).stdout
    pages = []
    for m in re.finditer(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', out, re.S):
        words = [(html.unescape(w.group(5)), [float(v) for v in w.groups()[:4]])
                 for w in re.finditer(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', m.group(3))]
        pages.append({"w": float(m.group(1)), "h": float(m.group(2)), "words": words})
    return pages

def iou(a, b):
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0])); iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2]-a[0])*(a[3]-a[1]) + (b[2]-b[0])*(b[3]-b[1]) - inter
    return inter / union if union > 0 else 0

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="bin/ocrgate")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    tot_w = tot_on = 0; tot_shared = tot_got = tot_want = 0
    for f in a.files:
        with tempfile.TemporaryDirectory() as d:
            hocr = subprocess.run([a.bin, "ocr", "--format", "hocr", f], capture_output=True, text=True)
            if hocr.returncode != 0:
                print(f"{os.path.basename(f)}: hocr failed: {hocr.stderr.strip()[:200]}"); continue
            out = os.path.join(d, "out.pdf")
            t = time.time()
            r = subprocess.run([a.bin, "ocr", "--format", "pdf", "-o", out, f], capture_output=True, text=True)
            secs = time.time() - t
            if r.returncode != 0:
                print(f"{os.path.basename(f)}: pdf failed: {r.stderr.strip()[:200]}"); continue
            ans, back = hocr_pages(hocr.stdout), pdf_pages(out)
            n = on = 0; got = collections.Counter(); want = collections.Counter()
            for pa, pb in zip(ans, back):
                if pa["source"] != "ocr":
                    continue
                pw, ph = pb["w"], pb["h"]
                if (pw > ph) != (pa["w"] > pa["h"]):
                    pw, ph = ph, pw
                sx, sy = pw / pa["w"], ph / pa["h"]
                used = [False] * len(pb["words"])
                got.update(w for w, _ in pb["words"])
                for text, b in pa["words"]:
                    want[text] += 1; n += 1
                    wb = [b[0]*sx, b[1]*sy, b[2]*sx, b[3]*sy]
                    best, bi = 0, -1
                    for k, (g, gb) in enumerate(pb["words"]):
                        if not used[k] and g == text:
                            v = iou(gb, wb)
                            if v > best: best, bi = v, k
                    if best >= 0.5:
                        used[bi] = True; on += 1
            shared = sum((got & want).values())
            g, w = sum(got.values()), sum(want.values())
            f1 = 2*shared/(g+w) if g+w else 0
            tot_w += n; tot_on += on; tot_shared += shared; tot_got += g; tot_want += w
            ocrd = sum(1 for p in ans if p["source"] == "ocr")
            print(f"{os.path.basename(f)}: {len(ans)} pages, {ocrd} OCR'd; {n} words, F1 {f1:.4f}, on their box {on}/{n}; "
                  f"{os.path.getsize(f)} bytes in, {os.path.getsize(out)} out; {secs:.1f} s")
    if tot_want:
        print(f"all: word F1 {2*tot_shared/(tot_got+tot_want):.4f}, on their box {tot_on}/{tot_w} ({100*tot_on/max(1,tot_w):.1f} %)")

if __name__ == "__main__":
    main()
