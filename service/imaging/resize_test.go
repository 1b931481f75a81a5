package imaging

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"
)

// opaque hides an image's concrete type, forcing the generic At() path.
type opaque struct{ image.Image }

var identity = Norm{Std: [3]float32{1, 1, 1}} // value = v/255

// paddle is PaddleOCR's detection normalization (ImageNet statistics on BGR input).
var paddle = Norm{Mean: [3]float32{0.485, 0.456, 0.406}, Std: [3]float32{0.229, 0.224, 0.225}, BGR: true}

func uniform(kind string, w, h int, c color.NRGBA) image.Image {
	r := image.Rect(0, 0, w, h)
	switch kind {
	case "rgba":
		img := image.NewRGBA(r)
		for y := range h {
			for x := range w {
				img.Set(x, y, c)
			}
		}
		return img
	case "nrgba":
		img := image.NewNRGBA(r)
		for y := range h {
			for x := range w {
				img.SetNRGBA(x, y, c)
			}
		}
		return img
	case "gray":
		img := image.NewGray(r)
		for y := range h {
			for x := range w {
				img.Set(x, y, c)
			}
		}
		return img
	case "paletted":
		img := image.NewPaletted(r, color.Palette{color.Black, c})
		for i := range img.Pix {
			img.Pix[i] = 1
		}
		return img
	case "rgba64":
		img := image.NewRGBA64(r)
		for y := range h {
			for x := range w {
				img.Set(x, y, c)
			}
		}
		return img
	}
	panic(kind)
}

// expectNorm is what Norm n makes of straight RGB in [0, 255], in tensor channel order.
func expectNorm(rgb [3]float64, n Norm) [3]float64 {
	var out [3]float64
	for s := range 3 {
		c := s
		if n.BGR {
			c = 2 - s
		}
		out[c] = (rgb[s]/255 - float64(n.Mean[c])) / float64(n.Std[c])
	}
	return out
}

func checkPlanes(t *testing.T, dst []float32, w, h int, want [3]float64, tol float64) {
	t.Helper()
	for c := range 3 {
		for i, v := range dst[c*w*h : (c+1)*w*h] {
			if math.Abs(float64(v)-want[c]) > tol {
				t.Fatalf("channel %d pixel (%d,%d) = %v, want %v", c, i%w, i/w, v, want[c])
			}
		}
	}
}

func TestResizeTensorConstant(t *testing.T) {
	col := color.NRGBA{200, 100, 50, 255}
	sizes := []struct{ sw, sh, w, h int }{
		{100, 80, 30, 20},   // area averaging
		{100, 80, 70, 60},   // bilinear downscale
		{100, 80, 250, 200}, // upscale
		{1, 1, 5, 3},
		{600, 400, 64, 64}, // large enough to run in parallel
	}
	for _, kind := range []string{"rgba", "nrgba", "gray", "paletted", "rgba64", "ycbcr"} {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d-%dx%d", kind, sz.sw, sz.sh, sz.w, sz.h), func(t *testing.T) {
				var src image.Image
				var rgb [3]float64
				tol := 1e-4
				switch kind {
				case "ycbcr":
					img := image.NewYCbCr(image.Rect(0, 0, sz.sw, sz.sh), image.YCbCrSubsampleRatio420)
					for i := range img.Y {
						img.Y[i] = 150
					}
					for i := range img.Cb {
						img.Cb[i], img.Cr[i] = 100, 180
					}
					src = img
					// The JFIF formula.
					rgb = [3]float64{150 + 1.402*52, 150 - 0.344136*-28 - 0.714136*52, 150 + 1.772*-28}
					tol = 0.2 / 255
				case "gray":
					src = uniform(kind, sz.sw, sz.sh, col)
					g := float64(color.GrayModel.Convert(col).(color.Gray).Y)
					rgb = [3]float64{g, g, g}
				default:
					src = uniform(kind, sz.sw, sz.sh, col)
					rgb = [3]float64{200, 100, 50}
				}
				for _, n := range []Norm{identity, paddle} {
					dst := make([]float32, 3*sz.w*sz.h)
					ResizeTensor(dst, src, sz.w, sz.h, n)
					checkPlanes(t, dst, sz.w, sz.h, expectNorm(rgb, n), tol*4.5) // 4.5 ≈ 1/std
				}
			})
		}
	}
}

func TestResizeTensorTransparency(t *testing.T) {
	tests := []struct {
		name string
		src  image.Image
		want float64 // the gray level every channel should have
	}{
		{"transparent nrgba", uniform("nrgba", 20, 20, color.NRGBA{0, 0, 0, 0}), 255},
		{"half-transparent black nrgba", uniform("nrgba", 20, 20, color.NRGBA{0, 0, 0, 128}), 127},
		{"transparent rgba", image.NewRGBA(image.Rect(0, 0, 20, 20)), 255},
		{"half-transparent black rgba", uniform("rgba", 20, 20, color.NRGBA{0, 0, 0, 128}), 127},
		{"transparent generic", opaque{image.NewRGBA(image.Rect(0, 0, 20, 20))}, 255},
		{"transparent paletted", uniform("paletted", 20, 20, color.NRGBA{}), 255},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]float32, 3*10*10)
			ResizeTensor(dst, tt.src, 10, 10, identity)
			checkPlanes(t, dst, 10, 10, [3]float64{tt.want / 255, tt.want / 255, tt.want / 255}, 0.6/255)
		})
	}
}

func TestResizeTensorChannelOrder(t *testing.T) {
	blue := uniform("rgba", 8, 8, color.NRGBA{0, 0, 255, 255})
	n := Norm{Mean: [3]float32{0.1, 0.2, 0.3}, Std: [3]float32{0.5, 0.25, 1}}
	tests := []struct {
		bgr  bool
		want [3]float64
	}{
		{true, [3]float64{(1 - 0.1) / 0.5, (0 - 0.2) / 0.25, (0 - 0.3) / 1}}, // blue first
		{false, [3]float64{(0 - 0.1) / 0.5, (0 - 0.2) / 0.25, (1 - 0.3) / 1}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("bgr=%v", tt.bgr), func(t *testing.T) {
			n.BGR = tt.bgr
			dst := make([]float32, 3*4*4)
			ResizeTensor(dst, blue, 4, 4, n)
			checkPlanes(t, dst, 4, 4, tt.want, 1e-5)
		})
	}
}

func checkerboard(n, cell int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, n, n))
	for y := range n {
		for x := range n {
			if (x/cell+y/cell)%2 == 0 {
				img.Pix[y*img.Stride+x] = 255
			}
		}
	}
	return img
}

func TestResizeTensorAverages(t *testing.T) {
	tests := []struct {
		name string
		src  image.Image
		w, h int
	}{
		{"2x checkerboard", checkerboard(64, 1), 32, 32},
		{"4x checkerboard", checkerboard(64, 1), 16, 16},
		{"8x checkerboard of 2px cells", checkerboard(64, 2), 8, 8},
		{"2x then 4x", checkerboard(64, 1), 32, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]float32, 3*tt.w*tt.h)
			ResizeTensor(dst, tt.src, tt.w, tt.h, identity)
			checkPlanes(t, dst, tt.w, tt.h, [3]float64{0.5, 0.5, 0.5}, 1e-5)
		})
	}
}

// TestResizeTensorMatchesOpenCV checks the bilinear weights against values cv2.resize(INTER_LINEAR)
// gives (half-pixel centers, clamped edges).
func TestResizeTensorMatchesOpenCV(t *testing.T) {
	row := func(vals ...uint8) *image.Gray {
		img := image.NewGray(image.Rect(0, 0, len(vals), 1))
		copy(img.Pix, vals)
		return img
	}
	tests := []struct {
		name string
		src  *image.Gray
		want []float64
	}{
		{"upscale 2 to 4", row(0, 100), []float64{0, 25, 75, 100}},
		{"downscale 4 to 3", row(0, 30, 60, 90), []float64{5, 45, 85}},
		{"upscale 3 to 5", row(0, 50, 250), []float64{0, 20, 50, 170, 250}},
		{"identity", row(7, 8, 9), []float64{7, 8, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := len(tt.want)
			dst := make([]float32, 3*w)
			ResizeTensor(dst, tt.src, w, 1, identity)
			for i, want := range tt.want {
				if got := float64(dst[i]) * 255; math.Abs(got-want) > 1e-3 {
					t.Errorf("pixel %d = %v, want %v (all %v)", i, got, want, dst[:w])
				}
			}
		})
	}
}

func randomYCbCr(rng *rand.Rand, r image.Rectangle, ratio image.YCbCrSubsampleRatio) *image.YCbCr {
	img := image.NewYCbCr(r, ratio)
	for i := range img.Y {
		img.Y[i] = uint8(rng.IntN(256))
	}
	for i := range img.Cb {
		img.Cb[i], img.Cr[i] = uint8(rng.IntN(256)), uint8(rng.IntN(256))
	}
	return img
}

func randomNRGBA(rng *rand.Rand, w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.IntN(256))
	}
	return img
}

// fastPathImages are images of every type with a fast path, with random pixels, odd sizes and
// (for YCbCr) every subsampling and a sub-image that starts at odd coordinates.
func fastPathImages() map[string]image.Image {
	rng := rand.New(rand.NewPCG(1, 2))
	imgs := map[string]image.Image{}
	for _, ratio := range []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	} {
		imgs["ycbcr "+ratio.String()] = randomYCbCr(rng, image.Rect(0, 0, 97, 61), ratio)
	}
	big := randomYCbCr(rng, image.Rect(0, 0, 120, 90), image.YCbCrSubsampleRatio420)
	imgs["ycbcr sub-image"] = big.SubImage(image.Rect(3, 5, 100, 66))
	nrgba := randomNRGBA(rng, 97, 61)
	imgs["nrgba"] = nrgba
	rgba := image.NewRGBA(nrgba.Bounds())
	for y := range 61 {
		for x := range 97 {
			rgba.Set(x, y, nrgba.At(x, y))
		}
	}
	imgs["rgba"] = rgba
	gray := image.NewGray(nrgba.Bounds())
	copy(gray.Pix, nrgba.Pix)
	imgs["gray"] = gray
	pal := image.NewPaletted(nrgba.Bounds(), color.Palette{color.Black, color.White, color.NRGBA{200, 10, 30, 128}, color.Transparent})
	for i := range pal.Pix {
		pal.Pix[i] = uint8(rng.IntN(4))
	}
	imgs["paletted"] = pal
	return imgs
}

func TestResizeTensorFastPathsMatchGeneric(t *testing.T) {
	sizes := [][2]int{{40, 30}, {60, 50}, {150, 90}, {97, 61}, {20, 61}}
	for name, img := range fastPathImages() {
		if _, ok := img.(*image.YCbCr); ok {
			continue // resampled plane by plane: TestResizeTensorYCbCr and TestResizeTensorChromaSiting
		}
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", name, sz[0], sz[1]), func(t *testing.T) {
				w, h := sz[0], sz[1]
				fast, slow := make([]float32, 3*w*h), make([]float32, 3*w*h)
				ResizeTensor(fast, img, w, h, identity)
				ResizeTensor(slow, opaque{img}, w, h, identity)
				for i := range fast {
					if d := math.Abs(float64(fast[i] - slow[i])); d > 1.0/255 {
						t.Fatalf("element %d: fast %v, generic %v (%.2f levels apart)", i, fast[i], slow[i], d*255)
					}
				}
			})
		}
	}
}

// TestResizeTensorYCbCr checks the plane-by-plane path against the RGB one: a photo-like image
// (smooth colours, sharp edges, all in gamut) resized as 4:4:4 YCbCr must give what the same
// pixels give as NRGBA, within the rounding of the colour conversion.
func TestResizeTensorYCbCr(t *testing.T) {
	const sw, sh = 97, 61
	rgb := image.NewNRGBA(image.Rect(0, 0, sw, sh))
	ycc := image.NewYCbCr(rgb.Rect, image.YCbCrSubsampleRatio444)
	for y := range sh {
		for x := range sw {
			c := color.NRGBA{uint8(40 + 2*x), uint8(200 - 3*y), uint8(90 + x + y), 255}
			if (x/9+y/7)%3 == 0 { // dark "ink" with sharp edges
				c = color.NRGBA{20, 25, 30, 255}
			}
			yy, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
			ycc.Y[ycc.YOffset(x, y)], ycc.Cb[ycc.COffset(x, y)], ycc.Cr[ycc.COffset(x, y)] = yy, cb, cr
			// The reference holds the colour the YCbCr pixel really is, so only resampling differs.
			r, g, b := color.YCbCrToRGB(yy, cb, cr)
			rgb.SetNRGBA(x, y, color.NRGBA{r, g, b, 255})
		}
	}
	for _, sz := range [][2]int{{40, 30}, {60, 50}, {150, 90}, {97, 61}, {20, 61}, {33, 7}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			w, h := sz[0], sz[1]
			for _, n := range []Norm{identity, paddle} {
				got, want := make([]float32, 3*w*h), make([]float32, 3*w*h)
				ResizeTensor(got, ycc, w, h, n)
				ResizeTensor(want, rgb, w, h, n)
				for i := range got {
					// One level, in the normalized units of the channel (1/std ≤ 4.5).
					if d := math.Abs(float64(got[i] - want[i])); d > 4.5/255 {
						t.Fatalf("element %d: YCbCr %v, RGB %v", i, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestResizeTensorChromaSiting checks where chroma samples sit: JFIF centres each one on the luma
// pixels it covers. With chroma planes that are linear ramps, the resampled chroma at every output
// pixel away from the edges is the ramp's value at that pixel's centre, for every subsampling, for
// upscaling, bilinear and area downscaling, and for a sub-image that starts inside a chroma sample.
func TestResizeTensorChromaSiting(t *testing.T) {
	ratios := []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	}
	for _, ratio := range ratios {
		img := image.NewYCbCr(image.Rect(0, 0, 96, 64), ratio)
		src := newYCbCrSource(img)
		for i := range img.Y {
			img.Y[i] = 128
		}
		// Sample (k, l) of the chroma planes holds Cb = 80+k and Cr = 100+l: the linear functions
		// cb(u) = 79.5+u and cr(v) = 99.5+v of its centre (k+½, l+½), in chroma units, whole at
		// every sample and in gamut.
		fx, fy := float64(int(1)<<src.xs), float64(int(1)<<src.ys)
		cw := (96 + 1<<src.xs - 1) >> src.xs
		for l := range len(img.Cb) / img.CStride {
			for k := range cw {
				img.Cb[l*img.CStride+k] = uint8(80 + k)
				img.Cr[l*img.CStride+k] = uint8(100 + l)
			}
		}
		for _, sub := range []image.Rectangle{img.Rect, image.Rect(5, 3, 91, 61)} {
			part := img.SubImage(sub).(*image.YCbCr)
			for _, sz := range [][2]int{{200, 150}, {70, 50}, {23, 17}} {
				t.Run(fmt.Sprintf("%s/%v/%dx%d", ratio, sub, sz[0], sz[1]), func(t *testing.T) {
					w, h := sz[0], sz[1]
					dst := make([]float32, 3*w*h)
					ResizeTensor(dst, part, w, h, identity)
					sx, sy := float64(sub.Dx())/float64(w), float64(sub.Dy())/float64(h)
					checked := 0
					for j := range h {
						for i := range w {
							// The output pixel's centre in the image's luma coordinates.
							x, y := float64(sub.Min.X)+(float64(i)+0.5)*sx, float64(sub.Min.Y)+(float64(j)+0.5)*sy
							if x < float64(sub.Min.X)+2*fx+sx || x > float64(sub.Max.X)-2*fx-sx ||
								y < float64(sub.Min.Y)+2*fy+sy || y > float64(sub.Max.Y)-2*fy-sy {
								continue // edge samples are clamped, not extrapolated
							}
							checked++
							cb1, cr1 := 79.5+x/fx-128, 99.5+y/fy-128
							want := [3]float64{128 + 1.402*cr1, 128 - 0.344136*cb1 - 0.714136*cr1, 128 + 1.772*cb1}
							for c := range 3 {
								// Area averaging weighs whole samples, so it is off the ramp by a
								// few hundredths of a level; misplaced samples are off by tenths.
								if got := float64(dst[c*w*h+j*w+i]) * 255; math.Abs(got-want[c]) > 0.1 {
									t.Fatalf("pixel (%d, %d) channel %d: %.3f, want %.3f", i, j, c, got, want[c])
								}
							}
						}
					}
					if checked == 0 {
						t.Fatal("no pixel away from the edges")
					}
				})
			}
		}
	}
}

// TestPalettedIndexPastPalette checks that an index with no palette entry reads as white (nothing)
// instead of panicking as image.Paletted.At does.
func TestPalettedIndexPastPalette(t *testing.T) {
	img := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black})
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	dst := make([]float32, 3*2*2)
	ResizeTensor(dst, img, 2, 2, identity)
	checkPlanes(t, dst, 2, 2, [3]float64{1, 1, 1}, 1e-6)
	out := Warp(img, rect(0, 0, 4, 4), 2, 2)
	checkPixel(t, out, 1, 1, [3]float64{255, 255, 255}, 0)
}

func TestResizeTensorSubImage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	big := randomNRGBA(rng, 50, 40)
	sub := big.SubImage(image.Rect(7, 9, 37, 29)).(*image.NRGBA)
	moved := image.NewNRGBA(image.Rect(0, 0, 30, 20))
	for y := range 20 {
		copy(moved.Pix[y*moved.Stride:], sub.Pix[y*sub.Stride:y*sub.Stride+30*4])
	}
	a, b := make([]float32, 3*13*11), make([]float32, 3*13*11)
	ResizeTensor(a, sub, 13, 11, paddle)
	ResizeTensor(b, moved, 13, 11, paddle)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("element %d: sub-image %v, copy at origin %v", i, a[i], b[i])
		}
	}
}

func TestResizeTensorShortDstPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a tensor too short")
		}
	}()
	ResizeTensor(make([]float32, 10), image.NewGray(image.Rect(0, 0, 4, 4)), 4, 4, identity)
}

func TestFilterWeights(t *testing.T) {
	for _, tt := range [][2]int{{10, 3}, {4961, 1824}, {7016, 2560}, {7, 7}, {3, 10}, {100, 51}, {100, 49}, {1, 5}, {5, 1}, {2, 1}} {
		t.Run(fmt.Sprintf("%d-%d", tt[0], tt[1]), func(t *testing.T) {
			f := makeFilter(tt[0], tt[1])
			for i := range tt[1] {
				s, c := int(f.start[i]), int(f.count[i])
				if s < 0 || s+c > tt[0] || c < 1 || c > f.width {
					t.Fatalf("output %d: taps [%d, %d+%d) outside source of %d", i, s, s, c, tt[0])
				}
				var sum float64
				for _, w := range f.wts[i*f.width : i*f.width+c] {
					if w < 0 {
						t.Fatalf("output %d: negative weight %v", i, w)
					}
					sum += float64(w)
				}
				if math.Abs(sum-1) > 1e-5 {
					t.Fatalf("output %d: weights sum to %v", i, sum)
				}
			}
		})
	}
}

func TestTensorInto(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	for y := range 2 {
		for x := range 3 {
			img.SetRGBA(x, y, color.RGBA{uint8(10 * x), uint8(100 + y), 250, 255})
		}
	}
	img.SetRGBA(2, 1, color.RGBA{}) // transparent: white
	n := Norm{Mean: [3]float32{0.5, 0.5, 0.5}, Std: [3]float32{0.5, 0.5, 0.5}, BGR: true}
	norm := func(v float64) float32 { return float32((v/255 - 0.5) / 0.5) }
	tests := []struct {
		name string
		W    int
	}{{"padded", 5}, {"exact", 3}, {"cut", 2}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]float32, 3*2*tt.W)
			for i := range dst {
				dst[i] = 42 // must all be overwritten
			}
			TensorInto(dst, img, tt.W, n)
			for c := range 3 {
				for y := range 2 {
					for x := range tt.W {
						got := dst[c*2*tt.W+y*tt.W+x]
						var want float32
						if x < 3 {
							rgb := [3]float64{float64(10 * x), float64(100 + y), 250}
							if x == 2 && y == 1 {
								rgb = [3]float64{255, 255, 255}
							}
							want = norm(rgb[2-c]) // BGR: channel 0 is blue
						}
						if math.Abs(float64(got-want)) > 1e-6 {
							t.Errorf("channel %d (%d,%d) = %v, want %v", c, x, y, got, want)
						}
					}
				}
			}
		})
	}
}

func TestResizeWidth(t *testing.T) {
	row := func(vals ...uint8) *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, len(vals), 2))
		for y := range 2 {
			for x, v := range vals {
				img.SetRGBA(x, y, color.RGBA{v, v, v, 255})
			}
		}
		return img
	}
	tests := []struct {
		name string
		src  *image.RGBA
		want []uint8
	}{
		{"halve", row(0, 0, 255, 255), []uint8{0, 255}},
		{"double", row(0, 255), []uint8{0, 64, 191, 255}},
		{"quarter averages", row(0, 255, 0, 255, 255, 255, 255, 255), []uint8{128, 255}},
		{"same", row(1, 2, 3), []uint8{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := ResizeWidth(tt.src, len(tt.want))
			if out.Bounds() != image.Rect(0, 0, len(tt.want), 2) {
				t.Fatalf("bounds %v", out.Bounds())
			}
			for y := range 2 {
				for x, want := range tt.want {
					if c := out.RGBAAt(x, y); c != (color.RGBA{want, want, want, 255}) {
						t.Errorf("(%d,%d) = %v, want gray %d", x, y, c, want)
					}
				}
			}
		})
	}
	if out := ResizeWidth(row(1, 2), 0); out.Bounds().Dx() != 0 {
		t.Errorf("width 0 gave %v", out.Bounds())
	}
}

// FuzzResizeYCbCr resizes YCbCr images of every subsampling, size and sub-image offset to any
// size: the plane-by-plane path must neither read outside its planes nor write a value outside
// the normalized range of [0, 255].
func FuzzResizeYCbCr(f *testing.F) {
	f.Add(uint8(0), uint16(97), uint16(61), uint16(3), uint16(5), uint16(40), uint16(30), uint64(1))
	f.Add(uint8(4), uint16(1), uint16(1), uint16(0), uint16(0), uint16(7), uint16(3), uint64(2))
	f.Add(uint8(5), uint16(9), uint16(300), uint16(7), uint16(1), uint16(2), uint16(1), uint64(3))
	ratios := []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	}
	f.Fuzz(func(t *testing.T, ratio uint8, sw, sh, x0, y0, w, h uint16, seed uint64) {
		sw, sh = sw%400+1, sh%400+1
		x0, y0 = x0%sw, y0%sh
		w, h = w%300+1, h%300+1
		img := randomYCbCr(rand.New(rand.NewPCG(seed, 7)), image.Rect(0, 0, int(sw), int(sh)), ratios[int(ratio)%len(ratios)])
		sub := img.SubImage(image.Rect(int(x0), int(y0), int(sw), int(sh)))
		dst := make([]float32, 3*int(w)*int(h))
		ResizeTensor(dst, sub, int(w), int(h), paddle)
		_, scale, bias := paddle.affine()
		for i, v := range dst {
			c := i / (int(w) * int(h)) // tensor channel; paddle is BGR, so RGB channel 2-c
			lo, hi := bias[2-c], 255*scale[2-c]+bias[2-c]
			if !(v >= lo-1e-5 && v <= hi+1e-5) {
				t.Fatalf("element %d = %v, outside [%v, %v]", i, v, lo, hi)
			}
		}
	})
}

// resizeWidthReference is ResizeWidth as first written: every channel, alpha included, filtered
// the same way for any image. The faster opaque path must give exactly its bytes.
func resizeWidthReference(img *image.RGBA, w int) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, w, b.Dy()))
	f := makeFilter(b.Dx(), w)
	for y := range b.Dy() {
		src := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		dst := out.Pix[y*out.Stride : y*out.Stride+4*w]
		for i := range w {
			s, c := 4*int(f.start[i]), int(f.count[i])
			var acc [4]float32
			for k, wk := range f.wts[i*f.width : i*f.width+c] {
				for ch := range 4 {
					acc[ch] += wk * float32(src[s+4*k+ch])
				}
			}
			for ch := range 4 {
				dst[4*i+ch] = uint8(min(max(acc[ch]+0.5, 0), 255))
			}
			dst[4*i], dst[4*i+1], dst[4*i+2] = min(dst[4*i], dst[4*i+3]), min(dst[4*i+1], dst[4*i+3]), min(dst[4*i+2], dst[4*i+3])
		}
	}
	return out
}

// TestResizeWidthMatchesReference checks ResizeWidth byte for byte against the plain filter on
// random crops, opaque and translucent, shrunk and enlarged, with and without a sub-image offset.
func TestResizeWidthMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tt := range []struct {
		name      string
		w, h, out int
		opaque    bool
	}{
		{"classifier squeeze", 800, 48, 192, true},
		{"barely narrower", 250, 48, 192, true},
		{"enlarged", 90, 48, 192, true},
		{"translucent squeeze", 700, 12, 192, false},
		{"translucent enlarge", 40, 12, 100, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			img := image.NewRGBA(image.Rect(0, 0, tt.w+3, tt.h+2))
			for i := 0; i < len(img.Pix); i += 4 {
				a := uint8(255)
				if !tt.opaque {
					a = uint8(rng.IntN(256))
				}
				img.Pix[i+3] = a
				for c := range 3 {
					img.Pix[i+c] = uint8(rng.IntN(int(a) + 1)) // premultiplied: never above alpha
				}
			}
			sub := img.SubImage(image.Rect(3, 2, tt.w+3, tt.h+2)).(*image.RGBA)
			got, want := ResizeWidth(sub, tt.out), resizeWidthReference(sub, tt.out)
			if !bytes.Equal(got.Pix, want.Pix) {
				t.Fatal("ResizeWidth differs from the reference filter")
			}
		})
	}
}
