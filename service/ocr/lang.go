package ocr

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ocrgate/ocrgate/service/ctc"
)

// DefaultLang is the language the default recognizer (PP-OCRv4 Chinese, which reads English and
// digits too) is chosen by: a request that names no language is read with it.
const DefaultLang = "ch"

// Language is a recognizer the pipeline may read with besides the default one: a language pack.
// Detection, orientation and layout are shared; only the recognizer and its dictionary differ.
type Language struct {
	Code    string       // the request's lang: ja, ko, zh-Hant, en
	Charset *ctc.Charset // the pack's dictionary
}

// RecognizerFor is the model that reads lang: Recognizer for the default language, "rec_" + lang
// for a language pack (the name the runtime maps to its session or Triton model).
func RecognizerFor(lang string) Model {
	if lang == "" || lang == DefaultLang {
		return Recognizer
	}
	return Model("rec_" + lang)
}

// ErrLanguage means a request asked for a language whose recognizer is not loaded.
var ErrLanguage = errors.New("language not loaded")

// LanguageError names the languages that are loaded, for the answer to a request that asked for
// another (its own lang is not repeated: a client's input is not echoed).
type LanguageError struct{ Loaded []string }

func (e *LanguageError) Error() string {
	return fmt.Sprintf("%v: the loaded languages are %s", ErrLanguage, strings.Join(e.Loaded, ", "))
}

func (e *LanguageError) Unwrap() error { return ErrLanguage }

// Languages lists the languages the pipeline reads, the default first.
func (p *Pipeline) Languages() []string {
	out := []string{DefaultLang}
	for code := range p.langs {
		if code != DefaultLang {
			out = append(out, code)
		}
	}
	slices.Sort(out[1:])
	return out
}

// Lang returns the pipeline that reads with lang's recognizer ("" or DefaultLang: the default
// one). p is not changed; the two share the runtime and the options. A language not loaded gives
// a *LanguageError.
func (p *Pipeline) Lang(lang string) (*Pipeline, error) {
	if lang == "" {
		lang = DefaultLang
	}
	if lang == p.lang {
		return p, nil
	}
	cs, ok := p.langs[lang]
	if !ok {
		return nil, &LanguageError{Loaded: p.Languages()}
	}
	q := *p
	q.lang, q.rec, q.charset = lang, RecognizerFor(lang), cs
	return &q, nil
}

// Language is the language the pipeline reads.
func (p *Pipeline) Language() string { return p.lang }
