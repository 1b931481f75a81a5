// Command ocrgate-prepare writes the prepared models the service loads: each fetched PaddleOCR
// model rewritten once into the equivalent faster graph, stamped and checksummed, beside the
// original in the model directory (see internal/modelprep). scripts/fetch_models.sh runs it after
// fetching, so `make run` and `make test` always find prepared models; running it again only
// verifies them.
//
//	ocrgate-prepare [-dir DIR]   DIR defaults to $OCRGATE_HOME/models (~/.ocrgate/models)
//
// It is its own command so that the service binary carries no graph-rewriting code.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ocrgate/ocrgate/internal/modelprep"
	"github.com/ocrgate/ocrgate/service/config"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ocrgate-prepare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", defaultDir(getenv), "model directory holding the fetched models; prepared models are written beside them")
	langs := fs.String("langs", getenv("OCRGATE_LANGS"), "language packs to prepare besides the default models, comma-separated (ja, ko, zh-Hant, en); default $OCRGATE_LANGS")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	models := slices.Clone(modelprep.Models)
	for _, lang := range strings.Split(*langs, ",") {
		if lang = strings.TrimSpace(lang); lang == "" || lang == "ch" {
			continue
		}
		pack, ok := modelprep.PackFor(lang)
		if !ok {
			fmt.Fprintf(stderr, "ocrgate-prepare: no language pack %q (ja, ko, zh-Hant, en)\n", lang)
			return 2
		}
		models = append(models, pack.Model)
	}
	results, err := modelprep.Dir(*dir, models)
	for _, r := range results {
		switch {
		case r.Written && r.Int8:
			fmt.Fprintf(stdout, "ocrgate-prepare: wrote %s (%d convolutions int8)\n", r.Path, len(r.Model.Int8))
		case r.Written:
			fmt.Fprintf(stdout, "ocrgate-prepare: wrote %s (%d nodes; %+v)\n", r.Path, r.Rewrites.NodesAfter, r.Rewrites)
		default:
			fmt.Fprintf(stdout, "ocrgate-prepare: %s present and verified\n", r.Path)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "ocrgate-prepare: %v\n", err)
		return 1
	}
	return 0
}

// defaultDir is $OCRGATE_HOME/models, the service's default model directory.
func defaultDir(getenv func(string) string) string {
	return filepath.Join(config.Home(getenv), "models")
}
