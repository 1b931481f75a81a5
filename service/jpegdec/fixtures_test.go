package jpegdec

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var updateFixtures = flag.Bool("update-fixtures", false, "rewrite the cjpeg fixtures of testdata/ from fixturePicture (needs Debian's libjpeg-turbo-progs)")

// fixtureOptions are the cjpeg options of each fixture of testdata/ (see its README).
var fixtureOptions = []struct {
	file string
	args string
}{
	{"s444.jpg", "-quality 90 -sample 1x1"},
	{"s422.jpg", "-quality 90 -sample 2x1"},
	{"s440.jpg", "-quality 90 -sample 1x2"},
	{"s411.jpg", "-quality 90 -sample 4x1"},
	{"s410.jpg", "-quality 90 -sample 4x2"},
	{"s420_restart.jpg", "-quality 75 -sample 2x2 -restart 3B"},
	{"s420_restart_rows.jpg", "-quality 60 -sample 2x2 -restart 1"},
	{"gray_restart.jpg", "-quality 80 -grayscale -restart 5B"},
	{"q100_optimized.jpg", "-quality 100 -optimize"},
	{"progressive.jpg", "-quality 90 -progressive"},
	{"arithmetic.jpg", "-quality 90 -arithmetic"},
	{"rgb.jpg", "-quality 90 -rgb"},
}

// fixturePicture is the one picture every cjpeg fixture encodes: testPicture's gradients, strokes
// and noise at 67×45, so that some MCUs are partial at every sampling.
func fixturePicture() []byte {
	img := testPicture(67, 45, 7)
	var ppm bytes.Buffer
	fmt.Fprintf(&ppm, "P6\n%d %d\n255\n", 67, 45)
	for i := 0; i < len(img.Pix); i += 4 {
		ppm.Write(img.Pix[i : i+3])
	}
	return ppm.Bytes()
}

// TestFixturesAreOurs rewrites the fixtures with -update-fixtures (go test -run
// TestFixturesAreOurs -update-fixtures ./service/jpegdec/): each is cjpeg's encoding of
// fixturePicture with its options, so every file of testdata/ is written by this repository's
// own code. Without the flag it checks that every fixture has its row here, and that each decodes
// to the picture's size.
func TestFixturesAreOurs(t *testing.T) {
	if *updateFixtures {
		cjpeg, err := exec.LookPath("cjpeg")
		if err != nil {
			t.Fatal("cjpeg is not on the PATH: apt-get install libjpeg-turbo-progs")
		}
		src := filepath.Join(t.TempDir(), "picture.ppm")
		if err := os.WriteFile(src, fixturePicture(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, f := range fixtureOptions {
			args := append(strings.Fields(f.args), "-outfile", filepath.Join("testdata", f.file), src)
			if out, err := exec.Command(cjpeg, args...).CombinedOutput(); err != nil {
				t.Fatalf("cjpeg %s: %v: %s", f.args, err, out)
			}
		}
	}
	have, err := filepath.Glob(filepath.Join("testdata", "*.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, f := range fixtureOptions {
		listed[f.file] = true
	}
	for _, p := range have {
		if !listed[filepath.Base(p)] {
			t.Errorf("%s is not written by this test: add its cjpeg options to fixtureOptions", p)
		}
	}
	if len(have) != len(fixtureOptions) {
		t.Errorf("%d fixtures in testdata/, %d listed", len(have), len(fixtureOptions))
	}
}
