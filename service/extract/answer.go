package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Bounds on what a re-ask quotes back to the model, and what an error tells the caller.
const (
	maxReasons      = 10
	maxAnswerNest   = 128 // arrays and objects in an answer
	maxReasonLength = 300
)

// badAnswer says why an answer cannot be used.
type badAnswer struct {
	notJSON bool     // it could not be read as a JSON object; reasons[0] says why
	reasons []string // validation errors, "at '/path': what is wrong", at most maxReasons
	more    int      // validation errors left out of reasons
}

// err is the error for the caller once no attempts are left.
func (b *badAnswer) err(attempts int) error {
	after := ""
	if attempts > 1 {
		after = fmt.Sprintf(" after %d attempts", attempts)
	}
	if b.notJSON {
		return badAnswerf("the chat model did not answer with a JSON object%s (%s)", after, b.reasons[0])
	}
	msg := fmt.Sprintf("the chat model's answer did not match the schema%s: %s", after, b.reasons[0])
	if n := len(b.reasons) - 1 + b.more; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return badAnswerf("%s", msg)
}

// check reads a model's answer: the JSON object it contains (see answerJSON), with the nulls
// of the strict form removed (see dropOptionalNulls), validated against the caller's schema.
// It returns the object re-encoded compactly in the model's key order, or why it is unusable.
func (s *Schema) check(content string) (json.RawMessage, *badAnswer) {
	tree, err := decodeTree([]byte(strings.TrimSpace(content)), maxAnswerNest)
	if err != nil {
		// Not bare JSON: look for it inside fences or prose.
		tree, err = decodeTree([]byte(answerJSON(content)), maxAnswerNest)
	}
	if err != nil {
		if strings.TrimSpace(content) == "" {
			err = errors.New("the answer was empty")
		}
		return nil, &badAnswer{notJSON: true, reasons: []string{truncate(err.Error(), maxReasonLength)}}
	}
	obj, ok := tree.(*object)
	if !ok {
		return nil, &badAnswer{notJSON: true, reasons: []string{"the answer is " + kindOf(tree) + ", not an object"}}
	}
	dropOptionalNulls(s.doc, obj)
	if err := s.validator.Validate(plain(obj)); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, &badAnswer{reasons: []string{truncate(err.Error(), maxReasonLength)}}
		}
		all := leaves(ve)
		if len(all) == 0 {
			all = []string{"the answer does not match the schema"}
		}
		n := min(len(all), maxReasons)
		return nil, &badAnswer{reasons: all[:n], more: len(all) - n}
	}
	out, err := encodeTree(obj, "")
	if err != nil {
		return nil, &badAnswer{notJSON: true, reasons: []string{err.Error()}}
	}
	return out, nil
}
