package jpegdec

import (
	"encoding/binary"
	"math"
)

// The inverse DCT is the Loeffler–Ligtenberg–Moschytz factorization in fixed point (12
// multiplications per 8-point pass), the accurate integer transform JPEG decoders have used since
// the 1990s: 13 fraction bits in the constants, 2 extra bits kept between the column and row pass.
// The arithmetic is 64-bit, as fast as 32-bit on the machines we target, so no coefficient the
// entropy decoder lets through can overflow it.
const (
	constBits = 13
	pass1Bits = 2
)

// fix returns x in constBits fixed point.
func fix(x float64) int { return int(x*(1<<constBits) + 0.5) }

var (
	fix0298631336 = fix(0.298631336)
	fix0390180644 = fix(0.390180644)
	fix0541196100 = fix(0.541196100)
	fix0765366865 = fix(0.765366865)
	fix0899976223 = fix(0.899976223)
	fix1175875602 = fix(1.175875602)
	fix1501321110 = fix(1.501321110)
	fix1847759065 = fix(1.847759065)
	fix1961570560 = fix(1.961570560)
	fix2053119869 = fix(2.053119869)
	fix2562915447 = fix(2.562915447)
	fix3072711026 = fix(3.072711026)
)

// descale divides by 2^n, rounding half up.
func descale(x int, n uint) int { return (x + 1<<(n-1)) >> n }

func clampByte(v int) uint8 {
	if uint(v) > 255 {
		if v < 0 {
			return 0
		}
		return 255
	}
	return uint8(v)
}

// transformBlock dequantizes one block's coefficients (natural order) and writes its 8×8 pixels
// to dst (row stride stride). last is the zigzag index of the last non-zero coefficient: 0 means
// the block is flat, which on scanned paper is most blocks.
func transformBlock(dst []uint8, stride int, coef []int16, q *[64]int32, last uint8) {
	coef = coef[:64:64]
	if last == 0 {
		// DC/8: what both passes would give, written eight bytes at a time (flat blocks are most of
		// a scanned page, and a byte loop here was most of the transform workers' time).
		v := uint64(clampByte(descale(int(coef[0])*int(q[0]), 3)+128)) * 0x0101010101010101
		for y := range 8 {
			binary.LittleEndian.PutUint64(dst[y*stride:y*stride+8], v)
		}
		return
	}
	var ws [64]int
	// Pass 1: columns, from the coefficients into ws, scaled up by 2^pass1Bits.
	for c := range 8 {
		if coef[8+c] == 0 && coef[16+c] == 0 && coef[24+c] == 0 && coef[32+c] == 0 &&
			coef[40+c] == 0 && coef[48+c] == 0 && coef[56+c] == 0 {
			dcv := int(coef[c]) * int(q[c]) << pass1Bits
			for r := range 8 {
				ws[8*r+c] = dcv
			}
			continue
		}
		z2, z3 := int(coef[16+c])*int(q[16+c]), int(coef[48+c])*int(q[48+c])
		z1 := (z2 + z3) * fix0541196100
		tmp2 := z1 - z3*fix1847759065
		tmp3 := z1 + z2*fix0765366865
		z2, z3 = int(coef[c])*int(q[c]), int(coef[32+c])*int(q[32+c])
		tmp0 := (z2 + z3) << constBits
		tmp1 := (z2 - z3) << constBits
		tmp10, tmp13 := tmp0+tmp3, tmp0-tmp3
		tmp11, tmp12 := tmp1+tmp2, tmp1-tmp2

		o0 := int(coef[56+c]) * int(q[56+c])
		o1 := int(coef[40+c]) * int(q[40+c])
		o2 := int(coef[24+c]) * int(q[24+c])
		o3 := int(coef[8+c]) * int(q[8+c])
		o0, o1, o2, o3 = oddPart(o0, o1, o2, o3)

		const n = constBits - pass1Bits
		ws[c] = descale(tmp10+o3, n)
		ws[56+c] = descale(tmp10-o3, n)
		ws[8+c] = descale(tmp11+o2, n)
		ws[48+c] = descale(tmp11-o2, n)
		ws[16+c] = descale(tmp12+o1, n)
		ws[40+c] = descale(tmp12-o1, n)
		ws[24+c] = descale(tmp13+o0, n)
		ws[32+c] = descale(tmp13-o0, n)
	}
	// Pass 2: rows, from ws to pixels, removing the pass-1 scale and the DCT's factor of 8.
	for r := range 8 {
		w := ws[8*r : 8*r+8 : 8*r+8]
		row := dst[r*stride : r*stride+8 : r*stride+8]
		if w[1] == 0 && w[2] == 0 && w[3] == 0 && w[4] == 0 && w[5] == 0 && w[6] == 0 && w[7] == 0 {
			v := clampByte(descale(w[0], pass1Bits+3) + 128)
			for x := range row {
				row[x] = v
			}
			continue
		}
		z1 := (w[2] + w[6]) * fix0541196100
		tmp2 := z1 - w[6]*fix1847759065
		tmp3 := z1 + w[2]*fix0765366865
		tmp0 := (w[0] + w[4]) << constBits
		tmp1 := (w[0] - w[4]) << constBits
		tmp10, tmp13 := tmp0+tmp3, tmp0-tmp3
		tmp11, tmp12 := tmp1+tmp2, tmp1-tmp2
		o0, o1, o2, o3 := oddPart(w[7], w[5], w[3], w[1])

		const n = constBits + pass1Bits + 3
		row[0] = clampByte(descale(tmp10+o3, n) + 128)
		row[7] = clampByte(descale(tmp10-o3, n) + 128)
		row[1] = clampByte(descale(tmp11+o2, n) + 128)
		row[6] = clampByte(descale(tmp11-o2, n) + 128)
		row[2] = clampByte(descale(tmp12+o1, n) + 128)
		row[5] = clampByte(descale(tmp12-o1, n) + 128)
		row[3] = clampByte(descale(tmp13+o0, n) + 128)
		row[4] = clampByte(descale(tmp13-o0, n) + 128)
	}
}

// oddPart is the odd half of the 8-point transform: inputs are the coefficients 7, 5, 3 and 1,
// outputs the terms added to and subtracted from the even half's 3, 2, 1 and 0.
func oddPart(t0, t1, t2, t3 int) (int, int, int, int) {
	z1, z2, z3, z4 := t0+t3, t1+t2, t0+t2, t1+t3
	z5 := (z3 + z4) * fix1175875602
	t0 *= fix0298631336
	t1 *= fix2053119869
	t2 *= fix3072711026
	t3 *= fix1501321110
	z1 *= -fix0899976223
	z2 *= -fix2562915447
	z3 = z3*-fix1961570560 + z5
	z4 = z4*-fix0390180644 + z5
	return t0 + z1 + z3, t1 + z2 + z4, t2 + z2 + z3, t3 + z1 + z4
}

// Half-size decoding (DecodeHalf) writes each block as 4×4 pixels, each the mean of a 2×2 square of
// the 8×8 block the full transform would give. That mean needs no full transform: averaging two
// neighbouring samples of the 8-point inverse DCT multiplies basis function u by cos(uπ/16) and
// leaves a 4-point cosine of the same phase, and basis 8−u lands on the same cosine negated
// (basis 4 vanishes). So each axis folds its eight coefficients into four,
//
//	G(0) = F(0),  G(u) = cos(uπ/16)·F(u) − sin(uπ/16)·F(8−u)  for u = 1, 2, 3,
//
// and a 4-point inverse DCT of G, with the 8-point transform's scale, gives the means exactly
// (before rounding; the full decode clamps each pixel before they are averaged, which only
// differs where a block's reconstruction leaves 0…255). It costs about a third of the full
// transform and writes a quarter of the pixels.
var (
	halfFoldA, halfFoldB [4]float32    // cos(uπ/16), sin(uπ/16)
	halfBasis            [4][4]float32 // C(u)·cos((2m+1)uπ/8), C(0) = 1/√2
)

func init() {
	for u := range 4 {
		halfFoldA[u] = float32(math.Cos(float64(u) * math.Pi / 16))
		halfFoldB[u] = float32(math.Sin(float64(u) * math.Pi / 16))
		for m := range 4 {
			c := math.Cos(float64((2*m+1)*u) * math.Pi / 8)
			if u == 0 {
				c = math.Sqrt(0.5)
			}
			halfBasis[u][m] = float32(c)
		}
	}
}

// transformBlockHalf is transformBlock for half-size decoding: it writes the block's 4×4 pixels of
// 2×2 means to dst (see halfFoldA).
func transformBlockHalf(dst []uint8, stride int, coef []int16, q *[64]int32, last uint8) {
	coef = coef[:64:64]
	if last == 0 {
		v := uint32(clampByte(descale(int(coef[0])*int(q[0]), 3)+128)) * 0x01010101
		for y := range 4 {
			binary.LittleEndian.PutUint32(dst[y*stride:y*stride+4], v)
		}
		return
	}
	deq := func(i int) float32 { return float32(int32(coef[i]) * q[i]) }
	// Fold the columns: rows 0..3 of h, eight coefficients wide.
	var h [4][8]float32
	for u := range 8 {
		h[0][u] = deq(u)
		for v := 1; v < 4; v++ {
			h[v][u] = halfFoldA[v]*deq(8*v+u) - halfFoldB[v]*deq(8*(8-v)+u)
		}
	}
	// Fold each row and take its 4-point inverse transform.
	var t [4][4]float32
	for v := range 4 {
		r := &h[v]
		g0 := r[0]
		g1 := halfFoldA[1]*r[1] - halfFoldB[1]*r[7]
		g2 := halfFoldA[2]*r[2] - halfFoldB[2]*r[6]
		g3 := halfFoldA[3]*r[3] - halfFoldB[3]*r[5]
		for m := range 4 {
			t[v][m] = g0*halfBasis[0][m] + g1*halfBasis[1][m] + g2*halfBasis[2][m] + g3*halfBasis[3][m]
		}
	}
	// The columns' transform, the factor 1/4 of the 2-D inverse DCT, the level shift and rounding.
	for n := range 4 {
		row := dst[n*stride : n*stride+4 : n*stride+4]
		for m := range 4 {
			acc := t[0][m]*halfBasis[0][n] + t[1][m]*halfBasis[1][n] + t[2][m]*halfBasis[2][n] + t[3][m]*halfBasis[3][n]
			// Truncation is the floor for non-negative values; negative ones clamp to 0 anyway.
			row[m] = clampByte(int(acc*0.25 + 128.5))
		}
	}
}
