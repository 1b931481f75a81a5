package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/paths"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/ocrgate/ocrgate/service/metrics"
	"github.com/ocrgate/ocrgate/service/openapi"
	"github.com/ocrgate/ocrgate/service/server"
)

// checkedApp is the service as the HTTP tests see it: its Test sends the request to the real app
// and checks the exchange against openapi.json when the test ends, failing the test on anything the
// document does not describe: a route, status, body field or header, or a request the document
// calls invalid that the service accepted. Every helper that calls the app (do, call, newApp, tritonApp) hands out a
// checkedApp, so the whole suite keeps the document honest.
type checkedApp struct {
	*fiber.App
	t testing.TB
}

func checked(t testing.TB, app *fiber.App) *checkedApp { return &checkedApp{App: app, t: t} }

// Test runs the request through the app, like fiber.App.Test, and checks it and its answer
// against the OpenAPI document.
func (a *checkedApp) Test(req *http.Request, msTimeout ...int) (*http.Response, error) {
	a.t.Helper()
	var reqBody []byte
	if req.Body != nil {
		var err error
		if reqBody, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	probe := req.Clone(req.Context())
	resp, err := a.App.Test(req, msTimeout...)
	if err != nil {
		return resp, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	// Checked when the test ends, so the check costs nothing inside what a test times.
	checkedResp := *resp
	from := sentFrom()
	a.t.Cleanup(func() {
		if problems := checkExchange(probe, reqBody, &checkedResp, respBody); len(problems) > 0 {
			a.t.Errorf("openapi.json does not describe %s %s → %d, sent from %s (edit service/openapi/openapi.json in the same change):\n  - %s",
				probe.Method, probe.URL.Path, checkedResp.StatusCode, from, strings.Join(problems, "\n  - "))
		}
	})
	return resp, nil
}

// sentFrom names the test lines that sent a request (the helper and its caller), as the failure
// is reported later, at the end of the test.
func sentFrom() string {
	pcs := make([]uintptr, 8)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	var at []string
	for f, more := frames.Next(); more && len(at) < 2; f, more = frames.Next() {
		if strings.HasSuffix(f.File, "_test.go") {
			at = append(at, filepath.Base(f.File)+":"+strconv.Itoa(f.Line))
		}
	}
	return strings.Join(at, " ← ")
}

// contract is the parsed document and a validator over it, built once.
var contract = sync.OnceValues(func() (*apiContract, error) {
	doc, err := libopenapi.NewDocument(openapi.Document)
	if err != nil {
		return nil, err
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		return nil, err
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return &apiContract{model: &model.Model, v: v}, nil
})

type apiContract struct {
	mu    sync.Mutex // the validator's caches are not documented as safe for concurrent use
	model *v3.Document
	v     validator.Validator
}

// protocolHeaders are set by HTTP itself or by the CORS middleware on any route; the document
// describes CORS once (info and the OPTIONS operations) rather than on every response.
var protocolHeaders = []string{"Content-Type", "Content-Length", "Date", "Connection", "Transfer-Encoding",
	"Content-Encoding", "Vary"}

// checkExchange lists what the document does not describe about one request and its answer.
func checkExchange(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) []string {
	c, err := contract()
	if err != nil {
		return []string{"openapi.json does not load: " + err.Error()}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	withBody := func() *http.Request {
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
		return r
	}
	var problems []string
	item, pathErrs, _ := paths.FindPath(withBody(), c.model, config.NewValidationOptions())
	if item == nil || len(pathErrs) > 0 {
		// A route the document does not list must be refused as the document says any other
		// route is: 404 not_found.
		if resp.StatusCode != http.StatusNotFound {
			problems = append(problems, fmt.Sprintf("route is not in the document, yet it answered %d (document it under paths)", resp.StatusCode))
		}
		var e struct{ Error, Code string }
		if json.Unmarshal(respBody, &e) != nil || e.Code != "not_found" || e.Error == "" {
			problems = append(problems, fmt.Sprintf("route is not in the document and the answer is not a not_found error: %.200s", respBody))
		}
		return problems
	}

	reqOK, reqErrs := c.v.ValidateHttpRequestSync(withBody())
	if !reqOK && (resp.StatusCode < 400 || resp.StatusCode >= 500) {
		// The document calls the request invalid: the service must refuse it as the caller's
		// mistake. Accepting it means the document is missing what the request used.
		problems = append(problems, fmt.Sprintf("the service answered %d to a request the document calls invalid:", resp.StatusCode))
		problems = append(problems, describe("request", reqBody, reqErrs)...)
	}
	respReq := withBody()
	respCopy := *resp
	respCopy.Body = io.NopCloser(bytes.NewReader(respBody))
	if ok, errs := c.v.ValidateHttpResponse(respReq, &respCopy); !ok {
		problems = append(problems, describe("response", respBody, errs)...)
	}
	problems = append(problems, undocumentedHeaders(item, req.Method, resp)...)
	return problems
}

// undocumentedHeaders lists the response's headers that its operation's response object does not
// declare (validators check declared headers; nothing else checks that the others are declared).
func undocumentedHeaders(item *v3.PathItem, method string, resp *http.Response) []string {
	op := item.GetOperations().GetOrZero(strings.ToLower(method))
	if op == nil || op.Responses == nil {
		return nil
	}
	r := op.Responses.Codes.GetOrZero(strconv.Itoa(resp.StatusCode))
	if r == nil {
		return nil // the validator reports the undocumented status
	}
	declared := map[string]bool{}
	for name := range r.Headers.KeysFromOldest() {
		declared[http.CanonicalHeaderKey(name)] = true
	}
	var out []string
	for name := range resp.Header {
		name = http.CanonicalHeaderKey(name)
		if declared[name] || slices.Contains(protocolHeaders, name) || strings.HasPrefix(name, "Access-Control-") {
			continue
		}
		out = append(out, fmt.Sprintf("response header %s is not declared under responses.%d.headers", name, resp.StatusCode))
	}
	sort.Strings(out)
	return out
}

// describe turns the validator's findings into one line each that names the field and the rule.
// Findings that differ only in array indices (the same undocumented field on every region) are
// one line, with the first place and a count.
func describe(side string, body []byte, errs []*verrors.ValidationError) []string {
	var out []string
	seen := map[string]int{} // finding with indices elided → its line in out
	counts := map[string]int{}
	for _, e := range errs {
		if len(e.SchemaValidationErrors) == 0 {
			out = append(out, fmt.Sprintf("%s: %s (%s)", side, e.Message, e.Reason))
			continue
		}
		for _, f := range e.SchemaValidationErrors {
			where := f.FieldPath
			if where == "" {
				where = "$"
			}
			key := arrayIndex.ReplaceAllString(where, "[*]") + "\x00" + f.Reason
			counts[key]++
			if _, ok := seen[key]; ok {
				continue
			}
			seen[key] = len(out)
			got := ""
			if v, ok := valueAt(body, where); ok && !strings.Contains(f.Reason, "additional properties") {
				got = fmt.Sprintf(", got %.80s", v)
			}
			out = append(out, fmt.Sprintf("%s body %s: %s%s (schema %s)", side, where, f.Reason, got, f.KeywordLocation))
		}
	}
	for key, i := range seen {
		if n := counts[key]; n > 1 {
			out[i] += fmt.Sprintf(" — and %d more like it", n-1)
		}
	}
	return out
}

var arrayIndex = regexp.MustCompile(`\[\d+\]`)

// valueAt returns the JSON text at a simple path ($.a.b[2].c) of body, so a finding can say what
// value was undocumented (an enum finding does not).
func valueAt(body []byte, path string) (string, bool) {
	var v any
	if json.Unmarshal(body, &v) != nil || !strings.HasPrefix(path, "$") {
		return "", false
	}
	for _, seg := range jsonPathSegment.FindAllStringSubmatch(path[1:], -1) {
		switch {
		case seg[1] != "":
			m, ok := v.(map[string]any)
			if !ok {
				return "", false
			}
			v = m[seg[1]]
		default:
			a, ok := v.([]any)
			i, _ := strconv.Atoi(seg[2])
			if !ok || i >= len(a) {
				return "", false
			}
			v = a[i]
		}
	}
	out, err := json.Marshal(v)
	return string(out), err == nil
}

var jsonPathSegment = regexp.MustCompile(`\.(\w+)|\[(\d+)\]`)

// TestOpenAPIDocumentIsValid: the committed document is valid OpenAPI 3.1.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	c, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	if c.model.Version != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", c.model.Version)
	}
	if c.model.Info.Version != server.Version {
		t.Errorf("info.version is %q, the service is %s: change both when releasing", c.model.Info.Version, server.Version)
	}
	if ok, errs := c.v.ValidateDocument(); !ok {
		t.Fatalf("openapi.json is not a valid OpenAPI document:\n%s", strings.Join(describe("document", nil, errs), "\n"))
	}
}

// TestOpenAPICoversEveryRoute: every route the app registers (page and metrics on) is a
// documented operation, and every documented operation is a route.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	c, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	app := newApp(t, server.Options{UI: true, Metrics: metrics.New()}, nil)
	routes := map[string]bool{}
	for _, r := range app.GetRoutes(true) {
		if r.Method == http.MethodHead {
			continue // Fiber answers HEAD for every GET route by itself
		}
		routes[r.Method+" "+routeParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	documented := map[string]bool{}
	for path, item := range c.model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().KeysFromOldest() {
			if method == "options" {
				continue // CORS preflight, answered by the middleware for every path
			}
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	for r := range routes {
		if !documented[r] {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for d := range documented {
		if !routes[d] {
			t.Errorf("openapi.json documents %s, which is no route", d)
		}
	}
}

var routeParam = regexp.MustCompile(`:(\w+)`)
