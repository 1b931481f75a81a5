package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// zeroTemperature sends "temperature": 0 with every chat completion request.
//
// Extraction wants the most likely reading of the document, the same on every call, so the
// temperature is 0. go-openai's ChatCompletionRequest.Temperature is a float32 with omitempty,
// so 0 is never sent, and servers then use their own default (1 for OpenAI, 0.8 for Ollama).
// Sending a tiny positive value instead would be a different setting, so this HTTPDoer adds the
// field to the JSON body when the body does not carry one.
type zeroTemperature struct {
	next openai.HTTPDoer
}

func (z zeroTemperature) Do(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		return z.next.Do(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close() // read to its end (or its error) above
	if err != nil {
		return nil, err
	}
	body = withZeroTemperature(body)
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return z.next.Do(out)
}

// withZeroTemperature adds "temperature":0 to a JSON object that has no temperature.
func withZeroTemperature(body []byte) []byte {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return body
	}
	if _, ok := fields["temperature"]; ok {
		return body
	}
	trimmed := bytes.TrimSpace(body)
	rest := bytes.TrimSpace(trimmed[1:]) // after '{'
	out := []byte(`{"temperature":0`)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// acceptsTemperature tells whether the model takes a temperature at all. OpenAI's reasoning
// models (o1, o3, o4, gpt-5 …) fix it at 1 and answer 400 to any other value; go-openai knows
// which they are and refuses to send a request with one, which is the test used here.
func acceptsTemperature(model string) bool {
	return openai.NewReasoningValidator().Validate(openai.ChatCompletionRequest{Model: model, Temperature: 0.5}) == nil
}

// errAnswerTooLarge is what reading a response body past the cap returns (classify turns it into
// ErrAnswerTooLarge).
var errAnswerTooLarge = errors.New("chat response body over the size limit")

// capAnswer bounds the size of every response body, error responses included: go-openai reads
// bodies whole (into a decoder or with io.ReadAll), so without a cap the server decides how much
// memory a request takes. A body announced larger than the cap is refused before it is read.
type capAnswer struct {
	next openai.HTTPDoer
	max  int64
}

func (c capAnswer) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.next.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > c.max {
		_ = resp.Body.Close() // the answer is refused unread
		return nil, errAnswerTooLarge
	}
	resp.Body = &cappedBody{r: resp.Body, left: c.max}
	return resp, nil
}

// cappedBody reads at most left bytes; reading more is errAnswerTooLarge, not a silent
// truncation (a cut JSON document would read as a syntax error, which is re-asked).
type cappedBody struct {
	r    io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more than allowed tells a body of exactly the cap from a longer one.
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			return 0, errAnswerTooLarge
		}
		return b.r.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.r.Close() }
