package pdffile

// Page is one leaf of the page tree, with the attributes it inherits resolved.
type Page struct {
	Ref  Ref
	Dict Dict // as stored (inherited attributes not copied in)
	// Resources is the page's resource dictionary, its own or inherited, resolved (nil: none).
	Resources Dict
	// Box is the page's visible area in user space (its CropBox clipped to its MediaBox,
	// normalized: X0 < X1, Y0 < Y1); Rotate its /Rotate in 0, 90, 180, 270.
	Box    [4]float64
	Rotate int
}

// Pages walks the page tree from the catalog, in order, with at most limit pages (a page tree
// that holds more, or nests deeper than maxTreeDepth, is refused; a node met twice counts once).
func (f *File) Pages(limit int) ([]Page, error) {
	root, err := f.GetDict(f.Trailer["Root"])
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, unreadable("no catalog")
	}
	top, ok := root["Pages"].(Ref)
	if !ok {
		return nil, unreadable("a catalog without a page tree reference")
	}
	type inherited struct {
		resources         Object
		mediaBox, cropBox Object
		rotate            Object
	}
	var pages []Page
	seen := map[Ref]bool{}
	var walk func(r Ref, in inherited, depth int) error
	walk = func(r Ref, in inherited, depth int) error {
		if depth > maxTreeDepth {
			return unreadable("a page tree deeper than %d", maxTreeDepth)
		}
		if seen[r] {
			// A node met again (a tree that lists itself, a page listed twice) is skipped, as
			// PDFium skips it; the caller checks the page count against PDFium's.
			return nil
		}
		seen[r] = true
		d, err := f.GetDict(r)
		if err != nil {
			return err
		}
		if d == nil {
			return unreadable("a page tree node that is not a dictionary")
		}
		for k, p := range map[Name]*Object{"Resources": &in.resources, "MediaBox": &in.mediaBox, "CropBox": &in.cropBox, "Rotate": &in.rotate} {
			if v, ok := d[k]; ok {
				*p = v
			}
		}
		switch d["Type"] {
		case Name("Pages"):
			kids, err := f.Get(d["Kids"])
			if err != nil {
				return err
			}
			a, _ := kids.(Array)
			for _, k := range a {
				kr, ok := k.(Ref)
				if !ok {
					return unreadable("a page tree kid that is not a reference")
				}
				if err := walk(kr, in, depth+1); err != nil {
					return err
				}
			}
			return nil
		case Name("Page"):
			if len(pages) >= limit {
				return unreadable("more than %d pages", limit)
			}
			pg, err := f.page(r, d, in.resources, in.mediaBox, in.cropBox, in.rotate)
			if err != nil {
				return err
			}
			pages = append(pages, pg)
			return nil
		}
		return unreadable("a page tree node of no known type")
	}
	if err := walk(top, inherited{}, 0); err != nil {
		return nil, err
	}
	return pages, nil
}

func (f *File) page(r Ref, d Dict, res, media, crop, rot Object) (Page, error) {
	pg := Page{Ref: r, Dict: d}
	var err error
	if res != nil {
		if pg.Resources, err = f.GetDict(res); err != nil {
			return Page{}, err
		}
	}
	mb, ok := f.rect(media)
	if !ok {
		// PDFium takes a Letter page when the MediaBox is missing or bad.
		mb = [4]float64{0, 0, 612, 792}
	}
	pg.Box = mb
	if cb, ok := f.rect(crop); ok {
		pg.Box = [4]float64{max(cb[0], mb[0]), max(cb[1], mb[1]), min(cb[2], mb[2]), min(cb[3], mb[3])}
		if pg.Box[0] >= pg.Box[2] || pg.Box[1] >= pg.Box[3] {
			pg.Box = mb
		}
	}
	if o, err := f.Get(rot); err == nil {
		if v, ok := Int(o); ok {
			pg.Rotate = int(((v%360)+360)%360) / 90 * 90
			if v%90 != 0 {
				pg.Rotate = 0 // PDFium ignores a rotation that is not a multiple of 90
			}
		}
	}
	return pg, nil
}

// rect is a rectangle array, normalized; false when o is not four numbers of positive area.
func (f *File) rect(o Object) ([4]float64, bool) {
	o, err := f.Get(o)
	if err != nil {
		return [4]float64{}, false
	}
	a, ok := o.(Array)
	if !ok || len(a) != 4 {
		return [4]float64{}, false
	}
	var v [4]float64
	for i, e := range a {
		e, err := f.Get(e)
		if err != nil {
			return [4]float64{}, false
		}
		if v[i], ok = Num(e); !ok {
			return [4]float64{}, false
		}
	}
	r := [4]float64{min(v[0], v[2]), min(v[1], v[3]), max(v[0], v[2]), max(v[1], v[3])}
	if r[2]-r[0] <= 0 || r[3]-r[1] <= 0 {
		return [4]float64{}, false
	}
	return r, true
}
