package tiffdec

import (
	"bytes"
	"context"
	"errors"
	"image"
	"os"
	"path/filepath"
	"testing"
)

// TestPredictorOnlyWhereUsed: libtiff knows the Predictor tag (317) only for the codecs that use
// it (LZW and Deflate among those read here); with any other compression the tag is unknown and
// ignored, whatever it says. A JPEG-compressed scan of OCR-D's test corpus carries Predictor
// 38928, and was refused as unsupported. Here each file's PageNumber entry (297, just before 317)
// becomes a Predictor: the page decodes exactly as before for JPEG, G4, PackBits and uncompressed
// pages (value 2 too: uncompressed samples are not differences), and stays unsupported for LZW.
func TestPredictorOnlyWhereUsed(t *testing.T) {
	decode := func(data []byte) (image.Image, error) {
		f, err := Open(context.Background(), data, Limits{MaxPages: 1})
		if err != nil {
			return nil, err
		}
		return f.Decode(context.Background(), &f.Pages[0])
	}
	withPredictor := func(t *testing.T, data []byte, v uint16) []byte {
		bo, at := firstEntry(t, data, 297)
		d := append([]byte(nil), data...)
		bo.PutUint16(d[at:], 317)
		bo.PutUint16(d[at+2:], typeShort)
		bo.PutUint32(d[at+4:], 1)
		bo.PutUint32(d[at+8:], 0)
		bo.PutUint16(d[at+8:], v)
		return d
	}
	for _, name := range []string{"gray8-jpeg.tif", "rgb-jpeg-ycbcr.tif", "bw-g4.tif", "gray8-packbits.tif", "gray8-none.tif"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			want, err := decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if pix(want) == nil {
				t.Fatalf("decoded to %T", want)
			}
			for _, v := range []uint16{38928, 2} {
				got, err := decode(withPredictor(t, data, v))
				if err != nil {
					t.Fatalf("predictor %d: %v", v, err)
				}
				if !bytes.Equal(pix(got), pix(want)) {
					t.Errorf("predictor %d changed the pixels", v)
				}
			}
		})
	}
	data, err := os.ReadFile(filepath.Join("testdata", "gray8-lzw.tif"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decode(withPredictor(t, data, 38928)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("LZW with predictor 38928: %v, want unsupported", err)
	}
}

// pix is an image's pixel bytes (the decoder's types).
func pix(img image.Image) []byte {
	switch m := img.(type) {
	case *image.Gray:
		return m.Pix
	case *image.RGBA:
		return m.Pix
	case *image.NRGBA:
		return m.Pix
	case *image.Paletted:
		return m.Pix
	}
	return nil
}
