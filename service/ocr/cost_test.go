package ocr_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/ocrgate/ocrgate/internal/hostile"
	"github.com/ocrgate/ocrgate/internal/testenv"
	"github.com/ocrgate/ocrgate/service/config"
	"github.com/ocrgate/ocrgate/service/engine"
	"github.com/ocrgate/ocrgate/service/memlimit"
)

// costChildEnv names the image a child process of BenchmarkCostModel measures.
const costChildEnv = "OCRGATE_COST_MODEL_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(costChildEnv); path != "" {
		os.Exit(costChild(path))
	}
	os.Exit(m.Run())
}

// costMeasure is what a child reports.
type costMeasure struct {
	Predicted int64  `json:"predicted"` // ocr.Options.Cost of the image's header
	Slack     int64  `json:"slack"`     // ocr.Options.ArenaSlack: what ONNX Runtime's arena may add
	Growth    int64  `json:"growth"`    // peak RSS during the run, less the RSS before it
	Err       string `json:"err,omitempty"`
}

// costChild runs the pipeline once on the image at path, in a process that has done nothing else
// (so ONNX Runtime's arenas start empty), and prints the predicted cost and the measured growth of
// the peak RSS.
func costChild(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg, err := config.Load(nil, os.Getenv, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	eng, err := engine.Embedded(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	p := eng.Pipeline
	var m costMeasure
	h, err := p.Inspect(context.Background(), data)
	if err != nil {
		m.Err = err.Error()
	} else {
		// The whole cost, the runtime's working memory included even where the service reserves
		// it up front (the shared arena), since this process's peak holds it too.
		opt := p.Options()
		opt.RuntimeMemory.Reserved = false
		m.Predicted = opt.Cost(h)
		m.Slack = opt.ArenaSlack(h.UprightSize())
	}
	// The cost model counts live memory. Garbage the collector has not yet reclaimed is bounded
	// by the Go memory limit in the service; here the collector runs at 10 % growth so that the
	// peak RSS measures what was live, within 10 %.
	debug.SetGCPercent(10)
	runtime.GC()
	debug.FreeOSMemory()
	// Writing 5 to clear_refs resets the peak RSS (VmHWM) to the current RSS.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		fmt.Fprintln(os.Stderr, "cannot reset the peak RSS:", err)
		return 2
	}
	before := memlimit.RSS()
	if _, err := p.Run(context.Background(), data); err != nil && m.Err == "" {
		m.Err = err.Error()
	}
	m.Growth = memlimit.PeakRSS() - before
	json.NewEncoder(os.Stdout).Encode(m)
	return 0
}

// costImages are the images the cost model is checked on: receipts (phone photos and a
// 35-megapixel A4 scan, from testdata/receipts), the same receipt as 16-bit RGBA PNG and turned by
// EXIF, and the heavy hostile-but-legal files: a progressive JPEG of 60 scans, a progressive header
// whose data is cut short (image/jpeg allocates everything first), and a PNG bomb within the pixel
// limit.
func costImages(b *testing.B) map[string][]byte {
	read := func(id string) []byte { return testenv.Receipt(b, id) }
	photo := read("dense")
	src, err := jpeg.Decode(bytes.NewReader(photo))
	if err != nil {
		b.Fatal(err)
	}
	wide := image.NewNRGBA64(src.Bounds())
	draw.Draw(wide, wide.Bounds(), src, src.Bounds().Min, draw.Src)
	var png16 bytes.Buffer
	if err := png.Encode(&png16, wide); err != nil {
		b.Fatal(err)
	}
	return map[string][]byte{
		"photo 470×940 (photo)":              read("photo"),
		"photo 1080×1527 (dense)":            photo,
		"A4 scan 4961×7016 (a4scan)":         read("a4scan"),
		"dense as 16-bit RGBA PNG":           png16.Bytes(),
		"dense turned 90° by EXIF":           withOrientation(b, photo, 6),
		"progressive 6000², 60 scans":        hostile.ScanBomb(6000, 6000, 60),
		"progressive 4:4:4 4000², cut short": hostile.HugeProgressive(4000, 4000),
		"16-bit PNG bomb 5000²":              hostile.PNG16Bomb(5000, 5000, 5000),
	}
}

// BenchmarkCostModel checks the cost model against measurement: each image runs in a fresh
// process, and the growth of its peak RSS must stay within the cost admission charges for it,
// plus what ONNX Runtime's default arena keeps of a first detection pass (ArenaSlack). It reports
// both, and their ratio, per image.
//
//	go test -run x -bench CostModel -benchtime 1x ./service/ocr/
func BenchmarkCostModel(b *testing.B) {
	dir := b.TempDir()
	for name, data := range costImages(b) {
		path := filepath.Join(dir, fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(name))))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			var m costMeasure
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), costChildEnv+"="+path)
				cmd.Stderr = os.Stderr
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("child: %v", err)
				}
				if err := json.Unmarshal(out, &m); err != nil {
					b.Fatalf("child said %q: %v", out, err)
				}
			}
			b.ReportMetric(float64(m.Predicted)/(1<<20), "predicted-MiB")
			b.ReportMetric(float64(m.Growth)/(1<<20), "measured-MiB")
			b.ReportMetric(float64(m.Growth)/float64(m.Predicted), "measured/predicted")
			b.ReportMetric(float64(m.Slack)/(1<<20), "arena-slack-MiB")
			if m.Growth > m.Predicted+m.Slack {
				b.Errorf("peak RSS grew %d MiB, more than the %d MiB predicted and %d MiB the arena may keep (%s)",
					m.Growth>>20, m.Predicted>>20, m.Slack>>20, m.Err)
			}
		})
	}
}

// withOrientation adds an EXIF APP1 segment with the given orientation after a JPEG's SOI.
func withOrientation(b *testing.B, data []byte, o uint16) []byte {
	var tiff bytes.Buffer
	tiff.WriteString("II*\x00")
	binary.Write(&tiff, binary.LittleEndian, uint32(8)) // IFD0 right after the header
	binary.Write(&tiff, binary.LittleEndian, uint16(1)) // one entry
	binary.Write(&tiff, binary.LittleEndian, [4]uint16{0x0112, 3, 1, 0})
	binary.Write(&tiff, binary.LittleEndian, o)
	binary.Write(&tiff, binary.LittleEndian, [3]uint16{})
	payload := append([]byte("Exif\x00\x00"), tiff.Bytes()...)
	var out bytes.Buffer
	out.Write(data[:2])
	out.Write([]byte{0xFF, 0xE1})
	binary.Write(&out, binary.BigEndian, uint16(2+len(payload)))
	out.Write(payload)
	out.Write(data[2:])
	if len(out.Bytes()) < len(data) {
		b.Fatal("short")
	}
	return out.Bytes()
}
