package tiffdec

import (
	"errors"
	"fmt"
)

// The errors this package wraps. Each has one meaning for the caller; the wrapping error carries a
// message for people, built from numbers and fixed words only (never from the file's bytes).
var (
	// ErrFormat means the bytes are not a classic TIFF.
	ErrFormat = errors.New("not a TIFF")
	// ErrUnsupported means a valid TIFF uses something this package does not read (BigTIFF, a
	// bit depth, a compression, a colour space): the file is fine, the reader lacks it.
	ErrUnsupported = errors.New("unsupported TIFF")
	// ErrCorrupt means the page chain or a page is broken or cut short.
	ErrCorrupt = errors.New("corrupt TIFF")
	// ErrTooManyPages means the chain holds more pages (or IFDs) than the caller allows.
	ErrTooManyPages = errors.New("too many TIFF pages")
)

// PageError is a page that cannot be read. Page is its 1-based number in the file; Err wraps
// ErrCorrupt or ErrUnsupported. Errors about one page are returned as a *PageError, so that a
// caller reading a document can report the page and go on with the others.
type PageError struct {
	Page int
	Err  error
}

func (e *PageError) Error() string { return fmt.Sprintf("TIFF page %d: %v", e.Page, e.Err) }

// Unwrap returns the cause (ErrCorrupt or ErrUnsupported, wrapped with details).
func (e *PageError) Unwrap() error { return e.Err }

// Kind is the sentinel the page error wraps: ErrUnsupported or ErrCorrupt.
func (e *PageError) Kind() error {
	if errors.Is(e.Err, ErrUnsupported) {
		return ErrUnsupported
	}
	return ErrCorrupt
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...)
}
