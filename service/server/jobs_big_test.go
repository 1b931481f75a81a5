package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/jobs"
	"github.com/ocrgate/ocrgate/service/server"
)

// noisyScan is a scanned PDF of the JPEGs, 200 dpi, each page also holding an image of noise
// bytes of random gray pixels (incompressible, stored unfiltered) drawn one point wide off the
// page: the file is as big as the noise makes it, and what the page shows is its scan.
func noisyScan(t testing.TB, jpegs [][]byte, noise int) []byte {
	t.Helper()
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	var kids []string
	for _, data := range jpegs {
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		w, h := float64(cfg.Width)*72/200, float64(cfg.Height)*72/200
		side := 1
		for side*side < noise {
			side++
		}
		pix := make([]byte, side*side)
		_, _ = rand.Read(pix)
		n := len(objs) // object n+1 is the page, then its content, scan and noise
		kids = append(kids, fmt.Sprintf("%d 0 R", n+1))
		content := fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /S Do Q q 1 0 0 1 -20 -20 cm /N Do Q", w, h)
		objs = append(objs,
			fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /S %d 0 R /N %d 0 R >> >> /Contents %d 0 R >>",
				w, h, n+3, n+4, n+2),
			testdoc.Stream("", []byte(content)),
			testdoc.Stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode", cfg.Width, cfg.Height), data),
			testdoc.Stream(fmt.Sprintf("/Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8", side, side), pix),
		)
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	return testdoc.Raw(objs...)
}

// TestBigJobOverTheListener sends a 26 MiB scanned PDF (pages of incompressible image data) to
// the service through its real listener and framing guard: POST /ocr refuses it at the body
// limit as before, POST /jobs streams it into the store and reads it, every page once and as
// /ocr reads the same page of a small copy (the same scans and page objects, a tiny noise image).
// A body over the job limit is refused at its head; an upload cut short leaves nothing behind.
func TestBigJobOverTheListener(t *testing.T) {
	const pages, noise = 5, 5 << 20
	opt := server.Options{MaxBodyBytes: 20 << 20, JobMaxBytes: 40 << 20}
	app, st := jobApp(t, opt, jobs.Config{MaxBytes: 40 << 20, Workers: 1})
	addr := serveGuarded(t, app, opt)
	f := fixtures(t)
	jpegs := make([][]byte, pages)
	for i := range jpegs {
		jpegs[i] = f.jpeg
	}
	big := noisyScan(t, jpegs, noise)
	if len(big) < 25<<20 {
		t.Fatalf("the document is %d bytes; want over 25 MiB", len(big))
	}
	post := func(path string, body []byte) (int, []byte) {
		t.Helper()
		resp, err := http.Post("http://"+addr+path, "application/pdf", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	// /ocr keeps its limit.
	code, body := post("/ocr", big)
	checkJSONError(t, code, body, 413, "body_too_large")

	code, body = post("/jobs", big)
	if code != 202 {
		t.Fatalf("POST /jobs of %d bytes: %d %s", len(big), code, body)
	}
	var j jobBody
	if err := json.Unmarshal(body, &j); err != nil || j.Pages.Total != pages {
		t.Fatalf("%v: %s", err, body)
	}
	j = waitJob(t, app, j.ID, "", time.Duration(pages)*time.Minute)
	if j.State != "succeeded" || j.Pages.Done != pages || j.Pages.Failed != 0 || j.Result == nil || len(j.Result.Pages) != pages {
		t.Fatalf("job: %+v", j)
	}
	if j.Result.ImageInfo.Bytes != len(big) {
		t.Errorf("image_info.bytes %d, want %d", j.Result.ImageInfo.Bytes, len(big))
	}
	small := readDocument(t, app, noisyScan(t, jpegs[:1], 64), nil)
	for i, p := range j.Result.Pages {
		// (The fast tier's stand-in recognizer reads no rendered page: its text is empty.)
		if p.Page != i+1 || (p.Text == "" && !testing.Short()) || p.Text != small.Pages[0].Text || p.Source != small.Pages[0].Source {
			t.Errorf("page %d: the job read %q (%s), /ocr of the small copy %q (%s)", p.Page, p.Text, p.Source, small.Pages[0].Text, small.Pages[0].Source)
		}
	}

	// Over the job limit: refused at the head, before a byte of the body is read.
	resp, body := rawExchange(t, addr, fmt.Sprintf("POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\nContent-Length: %d\r\n\r\n", 40<<20+1))
	checkJSONError(t, resp.StatusCode, body, 413, "body_too_large")

	// An upload cut short: the client announces the document and hangs up half-way.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\nContent-Length: %d\r\n\r\n", len(big))
	_, _ = conn.Write(big[:len(big)/2])
	time.Sleep(200 * time.Millisecond)
	_ = conn.Close()
	// A hostile client that announces a body and sends nothing is cut at its deadline by the
	// submission's own (not waited for here); the store holds nothing of either.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hostile.HeadOnly(ctx, addr, "/jobs", 30<<20)
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, b, err := st.Documents(context.Background())
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store holds %d documents (%d bytes) after the finished job and the cut upload: %v", n, b, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
