package server_test

import (
	"encoding/json"
	"image"
	"image/draw"
	"net/http"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/testdoc"
	"github.com/ocrgate/ocrgate/service/jobs"
	"github.com/ocrgate/ocrgate/service/server"
)

// imageJob is a job of a single image as a client reads it: its result is /ocr's image answer.
type imageJob struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Pages struct {
		Total, Done, Failed int
	} `json:"pages"`
	Result *imageBody `json:"result"`
	Error  *struct{ Error, Code string }
}

// TestImageJobs: a single image (a JPEG, a one-page TIFF) is a one-page job whose result is what
// POST /ocr answers for the image; a multi-page TIFF is a job of its pages, each as /ocr reads it
// alone; what /ocr refuses before reading an image (a format it does not read, a header that
// does not parse, a page selection past one page) a job refuses at submission.
func TestImageJobs(t *testing.T) {
	app, st := jobApp(t, server.Options{}, jobs.Config{})
	f := fixtures(t)
	src := decoded(t, f.receipt)
	rgba := image.NewRGBA(src.Bounds())
	draw.Draw(rgba, rgba.Bounds(), src, src.Bounds().Min, draw.Src)
	oneTIFF, err := testdoc.TIFF(rgba)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		data   []byte
		format string
	}{
		{"jpeg", f.jpeg, "jpeg"},
		{"one-page tiff", oneTIFF, "tiff"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, j, _ := submitJob(t, app, tt.data, "?words=true", "")
			if code != 202 || j.Pages.Total != 1 {
				t.Fatalf("submit: %d %+v", code, j)
			}
			var got imageJob
			deadline := time.Now().Add(2 * time.Minute)
			for got.State != "succeeded" && got.State != "failed" {
				if time.Now().After(deadline) {
					t.Fatalf("not finished: %+v", got)
				}
				code, body := jobCall(t, app, http.MethodGet, "/jobs/"+j.ID+"?wait=20s", "")
				if code != 200 {
					t.Fatalf("GET: %d %s", code, body)
				}
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatalf("%v: %.300s", err, body)
				}
			}
			sync := readImageAnswer(t, app, tt.data, map[string]any{"words": true})
			if got.State != "succeeded" || got.Pages.Done != 1 || got.Result == nil {
				t.Fatalf("job: %+v", got)
			}
			r := got.Result
			if r.ImageInfo != sync.ImageInfo || r.ImageInfo.Format != tt.format || r.Text != sync.Text || !sameRegions(r.Regions, sync.Regions) {
				t.Errorf("the job read %+v %q (%d regions); /ocr %+v %q (%d regions)",
					r.ImageInfo, r.Text, len(r.Regions), sync.ImageInfo, sync.Text, len(sync.Regions))
			}
			if len(r.Regions) > 0 && len(r.Regions[0].Words) == 0 {
				t.Errorf("words were asked for and are missing")
			}
		})
	}
	t.Run("multi-page tiff", func(t *testing.T) {
		tiff, err := testdoc.TIFF(rgba, rgba)
		if err != nil {
			t.Fatal(err)
		}
		code, j, _ := submitJob(t, app, tiff, "", "")
		if code != 202 || j.Pages.Total != 2 {
			t.Fatalf("submit: %d %+v", code, j)
		}
		j = waitJob(t, app, j.ID, "", 2*time.Minute)
		alone := readImageAnswer(t, app, pngOf(t, rgba), nil)
		if j.State != "succeeded" || j.Result == nil || len(j.Result.Pages) != 2 || j.Result.ImageInfo.Format != "tiff" {
			t.Fatalf("job: %+v", j)
		}
		for _, p := range j.Result.Pages {
			if p.Text != alone.Text || !sameRegions(p.Regions, alone.Regions) {
				t.Errorf("page %d read %q; the image alone %q", p.Page, p.Text, alone.Text)
			}
		}
	})
	for _, tt := range []struct {
		name, query string
		data        []byte
		status      int
		code        string
	}{
		{"not an image", "", []byte("hello, this is no image at all, and no document either"), 415, ""},
		{"a PNG head and nothing", "", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), 422, ""},
		{"page 2 of an image", "?pages=2", f.jpeg, 400, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, j, _ := submitJob(t, app, tt.data, tt.query, "")
			if code != tt.status || j.Error == nil || j.Error.Code == "" {
				t.Errorf("%d %+v; want %d with a code", code, j.Error, tt.status)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	if n, b, err := st.Documents(t.Context()); err != nil || n != 0 {
		t.Errorf("image jobs left %d documents (%d bytes): %v", n, b, err)
	}
}
