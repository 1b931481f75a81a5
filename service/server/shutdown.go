package server

import (
	"context"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
)

// DefaultShutdownTimeout is how long a stopping server gives the requests in flight, unless
// configured otherwise: under the 30 s an orchestrator waits after SIGTERM by default.
const DefaultShutdownTimeout = 25 * time.Second

// Shutdown stops app within grace. It stops accepting connections and closes idle ones at once,
// lets the requests in flight finish during the first part of grace, then cancels the ones
// still running (cancelWork, with ErrShuttingDown as the cause, must cancel the Options.Context
// app was built with), which answer 503 shutting_down, and returns when every connection is
// closed, or with an error when grace has passed first. Requests that ran past grace are
// abandoned; the caller may then release what they use.
func Shutdown(app *fiber.App, cancelWork context.CancelCauseFunc, grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- app.ShutdownWithContext(ctx) }()
	// The requests canceled must still answer and their connections close before grace ends.
	finish := grace - min(5*time.Second, grace/3)
	timer := time.NewTimer(finish)
	defer timer.Stop()
	select {
	case err := <-done:
		cancelWork(ErrShuttingDown)
		return err
	case <-timer.C:
		cancelWork(ErrShuttingDown)
	}
	err := <-done
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("requests still in flight when the shutdown grace period ended")
	}
	return err
}

// errShuttingDown is the answer of a request canceled because the server stops.
var errShuttingDown = &apiError{status: fiber.StatusServiceUnavailable, code: "shutting_down",
	msg: "the server is shutting down; retry, another instance will answer", retryAfter: 1}
