//go:build integration

package server_test

import "testing"

// TestJob300Pages: the 300-page scanned PDF as one job, every page once and as /ocr reads
// it (go test -tags integration -run TestJob300Pages ./service/server; some ten minutes on two
// cores).
func TestJob300Pages(t *testing.T) {
	needModels(t)
	jobMatchesSync(t, 300)
}
