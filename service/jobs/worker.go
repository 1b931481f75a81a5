package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// PageReader reads one page of a stored document for a job, as the synchronous path reads it.
type PageReader interface {
	// ReadPage reads page (1-based, in the document) of doc as spec asks. failed says the
	// answer is the page's own error (it fails alone, at once); an error is worth another
	// attempt (the service was busy, the process is stopping).
	ReadPage(ctx context.Context, doc []byte, spec json.RawMessage, page int) (answer json.RawMessage, failed bool, err error)
	// FailedPage is the answer of a page whose attempts all ended in err.
	FailedPage(page int, err error) json.RawMessage
}

// Run runs Config.Workers page workers until ctx ends. spare says whether this replica has room
// for a job page now (its admission gate runs nothing that waits); a worker takes a task only
// then, so job pages use spare capacity and synchronous requests keep theirs.
func (s *Store) Run(ctx context.Context, r PageReader, spare func() bool) {
	if s.cfg.Workers <= 0 {
		return
	}
	w := &workers{s: s, r: r, spare: spare, running: map[string]map[*context.CancelFunc]struct{}{}, docs: map[string]*heldDoc{}}
	defer w.closeDocs()
	var wg sync.WaitGroup
	wg.Go(func() { w.watch(ctx) })
	for range s.cfg.Workers {
		wg.Go(func() { w.loop(ctx) })
	}
	wg.Wait()
}

type workers struct {
	s     *Store
	r     PageReader
	spare func() bool
	mu    sync.Mutex
	// running holds the cancels of the pages at work, by job: a deleted job's stop at once.
	running map[string]map[*context.CancelFunc]struct{}
	// docs are the jobs' documents spilled and mapped here (see Document), kept between pages
	// of the same job: a 256 MiB document is copied out of the store once per replica, not once
	// a page. At most Config.Workers are kept; one no page uses makes way for the next.
	docs map[string]*heldDoc
}

// heldDoc is a mapped document and the pages at work on it.
type heldDoc struct {
	doc  *Document
	refs int
	// gone: the job is finished or deleted; the document is closed when its last page ends.
	gone bool
}

// watch cancels the pages at work of a job whose record is deleted (DELETE on any replica).
func (w *workers) watch(ctx context.Context) {
	for ctx.Err() == nil {
		kw, err := w.s.jobs.WatchAll(ctx, jetstream.UpdatesOnly(), jetstream.MetaOnly())
		if err != nil {
			sleep(ctx, time.Second)
			continue
		}
		for e := range kw.Updates() {
			if e == nil || e.Operation() == jetstream.KeyValuePut {
				continue
			}
			w.mu.Lock()
			for c := range w.running[e.Key()] {
				(*c)()
			}
			w.dropLocked(e.Key())
			w.mu.Unlock()
		}
		_ = kw.Stop()
	}
}

func (w *workers) loop(ctx context.Context) {
	for ctx.Err() == nil {
		if w.spare != nil && !w.spare() {
			sleep(ctx, 20*time.Millisecond)
			continue
		}
		batch, err := w.s.cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			sleep(ctx, time.Second)
			continue
		}
		for m := range batch.Messages() {
			w.handle(ctx, m)
		}
	}
}

func (w *workers) handle(ctx context.Context, m jetstream.Msg) {
	id := strings.TrimPrefix(m.Subject(), taskSubject)
	i, err := strconv.Atoi(string(m.Data()))
	md, merr := m.Metadata()
	if err != nil || merr != nil {
		_ = m.Term()
		return
	}
	j, _, err := w.s.load(ctx, id)
	if errors.Is(err, ErrNotFound) && w.s.cfg.Replicas > 1 && int(md.NumDelivered) < w.s.cfg.Attempts {
		// A replicated bucket's read may come from a follower that has not applied the job's
		// record yet (see plan): only a job still missing at the last attempt is taken as deleted.
		_ = m.NakWithDelay(time.Second)
		return
	}
	if errors.Is(err, ErrNotFound) || (err == nil && (j.State.Final() || i < 0 || i >= len(j.Pages) || bit(j.Done, i))) {
		_ = m.Ack() // deleted, finished, or this page already counted
		return
	}
	if err != nil {
		_ = m.NakWithDelay(time.Second)
		return
	}
	if md.NumDelivered > 1 {
		redeliveries.Inc()
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.track(id, &cancel, true)
	defer w.track(id, &cancel, false)
	// A worker at work says so, so that the task stays its own past AckWait.
	beat := time.NewTicker(w.s.cfg.AckWait / 3)
	defer beat.Stop()
	go func() {
		for {
			select {
			case <-pctx.Done():
				return
			case <-beat.C:
				_ = m.InProgress()
			}
		}
	}()
	if j.State == Queued {
		_ = w.s.update(ctx, id, func(j *Job) bool { // a later page's update says it again
			if j.State != Queued {
				return false
			}
			j.State, j.Started = Running, time.Now().UTC()
			return true
		})
	}
	start := time.Now()
	answer, failed, err := w.read(pctx, j, i)
	if err != nil {
		if ctx.Err() != nil || pctx.Err() != nil {
			_ = m.Nak() // stopping, or the job is gone: the next look decides
			return
		}
		if int(md.NumDelivered) < w.s.cfg.Attempts {
			w.s.log.Warn("a job page failed; it is tried again", "job", id, "page", j.Pages[i], "attempt", md.NumDelivered, "err", err)
			_ = m.NakWithDelay(time.Second)
			return
		}
		answer, failed = w.r.FailedPage(j.Pages[i], err), true
	}
	pageSeconds.Observe(time.Since(start).Seconds())
	if _, err := w.s.pages.Put(ctx, pageKey(id, i), answer); err != nil {
		_ = m.NakWithDelay(time.Second)
		return
	}
	redelivered := md.NumDelivered > 1
	err = w.s.update(ctx, id, func(j *Job) bool {
		if j.State.Final() || bit(j.Done, i) {
			return false
		}
		setBit(j.Done, i)
		if failed {
			setBit(j.Bad, i)
		}
		if redelivered {
			j.Redelivers++
		}
		if done, bad := j.Counts(); done == len(j.Pages) {
			j.State, j.Finished = Succeeded, time.Now().UTC()
			if bad == done {
				j.State = Failed
				j.Error = &Error{Code: "all_pages_failed", Message: "every page of the document failed; each page's error says why"}
			}
			jobsFinished.WithLabelValues(string(j.State)).Inc()
			jobSeconds.Observe(j.Finished.Sub(j.Created).Seconds())
		}
		return true
	})
	if err != nil {
		// The answer is stored but not counted: the task comes back and counts it.
		_ = m.NakWithDelay(time.Second)
		return
	}
	if j, _, err := w.s.load(ctx, id); err == nil && j.State.Final() {
		w.s.deleteDoc(id) // every page is read: the document's space is free for others
		w.drop(id)
	}
	_ = m.Ack()
}

// read reads page i of the job from its document, spilled and mapped here once for all its
// pages (see docs).
func (w *workers) read(ctx context.Context, j *Job, i int) (json.RawMessage, bool, error) {
	d, err := w.take(ctx, j.ID)
	if err != nil {
		return nil, false, err
	}
	defer w.give(j.ID, d)
	return w.r.ReadPage(ctx, d.doc.Bytes(), j.Spec, j.Pages[i])
}

// take returns job id's mapped document, spilling it first when it is not here, and counts a
// page at work on it.
func (w *workers) take(ctx context.Context, id string) (*heldDoc, error) {
	w.mu.Lock()
	if d, ok := w.docs[id]; ok {
		d.refs++ // valid while a page uses it, gone or not
		w.mu.Unlock()
		return d, nil
	}
	w.mu.Unlock()
	doc, err := w.s.document(ctx, id)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if d, ok := w.docs[id]; ok {
		_ = doc.Close() // another worker spilled it meanwhile
		d.refs++
		return d, nil
	}
	// Room for it: a document no page uses makes way.
	for len(w.docs) >= max(1, w.s.cfg.Workers) {
		evicted := false
		for k, d := range w.docs {
			if d.refs == 0 {
				_ = d.doc.Close()
				delete(w.docs, k)
				evicted = true
				break
			}
		}
		if !evicted {
			break
		}
	}
	d := &heldDoc{doc: doc, refs: 1}
	w.docs[id] = d
	return d, nil
}

// give ends a page's use of d: the pages it touched are given back, and a document whose job is
// gone is closed with its last page.
func (w *workers) give(id string, d *heldDoc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d.refs--
	if d.refs > 0 {
		return
	}
	d.doc.Release()
	if d.gone {
		_ = d.doc.Close()
		delete(w.docs, id)
	}
}

// drop lets job id's document go: at once when no page uses it, else with its last page.
func (w *workers) drop(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropLocked(id)
}

func (w *workers) dropLocked(id string) {
	d, ok := w.docs[id]
	if !ok {
		return
	}
	if d.refs == 0 {
		_ = d.doc.Close()
		delete(w.docs, id)
		return
	}
	d.gone = true
}

func (w *workers) closeDocs() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, d := range w.docs {
		if d.refs == 0 {
			_ = d.doc.Close()
			delete(w.docs, k)
		} else {
			d.gone = true
		}
	}
}

func (w *workers) track(id string, c *context.CancelFunc, on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if on {
		if w.running[id] == nil {
			w.running[id] = map[*context.CancelFunc]struct{}{}
		}
		w.running[id][c] = struct{}{}
		return
	}
	delete(w.running[id], c)
	if len(w.running[id]) == 0 {
		delete(w.running, id)
	}
}

// update applies f to job id's record by compare-and-swap, again on a concurrent change; f
// returns false to leave the record as it is. It fails only when the store did not answer: a
// record that was not written must not be taken for written (a worker that acked its task then
// would leave its page uncounted for ever; seen with a NATS server killed, deploy/image
// TestJobsPodKill). A deleted job has nothing to update.
func (s *Store) update(ctx context.Context, id string, f func(*Job) bool) error {
	for range 100 {
		j, rev, err := s.load(ctx, id)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if !f(j) {
			return nil
		}
		raw, _ := json.Marshal(j)
		if _, err := s.jobs.Update(ctx, id, raw, rev); err == nil {
			return nil
		} else if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			s.log.Warn("a job record could not be updated", "job", id, "err", err)
			return err
		}
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
