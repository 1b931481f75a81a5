// Command triton-standin is a TEST STAND-IN for NVIDIA Triton Inference Server, never part of the
// product: the image test (deploy/image) packages it as the image ocrgate-test/triton-standin and
// runs it where compose.yaml and the Helm chart run Triton, so the sidecar topology is tested for
// real on a machine that cannot run Triton (no registry, no NVIDIA image). The service binary does
// not link it or the packages it serves with (a deploy test checks that).
//
// It serves the KServe v2 gRPC protocol with tritonclient/tritontest — the same in-process server
// the Go tests use, which validates requests and answers errors as Triton does and writes outputs
// into clients' system shared-memory regions — and runs the PP-OCR models of a Triton model
// repository (<repo>/ppocr_{det,rec,cls}/{config.pbtxt,1/model.onnx}) on ONNX Runtime, the library
// Triton's onnxruntime backend wraps. It takes tritonserver's command line, so the image is a
// drop-in for the chart's and compose.yaml's `tritonserver --model-repository=/models ...`:
//
//	tritonserver --model-repository=DIR [--http-port=8000] [--grpc-port=8001] [--metrics-port=8002]
//	             [--exit-on-error=true] [--strict-readiness=true] [--allow-client-shm=false]
//	             [--log-verbose=0]
//
// As Triton does, it loads every model before it opens its endpoints, and answers
// /v2/health/live and /v2/health/ready on the HTTP port. Its metrics port serves the stand-in's
// own counters (triton_standin_*: calls by RPC, registered shared-memory regions, outputs written
// through shared memory), which is how the image test tells gRPC and shared-memory traffic apart;
// they are not Triton's metric names. SIGTERM or SIGINT stops it (exit 0).
//
// TRITON_STANDIN_ORT_LIB names the ONNX Runtime library (default
// /opt/triton-standin/lib/libonnxruntime.so.1, where the image puts the ocrgate image's copy).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/ocrgate/ocrgate/internal/ppocrtest"
	"github.com/ocrgate/ocrgate/service/ocr"
	"github.com/ocrgate/ocrgate/service/onnxrt"
	"github.com/ocrgate/ocrgate/tritonclient/tritontest"
)

// defaultORTLib is where the stand-in image puts ONNX Runtime.
const defaultORTLib = "/opt/triton-standin/lib/libonnxruntime.so.1"

// rpcs are the RPCs whose calls the metrics port counts.
var rpcs = []string{
	"ServerLive", "ServerReady", "ModelReady", "ModelMetadata", "ModelConfig", "ModelInfer",
	"SystemSharedMemoryRegister", "SystemSharedMemoryUnregister", "SystemSharedMemoryStatus",
}

// options are tritonserver's flags that the stand-in honours.
type options struct {
	repository      string
	httpPort        int
	grpcPort        int
	metricsPort     int
	exitOnError     bool
	strictReadiness bool
	allowClientSHM  bool
	logVerbose      int
	ortLib          string
}

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stderr))
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("tritonserver (test stand-in)", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.repository, "model-repository", "", "the model repository (required)")
	fs.IntVar(&o.httpPort, "http-port", 8000, "HTTP port: /v2/health/live, /v2/health/ready")
	fs.IntVar(&o.grpcPort, "grpc-port", 8001, "gRPC port: the KServe v2 inference service")
	fs.IntVar(&o.metricsPort, "metrics-port", 8002, "metrics port: the stand-in's counters at /metrics")
	fs.BoolVar(&o.exitOnError, "exit-on-error", true, "exit when a model fails to load")
	fs.BoolVar(&o.strictReadiness, "strict-readiness", true, "ready only when every model is (the stand-in is always strict)")
	fs.BoolVar(&o.allowClientSHM, "allow-client-shm", false, "let clients register system shared-memory regions")
	fs.IntVar(&o.logVerbose, "log-verbose", 0, "log each RPC when > 0")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.repository == "" {
		return o, errors.New("--model-repository is required")
	}
	for _, p := range []int{o.httpPort, o.grpcPort, o.metricsPort} {
		if p <= 0 || p > 65535 {
			return o, fmt.Errorf("port %d out of range", p)
		}
	}
	o.ortLib = getenv("TRITON_STANDIN_ORT_LIB")
	if o.ortLib == "" {
		o.ortLib = defaultORTLib
	}
	return o, nil
}

func run(args []string, getenv func(string) string, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	o, err := parseFlags(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		log.Error("triton-standin: bad command line", "err", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, o, log); err != nil {
		log.Error("triton-standin: stopped", "err", err)
		return 1
	}
	return 0
}

// load opens ONNX Runtime on the repository's PP-OCR models and returns them as test-server
// models, configured from the repository's config.pbtxt files.
func load(o options, log *slog.Logger) (*onnxrt.Runtime, []tritontest.Model, error) {
	files := make(map[ocr.Model]string, len(ppocrtest.PPOCRModels))
	for name, m := range ppocrtest.PPOCRModels {
		f := filepath.Join(o.repository, name, "1", "model.onnx")
		if _, err := os.Stat(f); err != nil {
			return nil, nil, fmt.Errorf("model %s: %w", name, err)
		}
		files[m] = f
	}
	rt, err := onnxrt.Open(onnxrt.Options{LibraryPath: o.ortLib, Models: files, Logger: log})
	if err != nil {
		return nil, nil, fmt.Errorf("open ONNX Runtime (%s): %w", o.ortLib, err)
	}
	models, err := ppocrtest.ONNXModels(rt, o.repository)
	if err != nil {
		_ = rt.Close() // err is what the caller acts on
		return nil, nil, err
	}
	return rt, models, nil
}

func serve(ctx context.Context, o options, log *slog.Logger) error {
	start := time.Now()
	rt, models, err := load(o, log)
	if err != nil {
		if o.exitOnError {
			return err
		}
		// Triton without --exit-on-error keeps serving, not ready; the stand-in has nothing to
		// serve without its models, so it says so and waits to be stopped.
		log.Error("models failed to load; serving nothing until stopped", "err", err)
		<-ctx.Done()
		return nil
	}
	defer func() { _ = rt.Close() }() // serving is over; the process ends
	for _, m := range models {
		log.Info("successfully loaded", "model", m.Config.GetName(), "version", 1, "repository", o.repository)
	}
	srv, err := tritontest.Listen(net.JoinHostPort("", strconv.Itoa(o.grpcPort)), models...)
	if err != nil {
		return err
	}
	defer srv.Stop()
	if !o.allowClientSHM {
		srv.Fail("SystemSharedMemoryRegister", codes.PermissionDenied,
			"this server was started without --allow-client-shm=true: system shared memory is not allowed", -1)
	}
	log.Info("Started GRPCInferenceService", "addr", srv.Addr(), "models", len(models), "load_seconds", time.Since(start).Seconds())

	ready := func() bool { return ctx.Err() == nil }
	errc := make(chan error, 2)
	health := http.NewServeMux()
	health.HandleFunc("GET /v2/health/live", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	health.HandleFunc("GET /v2/health/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			w.WriteHeader(http.StatusBadRequest) // Triton answers 400 while not ready
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	metrics := http.NewServeMux()
	metrics.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# The test stand-in's own counters (not Triton's metric names).\n")
		fmt.Fprintf(w, "triton_standin_ready %d\n", map[bool]int{false: 0, true: 1}[ready()])
		for _, rpc := range rpcs {
			fmt.Fprintf(w, "triton_standin_rpc_total{rpc=%q} %d\n", rpc, srv.Calls(rpc))
		}
		fmt.Fprintf(w, "triton_standin_shm_regions %d\n", srv.SharedMemoryRegions())
		fmt.Fprintf(w, "triton_standin_shm_outputs_total %d\n", srv.SharedMemoryOutputs())
	})
	servers := []*http.Server{}
	for _, s := range []struct {
		name string
		port int
		mux  *http.ServeMux
	}{{"HTTPService", o.httpPort, health}, {"Metrics Service", o.metricsPort, metrics}} {
		hs := &http.Server{Addr: net.JoinHostPort("", strconv.Itoa(s.port)), Handler: s.mux, ReadHeaderTimeout: 5 * time.Second}
		ln, err := net.Listen("tcp", hs.Addr)
		if err != nil {
			return err
		}
		servers = append(servers, hs)
		log.Info("Started "+s.name, "addr", ln.Addr().String())
		go func() { errc <- hs.Serve(ln) }()
	}
	if o.logVerbose > 0 {
		go logCalls(ctx, srv, log)
	}

	select {
	case <-ctx.Done():
		log.Info("signal received: stopping")
	case err = <-errc:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, hs := range servers {
		_ = hs.Shutdown(shutdown)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// logCalls logs the RPC counters once a second while they change (--log-verbose).
func logCalls(ctx context.Context, srv *tritontest.Server, log *slog.Logger) {
	var last string
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		var parts []string
		for _, rpc := range slices.Sorted(slices.Values(rpcs)) {
			parts = append(parts, fmt.Sprintf("%s=%d", rpc, srv.Calls(rpc)))
		}
		line := strings.Join(parts, " ") + fmt.Sprintf(" shm_outputs=%d", srv.SharedMemoryOutputs())
		if line != last {
			log.Info("calls", "counts", line)
			last = line
		}
	}
}
