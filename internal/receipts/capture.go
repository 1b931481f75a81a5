package receipts

import (
	"image"
	"math"
	"math/rand/v2"
)

// Capture is how the paper becomes the output image: a phone photo or a scanner's page.
type Capture struct {
	Seed          uint64
	Width, Height int // the output's size in pixels
	// The paper lies with its centre at Center (shares of the output's width and height), turned
	// by Angle degrees clockwise, Scale output pixels to a paper pixel (0: as large as fits the
	// output with a margin of 5 % each way). Keystone narrows its top edge by that share of its
	// width against its bottom one: a photo taken at a slant.
	Center   [2]float64
	Angle    float64
	Scale    float64
	Keystone float64
	// Bow lifts the middle of the paper's width by this many paper pixels against its edges (a
	// receipt curling across as it lies on a table): each printed row becomes a shallow arc.
	Bow float64
	// Colours, 0–255 RGB: the paper, the ink at full coverage, and what lies behind the paper.
	Paper, Ink, Background [3]float64
	// Texture is the amplitude of the background's grain (a table's wood, a scanner lid's foam).
	Texture float64
	// EdgeShadow darkens the background next to the paper's edge by this share, fading over
	// EdgeWidth output pixels: the paper's shadow on a table, or a scanner lamp's on the glass.
	EdgeShadow, EdgeWidth float64
	Light                 Light
	// Blur is the capture's softness, a Gaussian's sigma in output pixels (focus, motion, a
	// scanner's optics); Noise the sensor's, a Gaussian's sigma in 0–255 levels per channel.
	Blur, Noise float64
}

// Light is uneven lighting: a multiplier of every colour over the output, 1 where nothing
// changes. Positions are shares of the output's width and height, from its centre.
type Light struct {
	Level    float64    // the multiplier at the centre (0 means 1)
	Gradient [2]float64 // added per unit of x and of y: a lamp to one side
	Vignette float64    // subtracted at the corners, growing with the square of the distance
	// Shadow darkens one side of a soft line (a hand's or a phone's shadow): the points p with
	// p·(cos Angle, sin Angle) < Offset lose Depth, over a transition of Softness.
	Shadow struct{ Angle, Offset, Softness, Depth float64 }
}

func (l Light) at(u, v float64) float64 {
	level := l.Level
	if level == 0 {
		level = 1
	}
	u, v = u-0.5, v-0.5
	f := level + l.Gradient[0]*u + l.Gradient[1]*v - l.Vignette*4*(u*u+v*v)
	if s := l.Shadow; s.Depth > 0 {
		d := (u*math.Cos(s.Angle) + v*math.Sin(s.Angle) - s.Offset) / math.Max(s.Softness, 1e-6)
		f -= s.Depth / (1 + math.Exp(4*d))
	}
	return f
}

// mapping takes paper pixels to output pixels: the bow, then a homography.
type mapping struct {
	h, inv     [9]float64
	width, bow float64 // the paper's width, and the bow's height
}

func (m mapping) forward(x, y float64) (float64, float64) {
	u := 2*x/m.width - 1
	y -= m.bow * (1 - u*u)
	return project(m.h, x, y)
}

func (m mapping) backward(x, y float64) (float64, float64) {
	px, py := project(m.inv, x, y)
	u := 2*px/m.width - 1
	return px, py + m.bow*(1-u*u)
}

func project(h [9]float64, x, y float64) (float64, float64) {
	w := h[6]*x + h[7]*y + h[8]
	return (h[0]*x + h[1]*y + h[2]) / w, (h[3]*x + h[4]*y + h[5]) / w
}

// homography is the projective map taking each src point to its dst point.
func homography(src, dst [4][2]float64) [9]float64 {
	var a [8][9]float64
	for i := range 4 {
		x, y, u, v := src[i][0], src[i][1], dst[i][0], dst[i][1]
		a[2*i] = [9]float64{x, y, 1, 0, 0, 0, -u * x, -u * y, u}
		a[2*i+1] = [9]float64{0, 0, 0, x, y, 1, -v * x, -v * y, v}
	}
	for c := range 8 { // Gauss-Jordan with partial pivoting
		p := c
		for r := c + 1; r < 8; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		for r := range 8 {
			if r != c {
				f := a[r][c] / a[c][c]
				for k := c; k < 9; k++ {
					a[r][k] -= f * a[c][k]
				}
			}
		}
	}
	var h [9]float64
	for i := range 8 {
		h[i] = a[i][8] / a[i][i]
	}
	h[8] = 1
	return h
}

func invert(h [9]float64) [9]float64 {
	a, b, c, d, e, f, g, k, l := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]
	det := a*(e*l-f*k) - b*(d*l-f*g) + c*(d*k-e*g)
	return [9]float64{
		(e*l - f*k) / det, (c*k - b*l) / det, (b*f - c*e) / det,
		(f*g - d*l) / det, (a*l - c*g) / det, (c*d - a*f) / det,
		(d*k - e*g) / det, (b*g - a*k) / det, (a*e - b*d) / det,
	}
}

// capture draws the paper into a new output image and returns it with the mapping it used.
func (c Capture) capture(p *Paper) (*image.RGBA, mapping) {
	pw, ph := float64(p.Ink.Rect.Dx()), float64(p.Ink.Rect.Dy())
	scale := c.Scale
	if scale == 0 {
		scale = 0.9 * math.Min(float64(c.Width)/pw, float64(c.Height)/ph)
	}
	sin, cos := math.Sincos(c.Angle * math.Pi / 180)
	var dst [4][2]float64
	for i, k := range [4][2]float64{{-0.5, -0.5}, {0.5, -0.5}, {0.5, 0.5}, {-0.5, 0.5}} {
		x, y := k[0]*pw*scale, k[1]*ph*scale
		if k[1] < 0 {
			x *= 1 - c.Keystone
		}
		dst[i] = [2]float64{c.Center[0]*float64(c.Width) + x*cos - y*sin, c.Center[1]*float64(c.Height) + x*sin + y*cos}
	}
	h := homography([4][2]float64{{0, 0}, {pw, 0}, {pw, ph}, {0, ph}}, dst)
	m := mapping{h: h, inv: invert(h), width: pw, bow: c.Bow}

	rng := rand.New(rand.NewPCG(c.Seed, 0xca97))
	out := image.NewRGBA(image.Rect(0, 0, c.Width, c.Height))
	grainPhase := rng.Float64() * 100
	for y := range c.Height {
		row := out.Pix[y*out.Stride : y*out.Stride+4*c.Width]
		for x := range c.Width {
			px, py := m.backward(float64(x)+0.5, float64(y)+0.5)
			var col [3]float64
			if px >= 0 && py >= 0 && px < pw && py < ph {
				a := sample(p.Ink, px-0.5, py-0.5)
				for i := range col {
					col[i] = c.Paper[i]*(1-a) + c.Ink[i]*a
				}
			} else {
				grain := c.Texture * (math.Sin(0.021*float64(y)+3*math.Sin(0.004*float64(x)+grainPhase)) + 0.5*math.Sin(0.13*float64(y)+0.7*math.Sin(0.05*float64(x))))
				dx := math.Max(math.Max(-px, px-pw), 0)
				dy := math.Max(math.Max(-py, py-ph), 0)
				shade := 1.0
				if c.EdgeWidth > 0 {
					shade -= c.EdgeShadow * math.Exp(-math.Hypot(dx, dy)*scale/c.EdgeWidth)
				}
				for i := range col {
					col[i] = (c.Background[i] + grain) * shade
				}
			}
			light := c.Light.at((float64(x)+0.5)/float64(c.Width), (float64(y)+0.5)/float64(c.Height))
			for i := range col {
				row[4*x+i] = clamp8(col[i] * light)
			}
			row[4*x+3] = 255
		}
	}
	if c.Blur > 0 {
		blur(out, c.Blur)
	}
	if c.Noise > 0 {
		for i := 0; i < len(out.Pix); i += 4 {
			luma := rng.NormFloat64() * c.Noise
			for k := range 3 {
				out.Pix[i+k] = clamp8(float64(out.Pix[i+k]) + luma + 0.4*c.Noise*rng.NormFloat64())
			}
		}
	}
	return out, m
}

// sample is the ink's coverage at (x, y) in [0, 1], interpolated between pixel centres.
func sample(a *image.Alpha, x, y float64) float64 {
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := x-x0, y-y0
	at := func(xi, yi int) float64 {
		if xi < 0 || yi < 0 || xi >= a.Rect.Dx() || yi >= a.Rect.Dy() {
			return 0
		}
		return float64(a.Pix[yi*a.Stride+xi])
	}
	ix, iy := int(x0), int(y0)
	top := at(ix, iy)*(1-fx) + at(ix+1, iy)*fx
	bottom := at(ix, iy+1)*(1-fx) + at(ix+1, iy+1)*fx
	return (top*(1-fy) + bottom*fy) / 255
}

func clamp8(v float64) uint8 {
	return uint8(math.Round(math.Min(math.Max(v, 0), 255)))
}

// blur is a separable Gaussian blur of sigma pixels, in place, edges clamped.
func blur(img *image.RGBA, sigma float64) {
	r := int(math.Ceil(3 * sigma))
	k := make([]float64, 2*r+1)
	sum := 0.0
	for i := range k {
		d := float64(i - r)
		k[i] = math.Exp(-d * d / (2 * sigma * sigma))
		sum += k[i]
	}
	for i := range k {
		k[i] /= sum
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	pass := func(n, count int, at func(line, i int) int) {
		buf := make([]float64, 3*n)
		for line := range count {
			for i := range n {
				for ch := range 3 {
					v := 0.0
					for j, kv := range k {
						t := min(max(i+j-r, 0), n-1)
						v += kv * float64(img.Pix[at(line, t)+ch])
					}
					buf[3*i+ch] = v
				}
			}
			for i := range n {
				for ch := range 3 {
					img.Pix[at(line, i)+ch] = clamp8(buf[3*i+ch])
				}
			}
		}
	}
	pass(w, h, func(y, x int) int { return y*img.Stride + 4*x })
	pass(h, w, func(x, y int) int { return y*img.Stride + 4*x })
}
