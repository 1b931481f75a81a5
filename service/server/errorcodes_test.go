package server

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ocrgate/ocrgate/service/openapi"
)

// TestEveryErrorCodeIsDocumented reads this package's source for every error code it can answer
// (apiError and errorBody literals, badRequest calls, the map of Fiber's own errors, and the
// framing guard's refusals in service/framing) with its status, and checks it against the enum of that status's error schema in openapi.json, both
// ways: a new code must be documented under its status, and a documented code must exist. The
// HTTP tests check the codes they provoke; this covers the ones no test provokes.
func TestEveryErrorCodeIsDocumented(t *testing.T) {
	documented := map[int]map[string]bool{}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties struct {
					Code struct {
						Enum []string `json:"enum"`
					} `json:"code"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	for name, s := range doc.Components.Schemas {
		if m := errorSchema.FindStringSubmatch(name); m != nil {
			status, _ := strconv.Atoi(m[1])
			documented[status] = map[string]bool{}
			for _, c := range s.Properties.Code.Enum {
				documented[status][c] = true
			}
		}
	}

	found := errorCodesInSource(t)
	if len(found) < 20 {
		t.Fatalf("found only %d error codes in the source: the scan is broken", len(found))
	}
	inSource := map[int]map[string]bool{}
	for _, f := range found {
		if inSource[f.status] == nil {
			inSource[f.status] = map[string]bool{}
		}
		inSource[f.status][f.code] = true
		if reason, ok := unreachableCodes[f.code]; ok {
			t.Logf("%s (%s) not documented: %s", f.code, f.where, reason)
			continue
		}
		if !documented[f.status][f.code] {
			t.Errorf("error code %q with status %d (%s) is not in the enum of components.schemas.Error%d in service/openapi/openapi.json",
				f.code, f.status, f.where, f.status)
		}
	}
	for status, codes := range documented {
		for code := range codes {
			if !inSource[status][code] {
				t.Errorf("openapi.json documents error code %q with status %d, which no code in service/ answers", code, status)
			}
		}
	}
}

// unreachableCodes are codes in the source that no request can get, with the reason.
var unreachableCodes = map[string]string{}

var errorSchema = regexp.MustCompile(`^Error(\d{3})$`)

type foundCode struct {
	code   string
	status int
	where  string
}

// errorCodesInSource finds the error codes in the non-test files of this package and of the
// framing guard, whose refusals the error handler answers as they are.
func errorCodesInSource(t *testing.T) []foundCode {
	t.Helper()
	fset := token.NewFileSet()
	var files []string
	for _, pattern := range []string{"*.go", filepath.Join("..", "framing", "*.go")} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	var out []foundCode
	add := func(code string, statusExpr ast.Expr, pos token.Pos) {
		status := statusOf(statusExpr)
		if status == 0 {
			t.Errorf("%s: cannot tell the status of error code %q; teach statusOf in errorcodes_test.go", fset.Position(pos), code)
			return
		}
		out = append(out, foundCode{code: code, status: status, where: fset.Position(pos).String()})
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				switch typ := n.Type.(type) {
				case *ast.Ident:
					switch typ.Name {
					case "apiError":
						if code, ok := stringField(n, "code"); ok {
							status, _ := field(n, "status")
							add(code, status, n.Pos())
						}
					case "Error": // framing.Error{Status: 431, Code: "…"}
						if code, ok := stringField(n, "Code"); ok {
							status, _ := field(n, "Status")
							add(code, status, n.Pos())
						}
					}
				case *ast.MapType:
					// map[int]string{fiber.StatusNotFound: "not_found", …} or
					// map[int][2]string{fiber.StatusNotFound: {"not_found", "message"}, …}:
					// Fiber's own errors.
					if k, ok := typ.Key.(*ast.Ident); ok && k.Name == "int" {
						for _, e := range n.Elts {
							kv, ok := e.(*ast.KeyValueExpr)
							if !ok {
								continue
							}
							v := kv.Value
							if pair, ok := v.(*ast.CompositeLit); ok && len(pair.Elts) > 0 {
								v = pair.Elts[0]
							}
							if code, ok := stringLit(v); ok {
								add(code, kv.Key, kv.Pos())
							}
						}
					}
				}
			case *ast.CallExpr:
				switch fun := n.Fun.(type) {
				case *ast.Ident:
					// badRequest("code", …) here, refuse("code", …) in the framing guard: 400s.
					if (fun.Name == "badRequest" || fun.Name == "refuse") && len(n.Args) > 0 {
						if code, ok := stringLit(n.Args[0]); ok {
							add(code, &ast.Ident{Name: "StatusBadRequest"}, n.Pos())
						}
					}
				case *ast.SelectorExpr:
					// c.Status(fiber.StatusX).JSON(errorBody{…, Code: "x"})
					inner, ok := fun.X.(*ast.CallExpr)
					if fun.Sel.Name != "JSON" || !ok || len(n.Args) != 1 || len(inner.Args) != 1 {
						break
					}
					if sel, ok := inner.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Status" {
						if lit, ok := n.Args[0].(*ast.CompositeLit); ok {
							if code, ok := stringField(lit, "Code"); ok {
								add(code, inner.Args[0], lit.Pos())
							}
						}
					}
				}
			}
			return true
		})
	}
	return out
}

func field(lit *ast.CompositeLit, name string) (ast.Expr, bool) {
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == name {
				return kv.Value, true
			}
		}
	}
	return nil, false
}

func stringField(lit *ast.CompositeLit, name string) (string, bool) {
	v, ok := field(lit, name)
	if !ok {
		return "", false
	}
	return stringLit(v)
}

func stringLit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}

// statusOf reads fiber.StatusX (or http.StatusX) or a number; 0 when it is something else.
func statusOf(e ast.Expr) int {
	name := ""
	switch e := e.(type) {
	case *ast.BasicLit:
		if n, err := strconv.Atoi(e.Value); err == nil && e.Kind == token.INT {
			return n
		}
	case *ast.SelectorExpr:
		name = e.Sel.Name
	case *ast.Ident:
		name = e.Name
	}
	return map[string]int{
		"StatusBadRequest": 400, "StatusUnauthorized": 401, "StatusForbidden": 403, "StatusNotFound": 404,
		"StatusMethodNotAllowed": 405, "StatusNotAcceptable": 406, "StatusRequestTimeout": 408, "StatusConflict": 409,
		"StatusRequestEntityTooLarge": 413, "StatusUnsupportedMediaType": 415, "StatusUnprocessableEntity": 422,
		"StatusTooManyRequests": 429, "StatusRequestHeaderFieldsTooLarge": 431, "StatusInternalServerError": 500,
		"StatusNotImplemented": 501, "StatusBadGateway": 502, "StatusServiceUnavailable": 503, "StatusGatewayTimeout": 504,
	}[name]
}
