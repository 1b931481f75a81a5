// Package pdffile reads what an incremental update of a PDF needs to know of the file, and no more:
// its cross-reference sections (tables, and streams with their predictors, followed through
// /Prev), its objects (in the file or in object streams), its trailer and its page tree (with the
// attributes a page inherits). It writes objects back in PDF syntax.
//
// It is a reader for files PDFium has already opened, run on bytes a client sent: every loop,
// nesting depth and decompressed size is bounded, and anything it does not understand (a broken
// cross-reference table PDFium would repair, an encrypted file, a filter other than Flate on an
// xref or object stream) is an error, never a guess: the caller then writes nothing rather than a
// wrong file.
package pdffile

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// ErrUnreadable is wrapped by every error about the file's structure.
var ErrUnreadable = errors.New("pdffile: structure not readable")

func unreadable(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnreadable}, a...)...)
}

// An Object is one of: nil (null), bool, int64, float64, Name, String, Array, Dict, Ref, *Stream.
type Object any

// Name is a PDF name, without its slash and with its #xx escapes decoded.
type Name string

// String is a PDF string's bytes (literal or hexadecimal: they mean the same).
type String []byte

// Array is a PDF array.
type Array []Object

// Dict is a PDF dictionary.
type Dict map[Name]Object

// Ref is an indirect reference.
type Ref struct{ Num, Gen int }

// Stream is a stream object: its dictionary and its data as stored (still encoded).
type Stream struct {
	Dict Dict
	Raw  []byte
}

// Write appends o in PDF syntax to b. Strings are written in hexadecimal, dictionaries with their
// keys sorted: the same object always gives the same bytes.
func Write(b *bytes.Buffer, o Object) {
	switch v := o.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case int:
		b.WriteString(strconv.Itoa(v))
	case float64:
		s := strconv.FormatFloat(v, 'f', -1, 64)
		b.WriteString(s)
	case Name:
		writeName(b, v)
	case String:
		fmt.Fprintf(b, "<%x>", []byte(v))
	case Array:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(' ')
			}
			Write(b, e)
		}
		b.WriteByte(']')
	case Dict:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, string(k))
		}
		sort.Strings(keys)
		b.WriteString("<<")
		for _, k := range keys {
			writeName(b, Name(k))
			b.WriteByte(' ')
			Write(b, v[Name(k)])
		}
		b.WriteString(">>")
	case Ref:
		fmt.Fprintf(b, "%d %d R", v.Num, v.Gen)
	case *Stream:
		// A stream is written by its caller (it needs an object of its own); inline, its
		// dictionary alone would be wrong, so this never happens for what this package reads.
		b.WriteString("null")
	default:
		b.WriteString("null")
	}
}

func writeName(b *bytes.Buffer, n Name) {
	b.WriteByte('/')
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c <= ' ' || c >= 0x7f || isDelim(c) || c == '#' {
			fmt.Fprintf(b, "#%02X", c)
			continue
		}
		b.WriteByte(c)
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// Int returns o as an integer (an integral real too).
func Int(o Object) (int64, bool) {
	switch v := o.(type) {
	case int64:
		return v, true
	case float64:
		if v == float64(int64(v)) {
			return int64(v), true
		}
	}
	return 0, false
}

// Num returns o as a number.
func Num(o Object) (float64, bool) {
	switch v := o.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}
