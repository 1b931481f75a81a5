// Package tiffdec reads TIFF files page by page: the page chain, each page's layout, and its
// pixels, for the compressions and layouts scanners and fax servers write.
//
// It reads what libtiff reads for documents: compression none, PackBits, LZW, Deflate (8 and
// 32946), JPEG (7, with JPEGTables; old-style 6 when the file holds a whole JPEG stream at
// JPEGInterchangeFormat), CCITT modified Huffman (2, 32771), T.4 (3: 1D and 2D, EOLs with or
// without fill bits) and T.6 (4); 1, 2, 4, 8 and 16 bits a sample; bilevel and gray (both
// photometric senses), palette, RGB, CMYK and YCbCr (subsampled or not), with or without alpha;
// strips and tiles; planar configuration 1 and 2; horizontal differencing (predictor 2). Anything
// else a valid file may hold (12- or 32-bit samples, floating point, CIE Lab, BigTIFF) is refused
// with ErrUnsupported, never taken for corruption.
//
// Why our own decoder, written from the TIFF 6.0 specification and ITU T.4/T.6, rather than
// libtiff through cgo or golang.org/x/image/tiff: the input is hostile, and a decoder in Go is
// memory-safe, interruptible, and can price what it will allocate and the CPU time it will take
// before it starts (see [Page.Plan]); libtiff cannot be bounded that way from outside and would
// add a C build dependency to every build; x/image/tiff lacks JPEG, CCITT, CMYK, YCbCr and
// sub-byte palettes, and reads each strip into a doubling buffer whatever its size. The test set in
// testdata (made with libtiff's own tools) checks that every page decodes to the pixels libtiff
// gives.
//
// Nothing in a file is trusted. The page chain walk (Open) is bounded in IFDs (pages, thumbnails
// and SubIFDs all count), in directory entries (no more entry bytes than the file holds, at most
// 4096 an IFD, as libtiff), refuses loops and honours its context; [Walks] counts walks, which a
// request makes once and passes on. A page's Plan prices its decode exactly (the output image,
// one strip or tile buffer at its real bit depth, the decoders' state) and estimates its CPU
// time; it costs the same whatever the page's strip or tile count. Decode allocates nothing beyond
// the plan and reads no more of the file than its output warrants: each strip or tile is read for
// at most what the most wasteful encoder of its compression writes for its rows, whatever its
// byte count claims and however strips overlap, and a CCITT line holds at most libtiff's bound of
// changing elements. It looks at its context between strips and every 256 KiB of work inside one
// (image/jpeg reads a JPEG strip through a reader that ends with the context), and refuses data
// that decodes to fewer bytes than the layout says. A panic is not recovered here: it is a
// bug, reported by the caller's unit of work (service/work), never turned into ErrCorrupt.
package tiffdec
