package tritontest

import (
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// ReadConfig parses a Triton config.pbtxt. Parsing is strict: a field that inferencepb's
// ModelConfig does not define is an error, so every setting in model_repository/ is one ocrgate
// knows about.
func ReadConfig(path string) (*inferencepb.ModelConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &inferencepb.ModelConfig{}
	if err := prototext.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return c, nil
}

// ReadRepository reads every <dir>/<model>/config.pbtxt of a Triton model repository, keyed by
// model name. As in Triton, a config's name defaults to its directory's and must equal it when
// given.
func ReadRepository(dir string) (map[string]*inferencepb.ModelConfig, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	configs := make(map[string]*inferencepb.ModelConfig)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		c, err := ReadConfig(filepath.Join(dir, e.Name(), "config.pbtxt"))
		if err != nil {
			return nil, err
		}
		switch c.GetName() {
		case "":
			c.Name = e.Name()
		case e.Name():
		default:
			return nil, fmt.Errorf("%s: config name %q differs from its directory", filepath.Join(dir, e.Name()), c.GetName())
		}
		configs[e.Name()] = c
	}
	if len(configs) == 0 {
		return nil, fmt.Errorf("%s holds no model directories", dir)
	}
	return configs, nil
}
