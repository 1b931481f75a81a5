//go:build faults

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/ocrgate/ocrgate/service/work"
)

// This file is built only with the faults tag (go build -tags faults), into a binary for the
// soak (ocrgate-loadgen -faults), never into the service: it panics every Nth unit of work of the
// kinds OCRGATE_FAULTS names, "unit=N,unit=N" (e.g. "recognizer batch=40,document page=7"), so
// that the soak sees each injected panic answered as its unit's 500 and nothing else fail.

func init() {
	spec := os.Getenv("OCRGATE_FAULTS")
	if spec == "" {
		return
	}
	every := map[string]int64{}
	for _, item := range strings.Split(spec, ",") {
		unit, n, ok := strings.Cut(item, "=")
		k, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		if !ok || err != nil || k < 1 {
			fmt.Fprintf(os.Stderr, "OCRGATE_FAULTS: %q is not unit=N\n", item)
			os.Exit(2)
		}
		every[strings.TrimSpace(unit)] = k
	}
	counts := map[string]*atomic.Int64{}
	for unit := range every {
		counts[unit] = new(atomic.Int64)
	}
	faultContext = func(ctx context.Context) context.Context {
		return work.WithFault(ctx, func(unit string) {
			if c, ok := counts[unit]; ok && c.Add(1)%every[unit] == 0 {
				panic("injected by OCRGATE_FAULTS into a " + unit)
			}
		})
	}
}
