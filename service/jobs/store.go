// Package jobs runs big documents as asynchronous jobs on NATS JetStream: the document is stored
// in an object store, each of its pages is one task in a work-queue stream, and the job's state
// and its pages' answers live in key-value buckets. Every process that opens a Store runs page
// workers, so one document's pages spread over every replica that shares the NATS server; a task
// whose worker dies is redelivered, and a page's answer is counted once whatever the
// redeliveries (a page is a bit in the job's record, set by compare-and-swap).
//
// By default the NATS server is embedded in the process with JetStream on a local directory and
// no network port; Config.URL points at an external NATS instead.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sys/unix"
)

// Config sets up a Store. Zero fields take the defaults of withDefaults.
type Config struct {
	// URL is an external NATS server ("nats://host:4222"); empty embeds one in the process.
	URL string
	// Dir is the embedded server's JetStream directory.
	Dir string
	// Listen, when not empty ("127.0.0.1:4222"), makes the embedded server listen there, so
	// that other processes can share it; empty listens on no port.
	Listen string
	// Replicas of every stream and bucket: 1 embedded, 3 on a three-node cluster.
	Replicas int
	// TTL is how long a job's record and answers are kept after their last change.
	TTL time.Duration
	// MaxPages is the most pages one job may read.
	MaxPages int
	// MaxBytes is the largest document a job may store.
	MaxBytes int64
	// MaxInFlight is the most unfinished jobs one owner (API key) may have.
	MaxInFlight int
	// StoreBytes bounds the documents stored at once; a full store refuses new jobs.
	StoreBytes int64
	// Workers is how many pages this process reads at once for jobs (0: none, a replica that
	// only accepts jobs).
	Workers int
	// Attempts is how many times a page is tried before it fails alone.
	Attempts int
	// AckWait is how long a task may go without word from its worker before it is given to
	// another (a worker at work says so every AckWait/3).
	AckWait time.Duration
	// Timeout bounds every call to NATS.
	Timeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Dir == "" {
		home, _ := os.UserHomeDir()
		c.Dir = filepath.Join(home, ".ocrgate", "jobs")
	}
	c.Replicas = max(1, c.Replicas)
	if c.TTL <= 0 {
		c.TTL = 24 * time.Hour
	}
	if c.MaxPages <= 0 {
		c.MaxPages = 2000
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = 256 << 20
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 10
	}
	if c.StoreBytes <= 0 {
		c.StoreBytes = 4 << 30
	}
	if c.Attempts <= 0 {
		c.Attempts = 3
	}
	if c.AckWait <= 0 {
		c.AckWait = 30 * time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	return c
}

// Names of the streams and buckets.
const (
	taskStream   = "OCRGATE_TASKS"
	taskSubject  = "ocrgate.tasks." // + job id
	consumerName = "ocrgate-workers"
	jobBucket    = "ocrgate_jobs"
	pageBucket   = "ocrgate_pages"
	idemBucket   = "ocrgate_idem"
	docBucket    = "ocrgate_docs"
	// maxValue is the largest page answer stored (a page's regions with their words).
	maxValue = 8 << 20
)

// Store is the jobs' storage and queue on one NATS connection.
type Store struct {
	cfg   Config
	log   *slog.Logger
	ns    *server.Server // embedded; nil on an external NATS
	lock  *os.File       // the embedded server's hold on its directory
	nc    *nats.Conn
	js    jetstream.JetStream
	tasks jetstream.Stream
	cons  jetstream.Consumer
	jobs  jetstream.KeyValue
	pages jetstream.KeyValue
	idem  jetstream.KeyValue
	docs  jetstream.ObjectStore
}

// ErrUnavailable is NATS not answering.
var ErrUnavailable = errors.New("the job store is unavailable")

// Open starts the embedded NATS server (or connects to Config.URL) and creates the streams and
// buckets the jobs need, or opens those that exist: a restarted process finds its jobs there.
func Open(ctx context.Context, cfg Config, log *slog.Logger) (*Store, error) {
	cfg = cfg.withDefaults()
	s := &Store{cfg: cfg, log: log}
	var err error
	if cfg.URL == "" {
		if s.lock, err = lockDir(cfg.Dir); err != nil {
			return nil, err
		}
		if s.ns, err = embedded(cfg); err != nil {
			s.close()
			return nil, err
		}
		s.nc, err = nats.Connect("", nats.InProcessServer(s.ns), nats.Name("ocrgate"), nats.MaxReconnects(-1))
	} else {
		s.nc, err = nats.Connect(cfg.URL, nats.Name("ocrgate"), nats.MaxReconnects(-1), nats.Timeout(cfg.Timeout))
	}
	if err != nil {
		s.close()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := s.setup(ctx); err != nil {
		s.close()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return s, nil
}

// embedded starts a NATS server in the process with JetStream on cfg.Dir.
func embedded(cfg Config) (*server.Server, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("jobs directory: %w", err)
	}
	opt := &server.Options{
		ServerName: "ocrgate",
		JetStream:  true,
		StoreDir:   cfg.Dir,
		MaxPayload: maxValue + 64<<10,
		NoSigs:     true,
		NoLog:      true,
		DontListen: cfg.Listen == "",
		// The store holds documents (StoreBytes) plus the answers: a bound on the disk and
		// none on memory (every stream is on file).
		JetStreamMaxStore:  cfg.StoreBytes*2 + 1<<30,
		JetStreamMaxMemory: 64 << 20,
	}
	if cfg.Listen != "" {
		host, port, err := splitHostPort(cfg.Listen)
		if err != nil {
			return nil, err
		}
		opt.Host, opt.Port = host, port
	}
	ns, err := server.NewServer(opt)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("%w: the embedded NATS server did not start", ErrUnavailable)
	}
	return ns, nil
}

func (s *Store) setup(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 4*s.cfg.Timeout)
	defer cancel()
	var err error
	if s.js, err = jetstream.New(s.nc, jetstream.WithDefaultTimeout(s.cfg.Timeout)); err != nil {
		return err
	}
	s.tasks, err = s.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: taskStream, Subjects: []string{taskSubject + ">"}, Retention: jetstream.WorkQueuePolicy,
		Storage: jetstream.FileStorage, Replicas: s.cfg.Replicas, MaxAge: s.cfg.TTL,
	})
	if err != nil {
		return fmt.Errorf("task stream: %w", err)
	}
	s.cons, err = s.tasks.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: consumerName, AckPolicy: jetstream.AckExplicitPolicy, AckWait: s.cfg.AckWait,
		// Attempts are counted by the worker, which records the page's failure at the last one;
		// the server's own bound is a backstop past it.
		MaxDeliver: s.cfg.Attempts + 2, MaxAckPending: 4096,
	})
	if err != nil {
		return fmt.Errorf("task consumer: %w", err)
	}
	kv := func(name string, size int32) (jetstream.KeyValue, error) {
		return s.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: name, TTL: s.cfg.TTL, Storage: jetstream.FileStorage, Replicas: s.cfg.Replicas, MaxValueSize: size,
		})
	}
	if s.jobs, err = kv(jobBucket, 1<<20); err != nil {
		return fmt.Errorf("job bucket: %w", err)
	}
	if s.pages, err = kv(pageBucket, maxValue); err != nil {
		return fmt.Errorf("page bucket: %w", err)
	}
	if s.idem, err = kv(idemBucket, 1024); err != nil {
		return fmt.Errorf("idempotency bucket: %w", err)
	}
	s.docs, err = s.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: docBucket, TTL: s.cfg.TTL, Storage: jetstream.FileStorage, Replicas: s.cfg.Replicas, MaxBytes: s.cfg.StoreBytes,
	})
	if err != nil {
		return fmt.Errorf("document store: %w", err)
	}
	return nil
}

// Config returns the Store's settings, defaults applied.
func (s *Store) Config() Config { return s.cfg }

// Ready reports whether NATS answers.
func (s *Store) Ready(ctx context.Context) error {
	if s.nc == nil || !s.nc.IsConnected() {
		return fmt.Errorf("%w: not connected", ErrUnavailable)
	}
	if _, err := s.js.AccountInfo(ctx); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// Close closes the connection and stops the embedded server (its directory keeps the jobs). It
// always returns nil (an io.Closer, for the engine's list of what to close).
func (s *Store) Close() error {
	s.close()
	return nil
}

func (s *Store) close() {
	if s.nc != nil {
		_ = s.nc.Drain()
		s.nc.Close()
	}
	if s.ns != nil {
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
	}
	if s.lock != nil {
		_ = s.lock.Close() // releases the lock
	}
}

// lockDir takes the directory for this process: two NATS servers on one JetStream directory
// would corrupt it, and the server itself does not check.
func lockDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("jobs directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "ocrgate.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("jobs directory: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("the jobs directory is in use by another ocrgate process (give each its own OCRGATE_JOBS_DIR, or share one NATS with OCRGATE_NATS_URL): %w", err)
	}
	return f, nil
}

// StoreBytes is what the stored documents take now.
func (s *Store) StoreBytes(ctx context.Context) (int64, error) {
	st, err := s.docs.Status(ctx)
	if err != nil {
		return 0, err
	}
	return int64(st.Size()), nil
}

// Documents counts the documents stored and their bytes (the store's size also counts the
// small markers a deleted document leaves until its TTL).
func (s *Store) Documents(ctx context.Context) (n int, bytes int64, err error) {
	list, err := s.docs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	for _, o := range list {
		n, bytes = n+1, bytes+int64(o.Size)
	}
	return n, bytes, nil
}
