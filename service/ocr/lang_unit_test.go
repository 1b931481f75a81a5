package ocr_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ocrgate/ocrgate/internal/ocrtest"
	"github.com/ocrgate/ocrgate/service/ocr"
)

// TestLang: a pipeline picks a loaded language's recognizer by its model name, refuses one not
// loaded with the list of those loaded, and leaves the pipeline it came from reading the default.
func TestLang(t *testing.T) {
	rt := &ocrtest.Runtime{}
	p, err := ocr.New(rt, ocrtest.Charset(), ocr.DefaultOptions(), ocr.Language{Code: "ja", Charset: ocrtest.Charset()})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Languages(); !slices.Equal(got, []string{"ch", "ja"}) {
		t.Errorf("languages %v, want [ch ja]", got)
	}
	for _, tt := range []struct {
		lang, want string
		loaded     bool
	}{{"", "ch", true}, {"ch", "ch", true}, {"ja", "ja", true}, {"ko", "", false}, {"JA", "", false}} {
		q, err := p.Lang(tt.lang)
		var lerr *ocr.LanguageError
		switch {
		case !tt.loaded && (!errors.As(err, &lerr) || !errors.Is(err, ocr.ErrLanguage) || !slices.Equal(lerr.Loaded, []string{"ch", "ja"})):
			t.Errorf("Lang(%q): %v, want a LanguageError listing ch and ja", tt.lang, err)
		case tt.loaded && (err != nil || q.Language() != tt.want):
			t.Errorf("Lang(%q): %v, %v; want %s", tt.lang, q, err, tt.want)
		}
	}
	page, _, _ := ocrtest.Receipt()
	ja, _ := p.Lang("ja")
	// The stand-in runtime has no rec_ja: the Japanese pipeline asks for it, the default does not.
	if _, err := ja.Run(context.Background(), ocrtest.PNG(page)); !errors.Is(err, ocr.ErrModelMissing) {
		t.Errorf("lang ja ran with %v, want the runtime's answer for rec_ja (model missing)", err)
	}
	if _, err := p.Run(context.Background(), ocrtest.PNG(page)); err != nil {
		t.Errorf("the default after Lang: %v", err)
	}
	if got := ocr.RecognizerFor("zh-Hant"); got != "rec_zh-Hant" || ocr.RecognizerFor("ch") != ocr.Recognizer {
		t.Errorf("RecognizerFor: %s", got)
	}
	for _, bad := range []ocr.Language{{Code: "ja"}, {Code: "", Charset: ocrtest.Charset()}, {Code: "ch", Charset: ocrtest.Charset()}} {
		if _, err := ocr.New(rt, ocrtest.Charset(), ocr.DefaultOptions(), bad); err == nil {
			t.Errorf("New took language %+v", bad)
		}
	}
}
