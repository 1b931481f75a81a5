package extract

import (
	"bytes"
	"encoding/json"
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
	req.Body.Close()
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
