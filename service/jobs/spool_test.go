package jobs

import (
	"bytes"
	"crypto/rand"
	"os"
	"testing"
)

// TestSpill: a document spilled to the spool reads back byte for byte from its mapping, leaves no
// file in the directory (it is unlinked at once), and survives Release; an empty one maps to
// nothing.
func TestSpill(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4096, 3<<20 + 17} {
		want := make([]byte, n)
		_, _ = rand.Read(want)
		d, err := spill(dir, bytes.NewReader(want))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%d bytes: %d files left in the spool", n, len(entries))
		}
		if d.Size() != int64(n) || !bytes.Equal(d.Bytes(), want) {
			t.Errorf("%d bytes: the mapping holds %d bytes, or others", n, d.Size())
		}
		d.Release()
		if !bytes.Equal(d.Bytes(), want) {
			t.Errorf("%d bytes: the mapping changed after Release", n)
		}
		if err := d.Close(); err != nil {
			t.Errorf("%d bytes: close: %v", n, err)
		}
	}
}
