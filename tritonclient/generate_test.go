package tritonclient

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates inferencepb with the pinned tools into a temporary
// directory and fails when the committed code differs, or when the tools cannot be had: stale
// stubs must never pass silently.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the pinned protoc and plugins, which `make test` installs: skipped in -short mode")
	}
	script, err := filepath.Abs(filepath.Join("..", "scripts", "gen_proto.sh"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), script, "--check").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --check: %v\n%s\n(run scripts/gen_proto.sh to regenerate; `make proto-tools` installs the pinned tools)", script, err, out)
	}
}
