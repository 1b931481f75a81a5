package memlimit

import (
	"runtime"
	"testing"
	"testing/fstest"
	"time"
)

const meminfo = "MemTotal:       24576000 kB\nMemFree:        20000000 kB\n"

func TestContainerLimit(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name   string
		fs     fstest.MapFS
		want   int64
		source string
	}{
		{"v2, own namespace", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"proc/meminfo":             file(meminfo),
			"sys/fs/cgroup/memory.max": file("536870912\n"),
		}, 512 << 20, "/sys/fs/cgroup/memory.max"},
		{"v2, no limit", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("max\n"),
		}, 0, ""},
		{"v2, limit on a parent", fstest.MapFS{
			"proc/self/cgroup": file("0::/kubepods/pod1/c1\n"),
			"proc/meminfo":     file(meminfo),
			"sys/fs/cgroup/kubepods/pod1/c1/memory.max": file("max\n"),
			"sys/fs/cgroup/kubepods/pod1/memory.max":    file("1073741824\n"),
			"sys/fs/cgroup/kubepods/memory.max":         file("4294967296\n"),
		}, 1 << 30, "/sys/fs/cgroup/kubepods/pod1/memory.max"},
		{"v1", fstest.MapFS{
			"proc/self/cgroup": file("12:pids:/docker/abc\n4:memory:/docker/abc\n1:cpu,cpuacct:/docker/abc\n"),
			"proc/meminfo":     file(meminfo),
			"sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": file("268435456\n"),
		}, 256 << 20, "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes"},
		{"v1 in its own namespace", fstest.MapFS{
			"proc/self/cgroup": file("4:memory:/\n0::/\n"),
			"proc/meminfo":     file(meminfo),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("805306368\n"),
		}, 768 << 20, "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{"v1 unlimited", fstest.MapFS{
			"proc/self/cgroup": file("4:memory:/process_api/x\n"),
			"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": file("9223372036854771712\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes":               file("9223372036854771712\n"),
		}, 0, ""},
		{"limit above the machine's memory", fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"proc/meminfo":             file(meminfo),
			"sys/fs/cgroup/memory.max": file("68719476736\n"),
		}, 0, ""},
		{"no cgroup at all", fstest.MapFS{}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ContainerLimit(tt.fs)
			if ok != (tt.want > 0) || got.Bytes != tt.want || got.Source != tt.source {
				t.Fatalf("got %+v, %v; want %d from %q", got, ok, tt.want, tt.source)
			}
		})
	}
}

func TestDerive(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name                               string
		in                                 Inputs
		limit, budget, maxRequest, goLimit int64
	}{
		{"no container: 1 GiB less at rest and reserve",
			Inputs{AtRest: 100 * mib, AtRestGo: 14 * mib, RuntimeWork: 537 * mib},
			1024 * mib, 860 * mib, 860 * mib, (1024 - 86 - 537) * mib},
		{"container limit: reserve is 5 %",
			Inputs{Limit: Limit{Bytes: 2048 * mib, Source: "cgroup"}, AtRest: 100 * mib, AtRestGo: 14 * mib, RuntimeWork: 537 * mib},
			2048 * mib, 2048*mib - 100*mib - 2048*mib/20, 2048*mib - 100*mib - 2048*mib/20, (2048 - 86 - 537) * mib},
		{"budget configured, no container: the limit follows",
			Inputs{AtRest: 100 * mib, Budget: 1500 * mib, GOMEMLIMIT: ""},
			1600*mib + 80*mib, 1500 * mib, 1500 * mib, 1680*mib - 100*mib},
		{"per-request limit above the budget",
			Inputs{AtRest: 100 * mib, Budget: 500 * mib, MaxRequest: 800 * mib},
			600*mib + 64*mib, 500 * mib, 800 * mib, 664*mib - 100*mib},
		{"a 768 MiB container: a PDF's first job (the engine's cap) runs alone, over the budget",
			Inputs{Limit: Limit{Bytes: 768 * mib}, AtRest: 146 * mib, AtRestGo: 30 * mib, RuntimeWork: 206 * mib, Runs: 2, Reserved: true, Bodies: 80 * mib, MinRequest: 328 * mib},
			768 * mib, (768 - 146 - 64 - 206 - 80) * mib, 328 * mib, (768 - 116 - 206) * mib},
		{"a container too small for a PDF's first job: as much as runs alone",
			Inputs{Limit: Limit{Bytes: 640 * mib}, AtRest: 146 * mib, AtRestGo: 30 * mib, RuntimeWork: 206 * mib, Runs: 1, Reserved: true, Bodies: 80 * mib, MinRequest: 328 * mib},
			640 * mib, (640 - 146 - 64 - 206 - 80) * mib, (640 - 146 - 64 - 206) * mib, (640 - 116 - 206) * mib},
		{"a configured per-request limit is kept",
			Inputs{Limit: Limit{Bytes: 768 * mib}, AtRest: 146 * mib, AtRestGo: 30 * mib, MaxRequest: 200 * mib, MinRequest: 328 * mib},
			768 * mib, (768 - 146 - 64) * mib, 200 * mib, (768 - 116) * mib},
		{"GOMEMLIMIT set by the environment is left alone",
			Inputs{AtRest: 100 * mib, GOMEMLIMIT: "900MiB"},
			1024 * mib, 860 * mib, 860 * mib, 0},
		{"runtime reserved for two runs: out of the budget and the Go limit",
			Inputs{AtRest: 150 * mib, AtRestGo: 36 * mib, RuntimeWork: 206 * mib, Runs: 2, Reserved: true},
			1024 * mib, (1024 - 150 - 64 - 412) * mib, (1024 - 150 - 64 - 412) * mib, (1024 - 114 - 412) * mib},
		{"runtime reserved: sixteen cores get the runs that leave requests a third",
			Inputs{AtRest: 150 * mib, AtRestGo: 36 * mib, RuntimeWork: 206 * mib, Runs: 16, Reserved: true},
			1024 * mib, (1024 - 150 - 64 - 412) * mib, (1024 - 150 - 64 - 412) * mib, (1024 - 114 - 412) * mib},
		{"runtime reserved: a 2 GiB pod on a 16-core node",
			Inputs{Limit: Limit{Bytes: 2048 * mib}, AtRest: 150 * mib, AtRestGo: 36 * mib, RuntimeWork: 206 * mib, Runs: 16, Reserved: true},
			2048 * mib, 2048*mib - 150*mib - 2048*mib/20 - 5*206*mib, 2048*mib - 150*mib - 2048*mib/20 - 5*206*mib, (2048 - 114 - 5*206) * mib},
		{"runtime reserved: 512 MiB still runs one job",
			Inputs{Limit: Limit{Bytes: 512 * mib}, AtRest: 150 * mib, AtRestGo: 36 * mib, RuntimeWork: 206 * mib, Runs: 2, Reserved: true},
			512 * mib, (512 - 150 - 64 - 206) * mib, (512 - 150 - 64 - 206) * mib, (512 - 114 - 206) * mib},
		{"runtime reserved with a configured budget: the limit follows",
			Inputs{AtRest: 100 * mib, Budget: 400 * mib, RuntimeWork: 200 * mib, Runs: 2, Reserved: true},
			900*mib + 64*mib, 400 * mib, 400 * mib, 964*mib - 100*mib - 400*mib},
		{"a limit too small for the models still admits one request at a time",
			Inputs{Limit: Limit{Bytes: 128 * mib}, AtRest: 100 * mib},
			128 * mib, 64 * mib, 64 * mib, 64 * mib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Derive(tt.in)
			if p.Limit.Bytes != tt.limit || p.Budget != tt.budget || p.MaxRequest != tt.maxRequest || p.GoLimit != tt.goLimit {
				t.Fatalf("limit %d budget %d max request %d go limit %d MiB; want %d %d %d %d",
					p.Limit.Bytes/mib, p.Budget/mib, p.MaxRequest/mib, p.GoLimit/mib,
					tt.limit/mib, tt.budget/mib, tt.maxRequest/mib, tt.goLimit/mib)
			}
		})
	}
}

func TestRSS(t *testing.T) {
	rss := RSS()
	peak := PeakRSS()
	if rss <= 0 || peak < rss || GoRuntimeBytes() <= 0 {
		t.Fatalf("RSS %d, peak %d, Go %d", rss, peak, GoRuntimeBytes())
	}
}

func TestGrowth(t *testing.T) {
	var keep []byte
	g := Growth(5*time.Millisecond, func() {
		keep = make([]byte, 64<<20)
		for i := range keep {
			keep[i] = byte(i)
		}
	})
	if g < 48<<20 || g > 256<<20 {
		t.Errorf("touching 64 MiB grew the RSS by %d MiB", g>>20)
	}
	if Growth(5*time.Millisecond, func() {}) > 16<<20 {
		t.Error("doing nothing grew the RSS by more than 16 MiB")
	}
	runtime.KeepAlive(keep)
}
