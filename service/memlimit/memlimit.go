// Package memlimit works out how much memory the service may give its requests: the memory the
// process may use (its container's limit, read from the process's own cgroup, or a default),
// less what it holds at rest (the models, ONNX Runtime, the Go runtime) and a reserve for what no
// request accounts for. It also derives the Go runtime's soft memory limit from the same numbers,
// and holds the rest of the process's memory policy (TuneGC, Plan.Apply, Release): the other
// packages call it rather than runtime/debug.
package memlimit

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLimit is the memory the process plans for when no container limit applies: 1 GiB keeps
// the service a good neighbour on a small machine, and is what its figures are measured against.
const DefaultLimit = 1 << 30

// Limit is the memory the process may use and where that figure comes from.
type Limit struct {
	Bytes  int64
	Source string // the cgroup file it was read from, or why the default applies
}

// ContainerLimit returns the memory limit of the process's own cgroup, under the file system
// root (os.DirFS("/") in the service): cgroup v2's memory.max, the smallest on the way from the
// process's cgroup up to the root, or cgroup v1's memory.limit_in_bytes; ok is false when there is
// no limit ("max", v1's near-2⁶³ "unlimited", or no cgroup file at all). A limit above the
// machine's memory never binds and is reported as no limit.
func ContainerLimit(root fs.FS) (Limit, bool) {
	memTotal := meminfoTotal(root)
	data, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return Limit{}, false
	}
	var v2, v1 string
	haveV2, haveV1 := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2, haveV2 = parts[2], true
		case hasController(parts[1], "memory"):
			v1, haveV1 = parts[2], true
		}
	}
	best := Limit{}
	consider := func(file string) {
		n, ok := readLimit(root, file)
		if ok && (memTotal == 0 || n < memTotal) && (best.Bytes == 0 || n < best.Bytes) {
			best = Limit{Bytes: n, Source: "/" + file}
		}
	}
	if haveV2 {
		// In a container with its own cgroup namespace the path is "/", and the mount shows
		// the container's cgroup at the top; otherwise walk up from the process's cgroup.
		for dir := path.Clean("/" + v2); ; dir = path.Dir(dir) {
			consider(path.Join("sys/fs/cgroup", dir, "memory.max"))
			if dir == "/" {
				break
			}
		}
	}
	if haveV1 {
		consider(path.Join("sys/fs/cgroup/memory", path.Clean("/"+v1), "memory.limit_in_bytes"))
		consider("sys/fs/cgroup/memory/memory.limit_in_bytes")
	}
	return best, best.Bytes > 0
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readLimit reads a cgroup limit file: a number of bytes, or "max" (v2) for none. v1 writes no
// limit as a page-aligned number near 2⁶³; anything from 2⁶⁰ up is taken for that.
func readLimit(root fs.FS, file string) (int64, bool) {
	data, err := fs.ReadFile(root, file)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(data))
	if s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<60 {
		return 0, false
	}
	return n, true
}

// meminfoTotal returns MemTotal from /proc/meminfo in bytes, 0 when unknown.
func meminfoTotal(root fs.FS) int64 {
	data, err := fs.ReadFile(root, "proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// RSS returns the process's resident set size in bytes (VmRSS), 0 when unknown.
func RSS() int64 { return status("VmRSS") }

// PeakRSS returns the process's peak resident set size in bytes (VmHWM), 0 when unknown.
func PeakRSS() int64 { return status("VmHWM") }

func status(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// GoRuntimeBytes is the memory the Go runtime has mapped and not returned (what a Go memory
// limit counts): everything it manages, less the heap it has released to the OS.
func GoRuntimeBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// Plan is how the process divides its memory.
type Plan struct {
	Limit Limit // the memory the process may use
	// AtRest is the process's resident memory once the models are loaded, before any request;
	// AtRestGo is the Go runtime's part of it (the rest is ONNX Runtime, the model weights, the
	// binary and C libraries, which the Go limit does not see).
	AtRest, AtRestGo int64
	// Reserve is kept out of the budget for what no request's cost accounts for: connections and
	// their buffers, bodies being read before admission, goroutine stacks, the collector's own
	// memory and allocator fragmentation.
	Reserve int64
	// Budget is the memory admitted requests may hold together; MaxRequest the largest one
	// request may cost.
	Budget, MaxRequest int64
	// Bodies is the memory of request bodies being received (admitted apart).
	Bodies int64
	// RuntimeWork is the most an in-process model runtime allocates for one inference, outside
	// the Go heap (see GoLimit).
	RuntimeWork int64
	// Runs is how many OCR jobs may run at once; RuntimeReserve, when the runtime's memory is
	// reserved (Inputs.Reserved), is Runs × RuntimeWork: the most a shared arena serving that
	// many runs can hold, kept out of the budget because an arena keeps what it was once asked
	// for whoever is running.
	Runs           int
	RuntimeReserve int64
	// GoLimit is the soft memory limit for the Go runtime (debug.SetMemoryLimit), 0 when the
	// environment sets GOMEMLIMIT itself.
	GoLimit int64
}

// Inputs are what a Plan is derived from.
type Inputs struct {
	Limit            Limit
	AtRest, AtRestGo int64
	// Budget and MaxRequest as configured; 0 derives them.
	Budget, MaxRequest int64
	// Bodies is the memory set aside for request bodies being received, admitted apart from
	// the requests' budget (it is kept out of a derived budget).
	Bodies      int64
	RuntimeWork int64
	// Runs is how many OCR jobs may run at once as configured. Reserved says the runtime's
	// working memory comes from one arena that keeps it (ONNX Runtime's shared arena): it is
	// reserved for Runs runs up front, fewer when that would leave the requests less than a
	// third of the memory (and at least one), and request costs leave it out.
	Runs     int
	Reserved bool
	// GOMEMLIMIT is the environment's value; when set it is left alone.
	GOMEMLIMIT string
	// MinRequest is the largest job the service must be able to admit at all (a PDF's first
	// job holds the PDF engine's whole memory cap). A derived MaxRequest below it is raised to
	// it, as far as the limit holds such a job running alone: admission lets a request over the
	// budget wait until nothing else runs.
	MinRequest int64
}

// reserve is kept out of the budget: 64 MiB, or 5 % of the limit when that is more.
func reserve(limit int64) int64 { return max(64<<20, limit/20) }

// minBudget is the least budget a plan leaves requests: with less, every request runs alone,
// which is slow but safe.
const minBudget = 64 << 20

// Derive divides the memory. Without a configured budget, the budget is what the limit leaves
// after the process at rest, the reserve and, when the runtime's memory is reserved, the runtime
// reserve (at least 64 MiB). With one, the limit it implies (budget + at rest + runtime reserve +
// reserve) is used when there is no container limit. The Go limit is the limit less what the
// process holds outside Go at rest and the runtime's memory (the reserve, or one inference's):
// the Go heap may use the rest, and the collector works harder only as the process nears its
// limit. The request budget, not the Go limit, is what keeps the sum of live memory within
// bounds; the Go limit keeps garbage from adding to it.
func Derive(in Inputs) Plan {
	p := Plan{Limit: in.Limit, AtRest: in.AtRest, AtRestGo: in.AtRestGo, RuntimeWork: in.RuntimeWork, Runs: max(1, in.Runs), Bodies: in.Bodies}
	if p.Limit.Bytes <= 0 {
		p.Limit = Limit{Bytes: DefaultLimit, Source: "default (no container memory limit)"}
		if in.Budget > 0 {
			rr := int64(0)
			if in.Reserved {
				rr = int64(p.Runs) * in.RuntimeWork
			}
			base := in.Budget + in.Bodies + in.AtRest + rr
			p.Limit = Limit{Bytes: base + reserve(base), Source: "OCRGATE_MEMORY_BUDGET + bodies + at rest + runtime reserve + reserve"}
		}
	}
	p.Reserve = reserve(p.Limit.Bytes)
	if in.Reserved && in.RuntimeWork > 0 {
		// The reserve may take at most two thirds of what the limit leaves: the requests' own
		// memory (decoded pages, tensors) needs the rest, and more runs than that would only
		// queue behind a budget too small for a scan.
		avail := p.Limit.Bytes - p.AtRest - p.Reserve
		fit := (avail - max(minBudget, avail/3)) / in.RuntimeWork
		p.Runs = int(max(1, min(int64(p.Runs), fit)))
		p.RuntimeReserve = int64(p.Runs) * in.RuntimeWork
	}
	p.Budget = in.Budget
	if p.Budget <= 0 {
		p.Budget = max(minBudget, p.Limit.Bytes-p.AtRest-p.Reserve-p.RuntimeReserve-p.Bodies)
	}
	p.MaxRequest = in.MaxRequest
	if p.MaxRequest <= 0 {
		p.MaxRequest = p.Budget
		if p.MaxRequest < in.MinRequest {
			alone := p.Limit.Bytes - p.AtRest - p.Reserve - p.RuntimeReserve
			p.MaxRequest = max(p.MaxRequest, min(in.MinRequest, alone))
		}
	}
	if in.GOMEMLIMIT == "" {
		nonGo := max(0, in.AtRest-in.AtRestGo)
		p.GoLimit = max(minBudget, p.Limit.Bytes-nonGo-max(in.RuntimeWork, p.RuntimeReserve))
	}
	return p
}

// LogValue logs the plan in MiB.
func (p Plan) LogValue() slog.Value {
	mib := func(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }
	goLimit := "GOMEMLIMIT from the environment"
	if p.GoLimit > 0 {
		goLimit = mib(p.GoLimit)
	}
	return slog.GroupValue(
		slog.String("limit", mib(p.Limit.Bytes)),
		slog.String("limit_from", p.Limit.Source),
		slog.String("at_rest", mib(p.AtRest)),
		slog.String("at_rest_go", mib(p.AtRestGo)),
		slog.String("reserve", mib(p.Reserve)),
		slog.String("budget", mib(p.Budget)),
		slog.String("bodies", mib(p.Bodies)),
		slog.String("max_request", mib(p.MaxRequest)),
		slog.String("runtime_work", mib(p.RuntimeWork)),
		slog.Int("runs", p.Runs),
		slog.String("runtime_reserve", mib(p.RuntimeReserve)),
		slog.String("go_limit", goLimit),
	)
}

// Growth runs fn and returns how far the process's resident memory rose above where it started,
// sampled every interval (after a collection that returns the free heap, so the start is what
// is live). Memory outside the Go heap (ONNX Runtime, the PDF engine's instances) counts too,
// which is why tests of hostile inputs measure it rather than the heap.
func Growth(every time.Duration, fn func()) int64 {
	runtime.GC()
	Release()
	base := RSS()
	var peak atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			if g := RSS() - base; g > peak.Load() {
				peak.Store(g)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(done)
	wg.Wait()
	if g := RSS() - base; g > peak.Load() {
		peak.Store(g)
	}
	return peak.Load()
}
