package handlers_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// approvedCalls runs approved calls by id, failing those in fail.
type approvedCalls struct {
	ran  []string
	fail map[string]bool
}

func (a *approvedCalls) Execute(_ context.Context, id string) error {
	a.ran = append(a.ran, id)
	if a.fail[id] {
		return errors.New("rocket.chat unavailable")
	}
	return nil
}

type retries struct {
	receipts []string
	delays   []time.Duration
}

func (r *retries) RetryIn(_ context.Context, arn, receipt string, delay time.Duration) error {
	if arn != wakeQueueARN {
		return errors.New("another queue: " + arn)
	}
	r.receipts, r.delays = append(r.receipts, receipt), append(r.delays, delay)
	return nil
}

const wakeQueueARN = "arn:aws:sqs:eu-central-1:123456789012:switchboard-wakes.fifo"

func record(id, body, receives string) events.SQSMessage {
	return events.SQSMessage{MessageId: id, ReceiptHandle: "receipt-" + id, Body: body, EventSourceARN: wakeQueueARN,
		Attributes: map[string]string{"ApproximateReceiveCount": receives}}
}

// A batch from the wake queue runs in order; at the first job that fails,
// it and the rest of the batch are reported as failures (so SQS keeps the
// group's order), and the failed one comes again after the retry delay of
// its receive count. A body that is no job is dropped, not retried forever.
func TestWakeQueueBatchStopsAtTheFirstFailure(t *testing.T) {
	calls := &approvedCalls{fail: map[string]bool{"a2": true}}
	w := &wake.Worker{Approvals: calls}
	r := &retries{}
	out, err := handlers.WakeQueueEvents(context.Background(), w, r, []events.SQSMessage{
		record("m0", `not a job`, "1"),
		record("m1", `{"agentId":"hermes","approvalId":"a1"}`, "1"),
		record("m2", `{"agentId":"hermes","approvalId":"a2"}`, "2"),
		record("m3", `{"agentId":"hermes","approvalId":"a3"}`, "1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range out.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	if len(failed) != 2 || failed[0] != "m2" || failed[1] != "m3" {
		t.Errorf("batch item failures %v, want m2 and m3", failed)
	}
	if len(calls.ran) != 2 || calls.ran[1] != "a2" {
		t.Errorf("ran %v, want a1 then a2, and a3 not before a2 succeeded", calls.ran)
	}
	if len(r.receipts) != 1 || r.receipts[0] != "receipt-m2" || r.delays[0] != wake.LambdaRetryDelays[1] {
		t.Errorf("retry %v after %v, want receipt-m2 after %v (its second receive)", r.receipts, r.delays, wake.LambdaRetryDelays[1])
	}
}

// Without a queue to ask (retry nil) a failure is still reported; past the
// last retry delay the queue's own visibility timeout and redrive apply.
func TestWakeQueueFailureWithoutRetryDelay(t *testing.T) {
	calls := &approvedCalls{fail: map[string]bool{"a1": true}}
	out, _ := handlers.WakeQueueEvents(context.Background(), &wake.Worker{Approvals: calls}, nil,
		[]events.SQSMessage{record("m1", `{"agentId":"hermes","approvalId":"a1"}`, "3")})
	if len(out.BatchItemFailures) != 1 || out.BatchItemFailures[0].ItemIdentifier != "m1" {
		t.Errorf("failures %+v, want m1", out.BatchItemFailures)
	}
}
