package service_test

import (
	"io"
	"testing"
	"time"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/service"
	"github.com/ocrgate/ocrgate/service/admission"
)

// TestDegeneratePageRefused: a page box thinner than a pixel at any scale the render limits allow
// is a 422 at once, and the service is whole afterwards: the admission and the engine instance it
// took are back (a 656-byte PDF used to hold both forever, so that every other PDF got 429).
func TestDegeneratePageRefused(t *testing.T) {
	gate := admission.New(admission.Options{Budget: 1 << 30, MaxRunning: 2, MaxQueue: 4, MaxWait: time.Minute})
	app := docApp(t, service.Options{Gate: gate, RequestTimeout: 30 * time.Second}, nil, nil)
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"media box 14400×0.01 pt", hostile.PDFThinPage(14_400, 0.01)},
		{"crop box 0.01×0.01 pt", hostile.PDFTinyCropBox(0.01)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Twice the engine's instances: a leaked instance would make the later ones wait.
			for range 5 {
				resp, err := app.Test(readRequest(tt.data, nil), int((2 * time.Minute).Milliseconds()))
				if err != nil {
					t.Fatalf("no answer: %v", err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				code := resp.StatusCode
				checkJSONError(t, code, body, 422, "degenerate_page")
			}
			if s := gate.Stats(); s.Used != 0 || s.Running != 0 || s.Inside != 0 {
				t.Errorf("the gate holds %+v after the answers", s)
			}
		})
	}
	born, _ := bornDigital(t, invoice)
	if d := readDocument(t, app, born, nil); len(d.Pages) != 1 || d.Pages[0].Source != "text-layer" {
		t.Errorf("afterwards a good document reads %+v", d.Pages)
	}
}
