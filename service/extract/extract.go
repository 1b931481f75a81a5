// Package extract fills a JSON object that matches a JSON Schema from the OCR text of a page, by
// asking an OpenAI-compatible chat model (OpenAI, Ollama, vLLM, …) through go-openai.
//
// A model asked for JSON does not always answer with JSON, let alone JSON that matches the
// schema, so the answer is held to the schema three times over:
//
//  1. the schema goes in the request as a json_schema response format, strict where the schema
//     allows it, so servers with constrained decoding cannot produce anything else;
//  2. the schema is also written into the prompt, for servers that ignore response formats;
//  3. the answer is decoded and validated with a real JSON Schema validator, and when it fails,
//     the model is shown the validation errors and asked again, a bounded number of times.
//
// Whatever Extract returns without an error is valid against the caller's schema.
//
// The OCR text is untrusted: anyone who can put a document in front of the service can write
// "ignore previous instructions" on it. It goes into the prompt between delimiters it cannot
// contain, under a system prompt that calls it data; and since the answer must pass the schema,
// the worst an injection can do is fill fields wrongly, which a misread document can too.
package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ocrgate/ocrgate/service/ocr"
)

// Options configure an [Extractor]. Zero values take the defaults, except Reasks.
type Options struct {
	Model   string // CHAT_BOT_MODEL: the model name the server knows, e.g. "gpt-4o-mini", "qwen2.5:7b"
	BaseURL string // CHAT_BOT_BASEURL: the API root including its version segment, e.g. "http://localhost:11434/v1"
	APIKey  string // CHAT_BOT_APIKEY: sent as a bearer token when set; never logged

	// Timeout bounds one chat call, connection to last byte, even when the request's context
	// has no deadline (default 60 s). A request's earlier deadline still wins.
	Timeout time.Duration
	// Reasks is how many times an answer that is not valid JSON for the schema is sent back to
	// the model with what is wrong: 0 (or negative) for none, DefaultReasks (2, so up to 3 calls)
	// as the service is configured by default. Unlike the other fields, zero means zero.
	Reasks int
	// MaxAnswerBytes bounds the chat server's response body (default 1 MiB). A larger answer
	// fails with ErrAnswerTooLarge as soon as it is seen, and is neither kept nor sent back in a
	// re-ask: a misbehaving or hostile server must not make the service hold, or forward,
	// hundreds of megabytes.
	MaxAnswerBytes int64
	// Schema bounds the schemas callers send. See [Limits].
	Schema Limits
	// MaxText bounds the OCR text sent to the model, in characters (default 48 000, about
	// 12 000 tokens): a document's pages go in order until the next line would pass it, and the
	// model is told that the text was cut (see Result.CutAtPage).
	MaxText int
}

// Defaults for Options.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultReasks         = 2
	DefaultMaxAnswerBytes = 1 << 20
	DefaultMaxText        = 48_000
)

func (o Options) withDefaults() Options {
	o.Model = strings.TrimSpace(o.Model)
	o.BaseURL = strings.TrimSpace(o.BaseURL)
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	o.Reasks = max(0, o.Reasks)
	if o.MaxAnswerBytes <= 0 {
		o.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if o.MaxText <= 0 {
		o.MaxText = DefaultMaxText
	}
	o.Schema = o.Schema.withDefaults()
	return o
}

// LogValue logs the options with the API key redacted: only whether one is set.
func (o Options) LogValue() slog.Value {
	key := ""
	if o.APIKey != "" {
		key = "[redacted]"
	}
	return slog.GroupValue(
		slog.String("model", o.Model),
		slog.String("base_url", redactURL(o.BaseURL)),
		slog.String("api_key", key),
		slog.Duration("timeout", o.Timeout),
		slog.Int("reasks", o.Reasks),
		slog.Int64("max_answer_bytes", o.MaxAnswerBytes),
		slog.Int("max_text", o.MaxText),
		slog.Int("max_schema_bytes", o.Schema.MaxBytes),
		slog.Int("max_schema_depth", o.Schema.MaxDepth),
		slog.Int("max_schema_properties", o.Schema.MaxProperties),
	)
}

// redactURL is a base URL fit for a log: a password in it (https://user:secret@host/v1) and its
// query (some gateways take a key as ?key=…) are replaced, the rest kept so the log still says
// which server is configured. A URL that does not parse is withheld entirely.
func redactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparsable, withheld]"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "redacted")
	}
	if u.RawQuery != "" {
		u.RawQuery = "redacted"
	}
	return u.String()
}

// Extractor asks the chat model. It holds one HTTP client for all requests and is safe for
// concurrent use.
type Extractor struct {
	opt    Options
	client *openai.Client
}

// New builds an Extractor. Without a model or base URL it returns an error wrapping
// [ErrNotConfigured]; the base URL must be an absolute http or https URL without credentials,
// query or fragment (go-openai appends "/chat/completions" to it as a string).
func New(opt Options) (*Extractor, error) {
	opt = opt.withDefaults()
	var missing []string
	if opt.Model == "" {
		missing = append(missing, "CHAT_BOT_MODEL")
	}
	if opt.BaseURL == "" {
		missing = append(missing, "CHAT_BOT_BASEURL")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w (%s not set)", ErrNotConfigured, strings.Join(missing, " and "))
	}
	u, err := url.Parse(opt.BaseURL)
	switch {
	case err != nil:
		return nil, fmt.Errorf("extract: CHAT_BOT_BASEURL is not a URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return nil, fmt.Errorf("extract: CHAT_BOT_BASEURL must be an absolute http:// or https:// URL such as http://localhost:11434/v1, got %q", opt.BaseURL)
	case u.User != nil:
		return nil, errors.New("extract: CHAT_BOT_BASEURL must not contain credentials; put the key in CHAT_BOT_APIKEY")
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(opt.BaseURL, "?"):
		return nil, fmt.Errorf("extract: CHAT_BOT_BASEURL must not have a query or fragment, got %q", opt.BaseURL)
	}

	cfg := openai.DefaultConfig(opt.APIKey)
	cfg.BaseURL = strings.TrimRight(opt.BaseURL, "/")
	var doer openai.HTTPDoer = capAnswer{next: &http.Client{Timeout: opt.Timeout}, max: opt.MaxAnswerBytes}
	if acceptsTemperature(opt.Model) {
		doer = zeroTemperature{next: doer}
	}
	cfg.HTTPClient = doer
	return &Extractor{opt: opt, client: openai.NewClientWithConfig(cfg)}, nil
}

// Options returns the settings the extractor runs with, defaults filled in.
func (e *Extractor) Options() Options { return e.opt }

// Result is a filled object and what it cost.
type Result struct {
	// Object is the JSON object, valid against the schema: the model's answer with its key
	// order, less the nulls the strict form forced into optional properties.
	Object json.RawMessage
	// Attempts is the number of chat calls made (1 + re-asks).
	Attempts int
	// ChatTime is the time spent in chat calls, all attempts together.
	ChatTime time.Duration
	// CutAtPage is the first page whose text did not reach the model in full because the text
	// was longer than Options.MaxText (a page's Number; 1 for a single image); 0 when all of it
	// did.
	CutAtPage int
}

// Page is one page of what the model reads: its number in the document (0 for a single image,
// which gets no page marker) and its OCR result.
type Page struct {
	Number int
	Result *ocr.Result
}

// Extract asks the chat model to fill s from the text of one page (an image).
func (e *Extractor) Extract(ctx context.Context, s *Schema, page *ocr.Result) (Result, error) {
	return e.ExtractDocument(ctx, s, []Page{{Result: page}})
}

// ExtractDocument asks the chat model to fill s from the text of a document's pages, in order,
// each after a page marker; see Extract.
//
// It returns an object valid against s, or an error: one wrapping [ErrBadAnswer] when the
// model's answers stayed unusable, [ErrAuth], [ErrUnreachable] or [ErrUpstream] for the
// server, or context.DeadlineExceeded (the request's deadline or the chat timeout) and
// context.Canceled. Attempts and ChatTime are filled in either way, for metrics.
//
// An answer that is not JSON or not valid is sent back with what is wrong, up to
// Options.Reasks times. An answer cut off at the output limit (finish_reason "length") is not:
// the corrected answer would be at least as long. Refusals, content-filter stops and empty
// choices are not either: at temperature 0 the model would say the same again.
func (e *Extractor) ExtractDocument(ctx context.Context, s *Schema, pages []Page) (Result, error) {
	if s == nil {
		return Result{}, errors.New("extract: nil schema")
	}
	prompt, cut := documentPrompt(s, pages, e.opt.MaxText)
	req := openai.ChatCompletionRequest{
		Model: e.opt.Model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: systemPrompt},
			{Role: openai.ChatMessageRoleUser, Content: prompt},
		},
		// Temperature 0 is sent by zeroTemperature: go-openai drops a zero Temperature.
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name:   s.name,
				Schema: s.send,
				Strict: s.strict,
			},
		},
	}

	res := Result{CutAtPage: cut}
	var bad *badAnswer
	for attempt := 1; attempt <= e.opt.Reasks+1; attempt++ {
		res.Attempts = attempt
		start := time.Now()
		resp, err := e.client.CreateChatCompletion(ctx, req)
		res.ChatTime += time.Since(start)
		if err != nil {
			return res, e.classify(ctx, err, attempt)
		}
		if len(resp.Choices) == 0 {
			return res, badAnswerf("the chat model returned no choices")
		}
		choice := resp.Choices[0]
		msg := choice.Message
		switch {
		case msg.Refusal != "":
			return res, badAnswerf("the chat model refused: %s", truncate(msg.Refusal, 200))
		case choice.FinishReason == openai.FinishReasonLength:
			return res, badAnswerf("the chat model's answer was cut off at its output limit; the schema or the document may be too large for the model")
		case choice.FinishReason == openai.FinishReasonContentFilter:
			return res, badAnswerf("the chat model's content filter stopped the answer")
		}
		obj, b := s.check(msg.Content)
		if b == nil {
			res.Object = obj
			return res, nil
		}
		bad = b
		req.Messages = append(req.Messages,
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: msg.Content},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: reaskPrompt(bad)},
		)
	}
	return res, bad.err(res.Attempts)
}
