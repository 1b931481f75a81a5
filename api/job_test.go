package api_test

import (
	"encoding/json"
	"testing"

	"github.com/ocrgate/ocrgate/api"
)

// TestJobResult: a job's "result" is a document's answer or an image's, and each comes back as
// the one it was.
func TestJobResult(t *testing.T) {
	for _, tt := range []struct {
		name string
		job  api.Job
	}{
		{"document", api.Job{ID: "a", State: "succeeded", Result: &api.DocumentResult{Pages: []api.Page{{Page: 1, Text: "x"}}, Text: "x"}}},
		{"image", api.Job{ID: "b", State: "succeeded", ImageResult: &api.OCRResult{Regions: []api.Region{}, Text: "y"}}},
		{"none yet", api.Job{ID: "c", State: "running"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.job)
			if err != nil {
				t.Fatal(err)
			}
			var back api.Job
			if err := json.Unmarshal(raw, &back); err != nil {
				t.Fatal(err)
			}
			if back.ID != tt.job.ID || back.State != tt.job.State ||
				(back.Result == nil) != (tt.job.Result == nil) || (back.ImageResult == nil) != (tt.job.ImageResult == nil) {
				t.Fatalf("%s came back as %+v", raw, back)
			}
			if tt.job.Result != nil && back.Result.Text != tt.job.Result.Text ||
				tt.job.ImageResult != nil && back.ImageResult.Text != tt.job.ImageResult.Text {
				t.Errorf("%s: the result's text changed", raw)
			}
		})
	}
}
