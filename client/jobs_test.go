package client_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/client"
	"github.com/ocrgate/ocrgate/internal/testdoc"
)

// TestJobs: a scanned document submitted as a job, waited for with its progress, read as /ocr
// reads it; then cancelled, and gone.
func TestJobs(t *testing.T) {
	c, err := client.New(live(t), client.WithAPIKey(apiKey))
	if err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := testdoc.Scanned([][]byte{img, img, img}, testdoc.ScanOptions{DPI: 200})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	j, err := c.SubmitJob(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	done, err := c.WaitJob(ctx, j.ID, func(j *client.Job) { seen = append(seen, j.Pages.Done) })
	if err != nil {
		t.Fatal(err)
	}
	if done.State != "succeeded" || done.Result == nil || len(done.Result.Pages) != 3 || len(seen) == 0 || seen[len(seen)-1] != 3 {
		t.Fatalf("job %s, progress %v", done.State, seen)
	}
	sync, err := c.OCR(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if done.Result.Text != sync.Text || !strings.Contains(done.Result.Text, "\f") {
		t.Errorf("the job read %q; /ocr %q", done.Result.Text, sync.Text)
	}
	if err := c.CancelJob(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	var e *client.Error
	if _, err := c.Job(ctx, j.ID); !errors.As(err, &e) || e.Status != 404 || e.Code != "job_not_found" {
		t.Errorf("a cancelled job: %v", err)
	}
}
