package ocr

import (
	"context"
	"fmt"
	"image"
)

// Tiled detection. The detector's working memory grows with its input (about 160 bytes a pixel in
// ONNX Runtime), so a 3-megapixel second pass needs half a gigabyte for one run, and whatever
// arena serves it keeps that. Inputs above DetTilePixels therefore run as overlapping tiles of at
// most that size, whose probability maps are stitched into the one map DB post-processing reads:
// each tile contributes only its core, and reaches DetTileOverlap pixels past it on the sides where
// it has a neighbour, so that text crossing a seam is seen with context on both sides and its
// region is found whole in the stitched map. Every detector run is then at most a first pass's
// size, on the shared session, and a request's detection memory is bounded whatever the page.

// tile is one detector run of a tiled input: in is the part of the input it reads, core the part
// of the map it writes (core ⊆ in). Both are in detector pixels, on multiples of 32.
type tile struct {
	in, core image.Rectangle
}

// tilePlan splits a dw×dh detector input (sides multiples of 32) into tiles of at most maxPx
// pixels whose cores partition it, each reaching overlap pixels (a multiple of 32) past its core
// toward its neighbours. Inputs within maxPx are one tile. Full-width strips are used while a
// strip still has a core of at least minCore rows; wider inputs are split into columns too.
func tilePlan(dw, dh, maxPx, overlap int) []tile {
	full := image.Rect(0, 0, dw, dh)
	if maxPx <= 0 || dw*dh <= maxPx {
		return []tile{{in: full, core: full}}
	}
	const minCore = 256
	ux, uy, uo := dw/32, dh/32, overlap/32
	nx := 1
	var rows int // tile rows (core plus both overlaps), a multiple of 32
	for {
		tw := ceilDiv(ux, nx) + 2*uo
		if nx == 1 {
			tw = ux
		}
		rows = maxPx / (tw * 32 * 32) // in units of 32
		if rows-2*uo >= minCore/32 || ceilDiv(ux, nx) <= 1 {
			break
		}
		nx++
	}
	coreRows := max(1, rows-2*uo)
	ny := ceilDiv(uy, coreRows)
	xs, ys := split(ux, nx), split(uy, ny)
	tiles := make([]tile, 0, nx*ny)
	for j := range ny {
		for i := range nx {
			core := image.Rect(xs[i]*32, ys[j]*32, xs[i+1]*32, ys[j+1]*32)
			in := image.Rect(core.Min.X-overlap, core.Min.Y-overlap, core.Max.X+overlap, core.Max.Y+overlap).Intersect(full)
			tiles = append(tiles, tile{in: in, core: core})
		}
	}
	return tiles
}

// split divides n units into k parts as evenly as possible and returns the k+1 boundaries.
func split(n, k int) []int {
	b := make([]int, k+1)
	for i := range k + 1 {
		b[i] = i * n / k
	}
	return b
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// inferTiled runs the detector on in (1×3×dh×dw) tile by tile, one run at a time, and returns the
// stitched probability map (dh×dw).
func (p *Pipeline) inferTiled(ctx context.Context, in Tensor, dw, dh int, tiles []tile) ([]float32, error) {
	prob := make([]float32, dw*dh)
	for _, t := range tiles {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tw, th := t.in.Dx(), t.in.Dy()
		part := Tensor{Shape: []int64{1, 3, int64(th), int64(tw)}, Data: make([]float32, 3*tw*th)}
		for c := range 3 {
			src := in.Data[c*dw*dh:]
			dst := part.Data[c*tw*th:]
			for y := range th {
				copy(dst[y*tw:(y+1)*tw], src[(t.in.Min.Y+y)*dw+t.in.Min.X:])
			}
		}
		out, err := p.rt.Infer(ctx, Detector, part)
		if err != nil {
			return nil, err
		}
		if len(out.Shape) != 4 || out.Shape[0] != 1 || out.Shape[1] != 1 || out.Shape[2] != int64(th) || out.Shape[3] != int64(tw) || len(out.Data) != tw*th {
			return nil, fmt.Errorf("output shape %v, want [1 1 %d %d]: %w", out.Shape, th, tw, ErrRuntimeFailed)
		}
		for y := t.core.Min.Y; y < t.core.Max.Y; y++ {
			row := out.Data[(y-t.in.Min.Y)*tw:]
			copy(prob[y*dw+t.core.Min.X:y*dw+t.core.Max.X], row[t.core.Min.X-t.in.Min.X:t.core.Max.X-t.in.Min.X])
		}
	}
	return prob, nil
}
