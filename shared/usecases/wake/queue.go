package wake

import (
	"context"
	"log/slog"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// RetryDelay is the wait before a failed wake's message comes again from
// the wake queue, by how often the queue has delivered it (1 the first
// time): Lambda's async retry delays, so a wake is tried as often and as
// late as it was when invoked asynchronously. False when none applies (a
// count past the retries, or unknown): the message then comes again after
// the queue's visibility timeout, and the worker, which counts attempts in
// the job's claim, tells the person on the last one.
func RetryDelay(receives int) (time.Duration, bool) {
	if receives < 1 || receives > len(LambdaRetryDelays) {
		return 0, false
	}
	return LambdaRetryDelays[receives-1], true
}

// QueuedJob is one message of the wake queue, as the queue delivered it.
type QueuedJob struct {
	MessageID string     // the queue's id of the message, for the logs
	Job       sb.WakeJob // the job; unset when BadBody is set
	// BadBody says why the message is no wake job: it never becomes one,
	// so it is dropped, not retried.
	BadBody  error
	Receives int // how often the queue delivered it, 1 the first time; 0 unknown
}

// BatchResult says how a batch from the wake queue went.
type BatchResult struct {
	// Failed is the index of the job that failed: it and every later
	// message of the batch go back to the queue, so that a FIFO group
	// keeps its order. The batch's length when none failed.
	Failed int
	// RetryIn is when the failed job should come again; Retry is false
	// when the queue's own visibility timeout decides (see RetryDelay).
	RetryIn time.Duration
	Retry   bool
}

// HandleBatch runs the jobs of one batch of the wake queue (a FIFO queue
// grouped by agent) in order and stops at the first that fails and may
// be tried again.
func (w *Worker) HandleBatch(ctx context.Context, batch []QueuedJob) BatchResult {
	log := w.Log
	if log == nil {
		log = slog.Default()
	}
	for i, q := range batch {
		if q.BadBody != nil {
			log.ErrorContext(ctx, "wake queue: a message is not a wake job; dropped", "messageId", q.MessageID, "err", q.BadBody)
			continue
		}
		err := w.Handle(ctx, q.Job)
		if err == nil {
			continue
		}
		log.WarnContext(ctx, "wake queue: the wake failed; it comes again", "agent", q.Job.AgentID, "messageId", q.MessageID, "err", err)
		delay, retry := RetryDelay(q.Receives)
		return BatchResult{Failed: i, RetryIn: delay, Retry: retry}
	}
	return BatchResult{Failed: len(batch)}
}
