// Package imaging turns uploaded bytes into pixels and pixels into model inputs for the OCR
// pipeline: it decodes images by content (refusing decompression bombs before they allocate and
// applying JPEG EXIF orientation so that text is upright), resizes whole pages into the normalized
// CHW tensor of the detector, cuts rotated text boxes out of the page by perspective warp and packs
// those crops into the recognizer's batch tensor.
//
// Everything here sits on the request path between two model runs, so the code avoids whole-image
// conversions (a 5000×7000 JPEG stays *image.YCbCr and is converted only where it is sampled),
// precomputes resampling weights, and spreads large images over GOMAXPROCS goroutines. Pixels with
// alpha are composited onto white everywhere, because text in transparent PNGs is usually dark ink
// on nothing and would otherwise vanish into a black background.
package imaging
