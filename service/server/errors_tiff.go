package server

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/ocrgate/ocrgate/service/document/docfile"
	"github.com/ocrgate/ocrgate/service/tiffdec"
)

// tiffAnswer is classify's answer for the TIFF reader's errors: a valid TIFF whose layout is not
// read is 415, a broken one 422 (corrupt_document in a document, undecodable_image for an image),
// and the message says TIFF and, where one page is at fault, which. The reader's messages are
// built from numbers and fixed words, never from the file's bytes. err wraps tiffdec.ErrCorrupt
// or tiffdec.ErrUnsupported.
func tiffAnswer(err error) *apiError {
	detail := err
	if pe := (*tiffdec.PageError)(nil); errors.As(err, &pe) {
		detail = pe
	}
	switch {
	case errors.Is(err, tiffdec.ErrUnsupported):
		return &apiError{status: fiber.StatusUnsupportedMediaType, code: "unsupported_image_format",
			msg: "the TIFF uses something this service does not read: " + detail.Error()}
	case errors.Is(err, docfile.ErrCorrupt):
		return &apiError{status: fiber.StatusUnprocessableEntity, code: "corrupt_document",
			msg: "the TIFF is corrupt or cut short: " + detail.Error()}
	}
	return &apiError{status: fiber.StatusUnprocessableEntity, code: "undecodable_image",
		msg: "the TIFF is corrupt or cut short: " + detail.Error()}
}
