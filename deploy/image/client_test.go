//go:build image

package image

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// ---- documents the test writes ----------------------------------------------------------------

// receiptLines is the text of the receipt the test draws.
var receiptLines = []string{
	"GREEN LEAF CAFE",
	"12 Harbour Road, Penang",
	"Tel 04-2261 8890",
	"Cappuccino        2 x 4.50    9.00",
	"Butter Croissant  1 x 3.80    3.80",
	"Fresh Orange      1 x 5.20    5.20",
	"SUBTOTAL                     18.00",
	"SST 6%                        1.08",
	"TOTAL                        19.08",
	"Thank you, please come again",
}

var (
	receiptOnce sync.Once
	receiptJPEG []byte
	receiptErr  error
)

// receipt draws receiptLines in Go Regular on a white receipt-sized page and encodes it as JPEG,
// the way a phone photo of a receipt arrives. The same bytes every run.
func receipt(t testing.TB) []byte {
	t.Helper()
	receiptOnce.Do(func() {
		f, err := opentype.Parse(goregular.TTF)
		if err != nil {
			receiptErr = err
			return
		}
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 22, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			receiptErr = err
			return
		}
		img := image.NewRGBA(image.Rect(0, 0, 560, 90+len(receiptLines)*40))
		draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
		d := font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: face}
		for i, l := range receiptLines {
			d.Dot = fixed.P(40, 60+i*40)
			d.DrawString(l)
		}
		var b bytes.Buffer
		receiptErr = jpeg.Encode(&b, img, &jpeg.Options{Quality: 92})
		receiptJPEG = b.Bytes()
	})
	if receiptErr != nil {
		t.Fatalf("draw the receipt: %v", receiptErr)
	}
	return receiptJPEG
}

// bornDigitalPDF is a two-page PDF with a text layer.
func bornDigitalPDF(t testing.TB) []byte {
	t.Helper()
	pdf := fpdf.New("P", "pt", "A4", "")
	pdf.SetCompression(false)
	for i, lines := range [][]string{{"INVOICE 2041", "Total due: 1,250.00 EUR"}, {"Page two of the invoice", "Payment within 30 days"}} {
		pdf.AddPage()
		pdf.SetFont("Helvetica", "", 16)
		for j, l := range lines {
			pdf.Text(72, float64(100+j*30), l)
		}
		_ = i
	}
	var b bytes.Buffer
	if err := pdf.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// scannedPDF is a PDF of n pages, each the receipt as a scan (a JPEG drawn over the whole page):
// every page is OCR'd.
func scannedPDF(t testing.TB, n int) []byte {
	t.Helper()
	jpg := receipt(t)
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(jpg))
	if err != nil {
		t.Fatal(err)
	}
	w, h := float64(cfg.Width)*72/150, float64(cfg.Height)*72/150 // placed at 150 dpi
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: w, Ht: h}})
	pdf.RegisterImageOptionsReader("receipt", fpdf.ImageOptions{ImageType: "JPG"}, bytes.NewReader(jpg))
	for range n {
		pdf.AddPage()
		pdf.ImageOptions("receipt", 0, 0, w, h, false, fpdf.ImageOptions{ImageType: "JPG"}, 0, "")
	}
	var b bytes.Buffer
	if err := pdf.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// ---- the reference: this machine's binary -----------------------------------------------------

var (
	hostTextMu sync.Mutex
	hostTexts  = map[string]string{}
)

// hostText is the text `ocrgate ocr -json` of the binary built on this machine gives for data
// (in-process, with the models of $OCRGATE_HOME): what /ocr of the images must answer.
func hostText(t testing.TB, name string, data []byte) string {
	t.Helper()
	hostTextMu.Lock()
	defer hostTextMu.Unlock()
	if s, ok := hostTexts[name]; ok {
		return s
	}
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(hostOCRGATE, "ocr", "-json", f)
	cmd.Env = append(os.Environ(), "OCRGATE_LOG_LEVEL=error")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ocrgate ocr -json %s on this machine: %v\n%s", name, err, stderr.String())
	}
	var r struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || r.Text == nil {
		t.Fatalf("ocrgate ocr -json %s printed no text (%v):\n%s", name, err, stdout.String())
	}
	hostTexts[name] = *r.Text
	return *r.Text
}

// ---- HTTP --------------------------------------------------------------------------------------

// httpClient has a deadline for every call.
var httpClient = &http.Client{Timeout: 2 * time.Minute}

type response struct {
	status int
	header http.Header
	body   []byte
}

func get(url string) (response, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, b}, err
}

// postOCR sends data as POST /ocr {"image": base64}.
func postOCR(base string, data []byte) (response, error) {
	body, _ := json.Marshal(map[string]string{"image": base64.StdEncoding.EncodeToString(data)})
	resp, err := httpClient.Post(base+"/ocr", "application/json", bytes.NewReader(body))
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, b}, err
}

// ocrResult is the part of the /ocr answer the test reads.
type ocrResult struct {
	Text      string `json:"text"`
	ImageInfo struct {
		Format string `json:"format"`
		Pages  int    `json:"pages"`
	} `json:"image_info"`
	Pages []struct {
		Page   int    `json:"page"`
		Source string `json:"source"`
		Text   string `json:"text"`
	} `json:"pages"`
}

// ocr posts data to base's /ocr and decodes a 200 answer.
func ocr(t testing.TB, base string, data []byte) ocrResult {
	t.Helper()
	r, err := postOCR(base, data)
	if err != nil {
		t.Fatalf("POST %s/ocr: %v", base, err)
	}
	if r.status != http.StatusOK {
		t.Fatalf("POST %s/ocr: %d %s", base, r.status, r.body)
	}
	var res ocrResult
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Fatalf("POST %s/ocr: %v in %s", base, err, r.body)
	}
	return res
}

// waitStatus polls url until it answers want, for at most d, and returns how long that took.
func waitStatus(url string, want int, d time.Duration) (time.Duration, error) {
	start := time.Now()
	var last string
	for time.Since(start) < d {
		r, err := (&http.Client{Timeout: 2 * time.Second}).Get(url)
		if err == nil {
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode == want {
				return time.Since(start), nil
			}
			last = fmt.Sprintf("%d %s", r.StatusCode, strings.TrimSpace(string(b)))
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start), fmt.Errorf("%s did not answer %d within %s (last: %s)", url, want, d, last)
}

// metric reads one sample's value from a Prometheus text exposition (the first line that starts
// with name followed by a space).
func metric(t testing.TB, url, name string) float64 {
	t.Helper()
	r, err := get(url)
	if err != nil || r.status != http.StatusOK {
		t.Fatalf("GET %s: %v %d", url, err, r.status)
	}
	for _, l := range strings.Split(string(r.body), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err != nil {
				t.Fatalf("%s: %q is no number", name, v)
			}
			return f
		}
	}
	t.Fatalf("%s has no sample %s:\n%s", url, name, r.body)
	return 0
}
