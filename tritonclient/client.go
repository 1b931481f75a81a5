// Package tritonclient calls a Triton Inference Server, or any server that speaks the KServe v2
// gRPC protocol, for ocrgate: health and readiness, model metadata and configuration, statistics,
// system shared-memory registration, and inference on FP32 tensors.
//
// A Client holds one long-lived gRPC connection and is safe for concurrent use; create one per
// server at start and share it. New does not block and does not fail when the server is not up
// yet: the connection is made in the background and re-made after the server restarts, so a
// Client outlives its server.
//
// With Options.SharedMemory, Infer has the server write outputs into system shared-memory
// regions instead of sending them over the socket, which saves most of the transfer cost of
// large outputs when the server runs on the same host (see SharedMemoryOptions).
//
// Every call carries a deadline: the caller's, or Options.Timeout when ctx has none. Calls that
// only read state (health, metadata, configuration, statistics, shared-memory status) are retried
// with backoff, within that deadline, while the server is unavailable; Infer and the
// shared-memory register and unregister calls are not, since the server may already have acted
// on them (Infer's only retries are the shared-memory ones its documentation lists).
//
// Failures come back wrapped around one of this package's sentinel errors (ErrUnavailable,
// ErrTimeout, ErrModelNotFound, ErrInvalidTensor, ErrTooLarge, ErrCanceled, ErrSharedMemory,
// ErrServer) together with the server's message. Callers test them with errors.Is and never see
// gRPC status codes.
package tritonclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/ocrgate/ocrgate/tritonclient/inferencepb"
)

// Defaults for the zero Options.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRecvBytes = 64 << 20
	DefaultRetries      = 3
	DefaultRetryBackoff = 100 * time.Millisecond
)

// Keepalive settings that stay inside Triton's server defaults. Triton (gRPC core) treats a ping
// that arrives less than 5 minutes after the previous one while no data flows as a "bad ping",
// and after 2 of them (--grpc-http2-max-ping-strikes) closes the connection with GOAWAY
// too_many_pings; with --grpc-keepalive-permit-without-calls=0 any ping on an idle connection is
// bad. So the client pings at most every 5 minutes and only while calls are in flight. Dead
// connections are found by the per-call deadline instead, which is much shorter anyway.
const (
	keepaliveTime    = 5 * time.Minute
	keepaliveTimeout = 20 * time.Second
)

// Reconnection backoff. gRPC's default starts at 1 s and grows to 2 minutes, far too slow for a
// Triton sidecar that restarts next to us; these values bring a restarted server back within a
// fraction of a second and still cap the attempts at one every few seconds.
var reconnectBackoff = grpc.ConnectParams{
	Backoff: backoff.Config{
		BaseDelay:  100 * time.Millisecond,
		Multiplier: 1.6,
		Jitter:     0.2,
		MaxDelay:   3 * time.Second,
	},
	MinConnectTimeout: 5 * time.Second,
}

const maxRetryBackoff = time.Second

// Options configure a Client. The zero value is usable: every field has a default.
type Options struct {
	// Timeout bounds a call whose ctx has no deadline, retries included (default 30 s).
	Timeout time.Duration
	// MaxRecvBytes is the largest response message accepted (default 64 MiB). grpc-go's own
	// default, 4 MiB, is smaller than one recognizer batch's output; a larger response fails
	// with ErrTooLarge.
	MaxRecvBytes int
	// Retries is how many times a read-only call is retried while the server is unavailable
	// (default 3; negative: never).
	Retries int
	// RetryBackoff is the pause before the first retry; it doubles for each further one, up to
	// one second (default 100 ms).
	RetryBackoff time.Duration
	// DialOptions are added after the client's own, for TLS credentials, interceptors or stats
	// handlers.
	DialOptions []grpc.DialOption
	// SharedMemory lets the server write inference outputs into shared memory (default off).
	SharedMemory SharedMemoryOptions
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRecvBytes <= 0 {
		o.MaxRecvBytes = DefaultMaxRecvBytes
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = DefaultRetryBackoff
	}
	o.SharedMemory = o.SharedMemory.withDefaults()
	return o
}

// Client is a connection to one inference server. It is safe for concurrent use.
type Client struct {
	conn *grpc.ClientConn
	rpc  inferencepb.GRPCInferenceServiceClient
	opt  Options
	shm  *shmPool // nil when shared memory is off
}

// transferWindow is the HTTP/2 flow-control window (stream and connection) the client grants;
// transferBuffer the size of its socket read and write buffers.
const (
	transferWindow = 1 << 30
	transferBuffer = 1 << 20
)

// New returns a client for the server at addr ("host:port", or any gRPC target such as
// "dns:///triton:8001"). It fails only on a malformed address or options; it neither waits for
// nor requires a running server, and creates no shared-memory region yet.
func New(addr string, opt Options) (*Client, error) {
	opt = opt.withDefaults()
	if err := opt.SharedMemory.check(); err != nil {
		return nil, fmt.Errorf("triton client for %q: %w", addr, err)
	}
	pool, err := newSHMPool(opt.SharedMemory)
	if err != nil {
		return nil, fmt.Errorf("triton client for %q: %w", addr, err)
	}
	dial := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(opt.MaxRecvBytes)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time:                keepaliveTime,
			Timeout:             keepaliveTimeout,
			PermitWithoutStream: false,
		}),
		grpc.WithConnectParams(reconnectBackoff),
		// Tensors are megabytes (a recognizer batch's output is 6–50 MB). With HTTP/2's default
		// 64 KiB windows a response crawls in window-update round trips; windows as large as
		// the largest message let it stream at memory speed. Larger socket buffers cut syscalls.
		grpc.WithInitialWindowSize(transferWindow),
		grpc.WithInitialConnWindowSize(transferWindow),
		grpc.WithReadBufferSize(transferBuffer),
		grpc.WithWriteBufferSize(transferBuffer),
	}
	conn, err := grpc.NewClient(addr, append(dial, opt.DialOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("triton client for %q: %w", addr, err)
	}
	// Start connecting now, in the background, so the first call does not pay for it.
	conn.Connect()
	return &Client{conn: conn, rpc: inferencepb.NewGRPCInferenceServiceClient(conn), opt: opt, shm: pool}, nil
}

// Close closes the connection. Calls in flight fail with ErrCanceled; the Client must not be used
// afterwards. With shared memory, Close first unregisters the regions from the server (best
// effort, for at most 2 seconds), and returns once the calls in flight have let go of them and
// they are unmapped and their files removed.
func (c *Client) Close() error {
	if c.shm == nil {
		return c.conn.Close()
	}
	c.shm.unregisterAll(c)
	err := c.conn.Close()
	return errors.Join(err, c.shm.destroy())
}

// withTimeout applies Options.Timeout when ctx has no deadline of its own.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.opt.Timeout)
}

// idempotent runs a read-only call, retrying it with backoff while the server answers
// Unavailable (down, restarting, or not yet listening), until the retries or the deadline run
// out. The error is translated; op and model name the call in it.
func idempotent[T any](ctx context.Context, c *Client, op, model string, call func(context.Context) (T, error)) (T, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	pause := c.opt.RetryBackoff
	for attempt := 0; ; attempt++ {
		v, err := call(ctx)
		if err == nil {
			return v, nil
		}
		if status.Code(err) != codes.Unavailable || attempt >= c.opt.Retries {
			return v, translate(op, model, err)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, translate(op, model, err)
		case <-t.C:
		}
		pause = min(2*pause, maxRetryBackoff)
	}
}

// once runs a call that must not be repeated (shared-memory unregistration).
func once[T any](ctx context.Context, c *Client, op, model string, call func(context.Context) (T, error)) (T, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	v, err := call(ctx)
	if err != nil {
		return v, translate(op, model, err)
	}
	return v, nil
}
