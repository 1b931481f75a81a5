package ocr_test

import (
	"testing"

	"github.com/ocrgate/ocrgate/internal/ocrtest"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// TestWith: a pipeline with a request's own options runs with them (the classifier off: no
// classifier call), while the pipeline it came from keeps its own (the classifier runs), and
// options that cannot work are refused.
func TestWith(t *testing.T) {
	img, _, text := ocrtest.Receipt()
	rt := &ocrtest.Runtime{}
	base := fakePipeline(t, rt, nil)
	opt := base.Options()
	opt.UseClassifier = false
	opt.MinScore = 0.25
	mine, err := base.With(opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mine.Run(t.Context(), ocrtest.PNG(img))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != text {
		t.Errorf("text %q, want %q", res.Text, text)
	}
	if n := rt.Calls(ocr.Classifier); n != 0 {
		t.Errorf("the classifier ran %d times with UseClassifier off", n)
	}
	if _, err := base.Run(t.Context(), ocrtest.PNG(img)); err != nil {
		t.Fatal(err)
	}
	if rt.Calls(ocr.Classifier) == 0 {
		t.Error("the original pipeline lost its classifier")
	}
	if got := base.Options(); !got.UseClassifier || got.MinScore != 0.5 {
		t.Errorf("the original options changed: classifier %v, min score %v", got.UseClassifier, got.MinScore)
	}
	opt.DB.Threshold = 1.5
	if _, err := base.With(opt); err == nil {
		t.Error("a DB threshold of 1.5 was accepted")
	}
}
