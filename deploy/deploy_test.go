package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestServiceVersion(t *testing.T) {
	v, err := ServiceVersion(filepath.Join(".."))
	if err != nil {
		t.Fatal(err)
	}
	if v == "" {
		t.Fatal("empty version")
	}
	tests := []struct {
		name, src, want string
		wantErr         bool
	}{
		{"plain", "package service\n\nconst Version = \"1.2.3\"\n", "1.2.3", false},
		{"pre-release", "package service\n\n// doc\nconst Version = \"9.8.7-rc.1\"\n", "9.8.7-rc.1", false},
		{"var, not const", "package service\n\nvar Version = \"1.2.3\"\n", "", true},
		{"no version", "package service\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "service", "server"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "service", "server", "version.go"), []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ServiceVersion(root)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ServiceVersion = %q, %v; want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestServerLinksNoTestStandIn checks that the service binary links neither the Triton test
// stand-in that the image test packages (cmd/triton-standin) nor the KServe v2 test server and
// model wiring it is made of: they are test tools, never shipped.
func TestServerLinksNoTestStandIn(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./cmd/ocrgate")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/ocrgate: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/ocrgate/ocrgate/tritonclient") {
		t.Fatalf("go list printed no tritonclient among %d packages: the check would prove nothing", len(deps))
	}
	for _, p := range deps {
		for _, banned := range []string{"/tritonclient/tritontest", "/internal/ppocrtest", "/internal/ocrtest", "/cmd/triton-standin"} {
			if strings.HasSuffix(p, banned) {
				t.Errorf("the service binary links %s", p)
			}
		}
	}
}
