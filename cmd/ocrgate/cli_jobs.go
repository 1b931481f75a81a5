package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ocrgate/ocrgate/client"
)

// overPageLimit reports whether a synchronous read was refused for its pages (413
// too_many_pages): a job takes such a document.
func overPageLimit(err error) bool {
	var e *client.Error
	return errors.As(err, &e) && e.Status == 413 && e.Code == "too_many_pages"
}

// viaJob reads a document as a job: submitted (the file streamed from disk, or img), waited for
// at the service, its progress told to progress, and its result returned as /ocr's.
func viaJob(ctx context.Context, c *client.Client, name string, img []byte, read []client.CallOption, progress func(*client.Job)) (*client.OCRResult, error) {
	var j *client.Job
	var err error
	if img != nil {
		j, err = c.SubmitJob(ctx, img, read...)
	} else {
		j, err = c.SubmitJobFile(ctx, name, read...)
	}
	if err != nil {
		return nil, err
	}
	id := j.ID
	if j, err = c.WaitJob(ctx, id, progress); err != nil {
		// Interrupted: the job would go on reading for no one.
		_ = c.CancelJob(context.WithoutCancel(ctx), id)
		return nil, err
	}
	if j.State != "succeeded" || j.Result == nil {
		msg := "the job " + j.State
		if j.Error != nil {
			msg += ": " + j.Error.Error
		}
		return nil, errors.New(msg)
	}
	raw, err := json.Marshal(j.Result)
	if err != nil {
		return nil, err
	}
	res := &client.OCRResult{Pages: j.Result.Pages, Raw: raw}
	res.Text, res.Version, res.ImageInfo = j.Result.Text, j.Result.Version, j.Result.ImageInfo
	return res, nil
}

// progressBar draws a job's pages done of its total on w, on one line redrawn in place.
func progressBar(w io.Writer, name string, quiet bool) func(*client.Job) {
	if quiet {
		return nil
	}
	return func(j *client.Job) {
		const width = 30
		total := max(j.Pages.Total, 1)
		filled := j.Pages.Done * width / total
		fmt.Fprintf(w, "\r%s: [%s%s] %d/%d pages %s", name, strings.Repeat("#", filled), strings.Repeat(".", width-filled), j.Pages.Done, j.Pages.Total, j.State)
		switch j.State {
		case "succeeded", "failed", "canceled":
			fmt.Fprintln(w)
		}
	}
}
