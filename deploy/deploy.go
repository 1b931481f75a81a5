// Package deploy holds the tests of ocrgate's deployment files — the Helm chart (deploy/chart) and
// the Dockerfile, image build script and compose files (deploy/container) — in a module of their
// own, so that the Helm, Kubernetes, BuildKit and Compose libraries they check with stay out of the
// service's go.mod. Nothing here imports the service: what the tests need from it is read as text.
package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// versionLine is the declaration in service/server/version.go that the image build script reads too.
var versionLine = regexp.MustCompile(`(?m)^const Version = "([^"\s]+)"$`)

// ServiceVersion returns the version constant of service/server/version.go under repoRoot, the one place
// the version is written. It reads the file as text rather than importing the service, which would
// pull the whole service module into this one.
func ServiceVersion(repoRoot string) (string, error) {
	path := filepath.Join(repoRoot, "service", "server", "version.go")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	m := versionLine.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("%s has no line %q", path, `const Version = "x.y.z"`)
	}
	return string(m[1]), nil
}
