package jobs

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// State is where a job stands.
type State string

// The states of a job. Succeeded, Failed and Canceled are final.
const (
	Queued    State = "queued"
	Running   State = "running"
	Succeeded State = "succeeded"
	Failed    State = "failed"
	Canceled  State = "canceled"
)

// Final reports whether a job in state st will not change again.
func (st State) Final() bool { return st == Succeeded || st == Failed || st == Canceled }

// Job is a job's record, as stored in the job bucket.
type Job struct {
	ID    string `json:"id"`
	Owner string `json:"owner,omitempty"` // a hash of the API key that made it; empty without keys
	State State  `json:"state"`
	// Spec is how to read each page (the request's options, opaque to this package).
	Spec json.RawMessage `json:"spec"`
	// Pages are the document's page numbers the job reads, in order; a task is an index in it.
	Pages []int `json:"pages"`
	// Total is the document's page count, Format its format, Bytes its size.
	Total  int    `json:"total"`
	Format string `json:"format"`
	Bytes  int64  `json:"bytes"`
	// Image says the file is a single image, read as one page.
	Image bool `json:"image,omitempty"`
	// Done and Bad are bit sets over Pages: answered, and answered with the page's error. A
	// page's bit is set once, whatever the redeliveries of its task.
	Done []byte `json:"done"`
	Bad  []byte `json:"bad"`
	// Error is why a job failed as a whole.
	Error      *Error    `json:"error,omitempty"`
	Created    time.Time `json:"created"`
	Started    time.Time `json:"started,omitzero"`
	Finished   time.Time `json:"finished,omitzero"`
	Redelivers int       `json:"redeliveries"`
}

// Error is a stable code and a message for a person.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Counts returns how many pages are answered and how many of them failed.
func (j *Job) Counts() (done, failed int) {
	for i := range j.Pages {
		if bit(j.Done, i) {
			done++
		}
		if bit(j.Bad, i) {
			failed++
		}
	}
	return done, failed
}

func bit(set []byte, i int) bool { return i/8 < len(set) && set[i/8]&(1<<(i%8)) != 0 }

func setBit(set []byte, i int) { set[i/8] |= 1 << (i % 8) }

// The errors of this package's calls, which the HTTP layer maps to statuses.
var (
	ErrNotFound    = errors.New("no such job")
	ErrTooManyJobs = errors.New("too many unfinished jobs")
	ErrTooLarge    = errors.New("the document is larger than a job may store")
	ErrTooMany     = errors.New("the document has more pages than a job may read")
	ErrStoreFull   = errors.New("the job store is full")
)

// Owner is what a job records of the API key that made it: a hash, never the key.
func Owner(apiKey string) string {
	if apiKey == "" {
		return ""
	}
	h := sha256.Sum256([]byte("ocrgate-job-owner\x00" + apiKey))
	return hex.EncodeToString(h[:16])
}

// Submission is a new job: its document (read as it is stored, never held whole) and how to read
// it.
type Submission struct {
	Owner string
	// IdempotencyKey, when not empty, makes a repeated submission answer the job of the first.
	IdempotencyKey string
	Spec           json.RawMessage
	Document       io.Reader
	// Plan opens the stored document and says what the job reads; an error refuses the job
	// (its document is deleted). The bytes it gets are the stored copy mapped from a file (see
	// Document), valid until it returns.
	Plan func(ctx context.Context, doc []byte) (Plan, error)
}

// Plan is what a job reads of its document.
type Plan struct {
	Format string // the document's format, as the answer names it
	Total  int    // the document's pages
	Pages  []int  // the page numbers read, in order
	Image  bool   // a single image, read as one page
}

// Submit stores the document, plans the job and queues one task per page; it returns once all of
// that is durable. With an IdempotencyKey already used by this owner, it returns that job and
// created false.
func (s *Store) Submit(ctx context.Context, sub Submission) (job *Job, created bool, err error) {
	var idemKey string
	if sub.IdempotencyKey != "" {
		h := sha256.Sum256([]byte(sub.Owner + "\x00" + sub.IdempotencyKey))
		idemKey = hex.EncodeToString(h[:16])
		if e, err := s.idem.Get(ctx, idemKey); err == nil {
			j, err := s.Get(ctx, string(e.Value()), sub.Owner)
			if err == nil {
				return j, false, nil
			}
		}
	}
	if err := s.inFlight(ctx, sub.Owner); err != nil {
		return nil, false, err
	}
	used, err := s.StoreBytes(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if used >= s.cfg.StoreBytes {
		return nil, false, ErrStoreFull
	}
	id := newID()
	// The document goes to the store in chunks as it arrives; a document past the job limit
	// or the room left in the store stops there and is deleted.
	room := min(s.cfg.MaxBytes, s.cfg.StoreBytes-used)
	lr := &limitReader{r: sub.Document, n: room + 1}
	info, err := s.docs.Put(ctx, jetstream.ObjectMeta{Name: id}, lr)
	if err != nil || lr.n <= 0 {
		s.deleteDoc(id)
		switch {
		case lr.n <= 0 && room < s.cfg.MaxBytes:
			return nil, false, ErrStoreFull
		case lr.n <= 0:
			return nil, false, ErrTooLarge
		case errors.Is(err, lr.err) && lr.err != nil:
			return nil, false, lr.err // the client's body, not the store
		}
		return nil, false, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	pl, err := s.plan(ctx, id, sub.Plan)
	pages := pl.Pages
	if err == nil && len(pages) > s.cfg.MaxPages {
		err = fmt.Errorf("%w: %d pages; the limit is %d", ErrTooMany, len(pages), s.cfg.MaxPages)
	}
	if err != nil {
		s.deleteDoc(id)
		return nil, false, err
	}
	n := (len(pages) + 7) / 8
	job = &Job{ID: id, Owner: sub.Owner, State: Queued, Spec: sub.Spec, Pages: pages, Total: pl.Total, Format: pl.Format, Image: pl.Image,
		Bytes: int64(info.Size), Done: make([]byte, n), Bad: make([]byte, n), Created: time.Now().UTC()}
	raw, _ := json.Marshal(job)
	if _, err := s.jobs.Create(ctx, id, raw); err != nil {
		s.deleteDoc(id)
		return nil, false, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	for i := range pages {
		if _, err := s.js.Publish(ctx, taskSubject+id, []byte(strconv.Itoa(i))); err != nil {
			_ = s.Delete(context.WithoutCancel(ctx), id, sub.Owner)
			return nil, false, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	if idemKey != "" {
		if _, err := s.idem.Create(ctx, idemKey, []byte(id)); err != nil {
			// A concurrent twin won: answer its job and drop this one.
			if e, gerr := s.idem.Get(ctx, idemKey); gerr == nil {
				if j, gerr := s.Get(ctx, string(e.Value()), sub.Owner); gerr == nil {
					_ = s.Delete(context.WithoutCancel(ctx), id, sub.Owner)
					return j, false, nil
				}
			}
		}
	}
	jobsSubmitted.Inc()
	return job, true, nil
}

// plan reads the stored document, spilled and mapped (see Document), and plans the job from it;
// the mapping is let go when it returns.
func (s *Store) plan(ctx context.Context, id string, plan func(context.Context, []byte) (Plan, error)) (Plan, error) {
	doc, err := s.document(ctx, id)
	if err != nil {
		return Plan{}, err
	}
	defer func() { _ = doc.Close() }()
	return plan(ctx, doc.Bytes())
}

// inFlight refuses a job when its owner has MaxInFlight unfinished ones.
func (s *Store) inFlight(ctx context.Context, owner string) error {
	lister, err := s.jobs.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	n := 0
	for k := range lister.Keys() {
		j, _, err := s.load(ctx, k)
		if err != nil || j.Owner != owner || j.State.Final() {
			continue
		}
		if n++; n >= s.cfg.MaxInFlight {
			_ = lister.Stop()
			return fmt.Errorf("%w: %d; the limit is %d", ErrTooManyJobs, n, s.cfg.MaxInFlight)
		}
	}
	return nil
}

// limitReader reads at most n bytes (n goes to 0 when the source has more) and keeps the
// source's own error apart from the store's.
type limitReader struct {
	r   io.Reader
	n   int64
	err error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	if err != nil && err != io.EOF {
		l.err = err
	}
	return k, err
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validID keeps client-sent ids within what a NATS key and subject token may hold.
func validID(id string) bool {
	if len(id) != 24 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

func (s *Store) load(ctx context.Context, id string) (*Job, uint64, error) {
	if !validID(id) {
		return nil, 0, ErrNotFound
	}
	e, err := s.jobs.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var j Job
	if err := json.Unmarshal(e.Value(), &j); err != nil {
		return nil, 0, fmt.Errorf("%w: a job record does not parse: %v", ErrUnavailable, err)
	}
	return &j, e.Revision(), nil
}

// Get returns the job id of owner; another owner's job is ErrNotFound, as a missing one.
func (s *Store) Get(ctx context.Context, id, owner string) (*Job, error) {
	j, _, err := s.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if j.Owner != owner {
		return nil, ErrNotFound
	}
	return j, nil
}

// Wait returns the job once its state or its pages done differ from seen's, or when ctx ends
// (then the job as it is).
func (s *Store) Wait(ctx context.Context, id, owner string, seen *Job) (*Job, error) {
	w, err := s.jobs.Watch(ctx, id, jetstream.UpdatesOnly())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer func() { _ = w.Stop() }()
	j, err := s.Get(ctx, id, owner)
	if err != nil || changed(seen, j) {
		return j, err
	}
	for {
		select {
		case <-ctx.Done():
			return s.Get(context.WithoutCancel(ctx), id, owner)
		case e, ok := <-w.Updates():
			if !ok {
				return s.Get(context.WithoutCancel(ctx), id, owner)
			}
			if e == nil {
				continue
			}
			if e.Operation() != jetstream.KeyValuePut {
				return nil, ErrNotFound
			}
			return s.Get(ctx, id, owner)
		}
	}
}

func changed(seen, now *Job) bool {
	if now.State != seen.State {
		return true
	}
	a, _ := seen.Counts()
	b, _ := now.Counts()
	return a != b
}

// Result returns the pages' stored answers, in the job's page order (nil for a page without
// one).
func (s *Store) Result(ctx context.Context, j *Job) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(j.Pages))
	for i := range j.Pages {
		if !bit(j.Done, i) {
			continue
		}
		e, err := s.pages.Get(ctx, pageKey(j.ID, i))
		if err != nil {
			return nil, fmt.Errorf("%w: page %d's answer: %v", ErrUnavailable, j.Pages[i], err)
		}
		out[i] = e.Value()
	}
	return out, nil
}

func pageKey(id string, i int) string { return id + "." + strconv.Itoa(i) }

// Delete cancels job id of owner and deletes it: its queued tasks, its document, its answers and
// its record. Pages at work on any replica stop when they see the record go.
func (s *Store) Delete(ctx context.Context, id, owner string) error {
	j, _, err := s.load(ctx, id)
	if err != nil {
		return err
	}
	if j.Owner != owner {
		return ErrNotFound
	}
	if !j.State.Final() {
		jobsFinished.WithLabelValues(string(Canceled)).Inc()
	}
	if err := s.tasks.Purge(ctx, jetstream.WithPurgeSubject(taskSubject+id)); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := s.jobs.Purge(ctx, id); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	s.deleteDoc(id)
	for i := range j.Pages {
		if bit(j.Done, i) {
			_ = s.pages.Purge(ctx, pageKey(id, i))
		}
	}
	return nil
}

func (s *Store) deleteDoc(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
	defer cancel()
	if err := s.docs.Delete(ctx, id); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
		s.log.Warn("a job's document could not be deleted; its TTL will", "job", id, "err", err)
	}
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(strings.TrimSpace(addr))
	if err != nil {
		return "", 0, fmt.Errorf("jobs listen address: %w", err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("jobs listen address: bad port")
	}
	return host, port, nil
}
