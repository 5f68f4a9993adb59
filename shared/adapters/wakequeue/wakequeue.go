// Package wakequeue hands wake jobs to the agent-worker through an SQS FIFO
// queue whose message group is the job's lane (its agent): SQS gives a
// group's next message only after the one before it is done, so one
// agent's runs take turns without any run waiting on its lease, while
// other agents' runs go on side by side.
//
// It speaks the API directly (SQS's JSON protocol, one SigV4-signed POST
// per call through awssigned) rather than through the SDK's client, to keep
// the receivers small.
package wakequeue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Queue sends to one FIFO queue.
type Queue struct {
	URL      string // the queue URL (…/wakes.fifo)
	Endpoint string // base URL of the SQS API, e.g. https://sqs.eu-central-1.amazonaws.com
	Signer   awssigned.Signer
	// Waits before the second and third attempt of a throttled or failed
	// call (kept short for the webhook's budget).
	Backoff []time.Duration
}

var _ sb.WakeDispatcher = (*Queue)(nil)

// New builds a Queue from the loaded AWS config. The endpoint comes from
// AWS_ENDPOINT_URL_SQS, else AWS_ENDPOINT_URL, else the region's public
// endpoint.
func New(cfg aws.Config, queueURL string, getenv func(string) string) *Queue {
	return &Queue{URL: queueURL, Endpoint: awssigned.Endpoint(cfg, getenv, "AWS_ENDPOINT_URL_SQS", "sqs"),
		Signer:  awssigned.Signer{Service: "sqs", Region: cfg.Region, Credentials: cfg.Credentials, HTTP: awssigned.HTTPClient(cfg)},
		Backoff: []time.Duration{50 * time.Millisecond, 150 * time.Millisecond}}
}

// maxMessage is SQS's limit for one message (256 KiB).
const maxMessage = 256 * 1024

// Dispatch implements sb.WakeDispatcher: one SendMessage with the job's
// lane as message group. The deduplication id is the job's hash, so a
// send repeated within SQS's five minutes (a retry after a lost answer)
// queues the job once. Throttling, server errors and no answer are
// EUNAVAILABLE after the retries (the webhook answers 503 and Rocket.Chat
// or the poll tries again); any other refusal is EINTERNAL: a wrong queue
// or a missing grant, which a retry does not fix.
func (q *Queue) Dispatch(ctx context.Context, job sb.WakeJob) error {
	const op = "wakequeue.dispatch"
	body, err := json.Marshal(job)
	if err != nil {
		return sb.Wrap(op, sb.EINTERNAL, "the wake job could not be encoded", err)
	}
	if len(body) > maxMessage {
		return sb.E(op, sb.EINVALID, fmt.Sprintf("the wake job is %d bytes, over SQS's 256 KiB limit; lower maxMessagesPerRoom", len(body)))
	}
	sum := sha256.Sum256(body)
	return q.call(ctx, op, "SendMessage", map[string]any{
		"QueueUrl": q.URL, "MessageBody": string(body),
		"MessageGroupId": job.Lane(), "MessageDeduplicationId": hex.EncodeToString(sum[:]),
	})
}

// RetryIn makes the message with receipt visible again after delay (one
// ChangeMessageVisibility): a failed wake comes again then, as Lambda's
// async retries did, instead of after the whole visibility timeout.
func (q *Queue) RetryIn(ctx context.Context, receipt string, delay time.Duration) error {
	return q.call(ctx, "wakequeue.retry", "ChangeMessageVisibility", map[string]any{
		"QueueUrl": q.URL, "ReceiptHandle": receipt, "VisibilityTimeout": int(delay.Seconds()),
	})
}

// Retrier sets retry delays on the queue an SQS record came from, named
// by its ARN: the record says which queue to answer, whatever queue URL
// the function was given for sending.
type Retrier struct {
	Config aws.Config
	Getenv func(string) string
}

// RetryIn is Queue.RetryIn on the queue arn names
// (arn:aws:sqs:<region>:<account>:<name>).
func (r Retrier) RetryIn(ctx context.Context, arn, receipt string, delay time.Duration) error {
	url, err := QueueURL(r.Config, r.Getenv, arn)
	if err != nil {
		return err
	}
	return New(r.Config, url, r.Getenv).RetryIn(ctx, receipt, delay)
}

// QueueURL is the URL of the queue arn names: <endpoint>/<account>/<name>,
// the endpoint being the SQS API's (AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL
// or the region's).
func QueueURL(cfg aws.Config, getenv func(string) string, arn string) (string, error) {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" || parts[4] == "" || parts[5] == "" {
		return "", sb.E("wakequeue.url", sb.EINVALID, fmt.Sprintf("%q is not an SQS queue ARN", arn))
	}
	c := cfg.Copy()
	c.Region = parts[3]
	return strings.TrimRight(awssigned.Endpoint(c, getenv, "AWS_ENDPOINT_URL_SQS", "sqs"), "/") + "/" + parts[4] + "/" + parts[5], nil
}

func (q *Queue) call(ctx context.Context, op, action string, input map[string]any) error {
	payload, err := json.Marshal(input)
	if err != nil {
		return sb.Wrap(op, sb.EINTERNAL, "the request could not be encoded", err)
	}
	for attempt := 0; ; attempt++ {
		status, kind, err := q.post(ctx, action, payload)
		switch {
		case err == nil && status == http.StatusOK:
			return nil
		case err == nil && !retryable(status, kind):
			return sb.E(op, sb.EINTERNAL, fmt.Sprintf(
				"the wake queue refused %s (%d %s); check SWITCHBOARD_WAKE_QUEUE_URL and the function's grant on the queue", action, status, kind))
		}
		if attempt >= len(q.Backoff) || ctx.Err() != nil {
			if err == nil {
				err = fmt.Errorf("sqs answered %d %s", status, kind)
			}
			return sb.Wrap(op, sb.EUNAVAILABLE, "the wake queue could not be reached; try again", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(q.Backoff[attempt]):
		}
	}
}

// retryable: throttling (400 with a throttling type in SQS's JSON
// protocol), 429 and server errors.
func retryable(status int, kind string) bool {
	return status == http.StatusTooManyRequests || status >= 500 ||
		strings.Contains(kind, "Throttl") || strings.Contains(kind, "RequestThrottled")
}

// post makes one signed call; kind is the error type SQS names.
func (q *Queue) post(ctx context.Context, action string, payload []byte) (status int, kind string, err error) {
	status, header, body, err := q.Signer.Post(ctx, strings.TrimRight(q.Endpoint, "/")+"/", map[string]string{
		"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS." + action}, payload)
	if err != nil || status == http.StatusOK {
		return status, "", err
	}
	var e struct {
		Type string `json:"__type"`
	}
	_ = json.Unmarshal(body, &e)
	kind = e.Type
	if q := header.Get("X-Amzn-Query-Error"); kind == "" && q != "" {
		kind, _, _ = strings.Cut(q, ";")
	}
	if i := strings.LastIndex(kind, "#"); i >= 0 {
		kind = kind[i+1:]
	}
	return status, kind, nil
}
