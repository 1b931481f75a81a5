package main

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/internal/testenv"
)

// module is this repository's module path; the deploy module's packages share the prefix.
const module = "github.com/ocrgate/ocrgate"

// shipped says whether a package of this repository may be linked into the serving binary: the
// layout rule of docs/development.md. The service's own packages, the Triton client (its test
// server is test support), the API client and the wire types ship; internal/ (tools and test
// support), the other mains and the deploy module never do.
func shipped(path string) bool {
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return false
	}
	under := func(dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }
	switch {
	case rel == "cmd/ocrgate":
		return true
	case under("tritonclient/tritontest"):
		return false
	case under("service"), under("tritonclient"), under("client"), under("api"):
		return true
	}
	return false
}

// TestLinks lists what go build links into the ocrgate binary (no test files, the build tags of
// a release) and fails on any package of this repository the layout rule keeps out of it. It is
// the build-graph side of the depguard rules in .golangci.yml: an import that a rule misses, or
// that arrives through another package, still shows here.
func TestLinks(t *testing.T) {
	gobin := testenv.Command(t, "go", "install Go (go test runs with its go on the PATH)")
	for _, tags := range []string{"", "integration"} {
		out, err := exec.Command(gobin, "list", "-deps", "-tags", tags, "-f", "{{.ImportPath}}", ".").Output()
		if err != nil {
			var stderr []byte
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				stderr = ee.Stderr
			}
			t.Fatalf("go list -deps -tags %q: %v\n%s", tags, err, stderr)
		}
		deps := strings.Fields(string(out))
		var own []string
		for _, p := range deps {
			if p == module || strings.HasPrefix(p, module+"/") {
				own = append(own, p)
			}
		}
		// The list is the binary's: it holds the HTTP layer and the composition root.
		for _, want := range []string{module + "/service/server", module + "/service/engine"} {
			if !slices.Contains(own, want) {
				t.Fatalf("go list -deps -tags %q lacks %s; got %v", tags, want, own)
			}
		}
		for _, p := range own {
			if !shipped(p) {
				t.Errorf("cmd/ocrgate (tags %q) links %s, which the layout keeps out of the serving binary", tags, p)
			}
		}
	}
}

func TestShipped(t *testing.T) {
	for path, want := range map[string]bool{
		module + "/cmd/ocrgate":                        true,
		module + "/service/server":                     true,
		module + "/service/document/docfile":           true,
		module + "/tritonclient":                       true,
		module + "/tritonclient/inferencepb":           true,
		module + "/client":                             true,
		module + "/api":                                true,
		module + "/tritonclient/tritontest":            false,
		module + "/internal/hostile":                   false,
		module + "/internal/ocrtest":                   false,
		module + "/cmd/triton-standin":                 false,
		module + "/cmd/ocrgate-bench":                  false,
		module + "/deploy":                             false,
		module + "/servicex":                           false,
		module + "/clientele":                          false,
		"github.com/other/ocrgate/ocrgate/service/ocr": false,
	} {
		if got := shipped(path); got != want {
			t.Errorf("shipped(%s) = %v, want %v", path, got, want)
		}
	}
}
