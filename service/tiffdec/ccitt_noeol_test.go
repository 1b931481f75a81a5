package tiffdec

import (
	"bytes"
	"context"
	"image"
	"os"
	"path/filepath"
	"testing"
)

// TestG3WithoutEOL: one-dimensional T.4 written without EOLs, rows bit after bit (libtiff's own
// test page for its issue 54, testdata/libtiff-g3-1d-noeol.tif), decodes to the pixels libtiff
// gives it (its reference output, recompressed as G4: libtiff-g3-1d-noeol-ref-g4.tif). It was
// refused as corrupt: "T.4 data ends at line 1 of 37".
func TestG3WithoutEOL(t *testing.T) {
	decode := func(name string) *image.Gray {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := Open(context.Background(), data, Limits{MaxPages: 1})
		if err != nil {
			t.Fatal(err)
		}
		img, err := f.Decode(context.Background(), &f.Pages[0])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		g, ok := img.(*image.Gray)
		if !ok {
			t.Fatalf("%s decodes to %T", name, img)
		}
		return g
	}
	got, want := decode("libtiff-g3-1d-noeol.tif"), decode("libtiff-g3-1d-noeol-ref-g4.tif")
	if got.Rect != want.Rect || !bytes.Equal(got.Pix, want.Pix) {
		t.Fatalf("decoded %v; libtiff's reference is %v, and the pixels differ", got.Rect, want.Rect)
	}
	black := 0
	for _, v := range got.Pix {
		if v == 0 {
			black++
		}
	}
	if black < len(got.Pix)/200 {
		t.Errorf("%d black pixels of %d: a page of text was expected", black, len(got.Pix))
	}
}
