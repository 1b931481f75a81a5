package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/ocrgate/ocrgate/api"
)

// Job is an asynchronous job (POST /jobs): its state, its page counts, and its Result (the
// answer /ocr gives for the same document) once it succeeded, or ImageResult for a job of a
// single image.
type Job = api.Job

// SubmitJob stores doc (a PDF or a TIFF, or a single image) as a job and returns it at once, queued: every replica
// then reads its pages. Use it for documents over the synchronous page limit. The call carries an
// Idempotency-Key of its own, so that its retries answer the same job.
func (c *Client) SubmitJob(ctx context.Context, doc []byte, opts ...CallOption) (*Job, error) {
	cl := newCall(opts)
	body := payload{
		open:  func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(doc)), nil },
		size:  int64(len(doc)),
		ctype: sniff(doc[:min(len(doc), 512)]),
		query: cl.query(false),
	}
	return c.submitJob(ctx, body, cl)
}

// SubmitJobFile is SubmitJob on the file at path, streamed from disk as OCRFile streams it.
func (c *Client) SubmitJobFile(ctx context.Context, path string, opts ...CallOption) (*Job, error) {
	cl := newCall(opts)
	body, err := filePayload(path, cl, false)
	if err != nil {
		return nil, err
	}
	return c.submitJob(ctx, body, cl)
}

func (c *Client) submitJob(ctx context.Context, body payload, cl *call) (*Job, error) {
	if cl.idempotencyKey == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		cl.idempotencyKey = hex.EncodeToString(b[:])
	}
	raw, _, err := c.do(ctx, http.MethodPost, "/jobs", body, cl)
	if err != nil {
		return nil, err
	}
	return decodeJob(raw)
}

// Job returns the job id as it stands.
func (c *Client) Job(ctx context.Context, id string) (*Job, error) {
	raw, _, err := c.do(ctx, http.MethodGet, "/jobs/"+url.PathEscape(id), payload{}, newCall(nil))
	if err != nil {
		return nil, err
	}
	return decodeJob(raw)
}

// jobWait is how long one call of WaitJob holds at the service.
const jobWait = 30 * time.Second

// WaitJob waits until job id is finished (succeeded, failed or canceled) or ctx ends, without a
// polling loop of its own: each call waits at the service (?wait) until the job changes.
// progress, when not nil, is told the job each time it changes.
func (c *Client) WaitJob(ctx context.Context, id string, progress func(*Job)) (*Job, error) {
	for {
		q := url.Values{"wait": {jobWait.String()}}
		raw, _, err := c.do(ctx, http.MethodGet, "/jobs/"+url.PathEscape(id), payload{query: q}, newCall(nil))
		if err != nil {
			return nil, err
		}
		j, err := decodeJob(raw)
		if err != nil {
			return nil, err
		}
		if progress != nil {
			progress(j)
		}
		switch j.State {
		case "succeeded", "failed", "canceled":
			return j, nil
		}
		if err := ctx.Err(); err != nil {
			return j, err
		}
	}
}

// CancelJob cancels job id and deletes it, with its document and answers.
func (c *Client) CancelJob(ctx context.Context, id string) error {
	_, _, err := c.do(ctx, http.MethodDelete, "/jobs/"+url.PathEscape(id), payload{}, newCall(nil))
	return err
}

func decodeJob(raw []byte) (*Job, error) {
	var j Job
	if err := json.Unmarshal(raw, &j); err != nil || j.ID == "" {
		return nil, fmt.Errorf("ocrgate: the answer is not a job")
	}
	return &j, nil
}
