// Package lambdainvoke hands wake jobs to the agent-worker Lambda with an
// asynchronous invoke (InvocationType Event): Lambda queues the event,
// retries a failing run twice and keeps the caller's answer fast.
//
// It speaks the Lambda Invoke API directly (one SigV4-signed POST) rather
// than through the SDK's Lambda client: that client and its schemas cost
// the webhook receiver a third of a megabyte and about a millisecond of
// every cold start, for the one call it makes.
package lambdainvoke

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Dispatcher invokes one function asynchronously per job.
type Dispatcher struct {
	Function string // name or ARN of the agent-worker function
	Endpoint string // base URL of the Lambda API, e.g. https://lambda.eu-central-1.amazonaws.com
	Signer   awssigned.Signer
	// Waits before the second and third attempt of a throttled or failed
	// call (the SDK client's retries, kept short for the webhook's budget).
	Backoff []time.Duration
}

var _ sb.WakeDispatcher = (*Dispatcher)(nil)

// New builds a Dispatcher from the loaded AWS config. The endpoint comes
// from AWS_ENDPOINT_URL_LAMBDA, else AWS_ENDPOINT_URL (the config's base
// endpoint), else the region's public endpoint.
func New(cfg aws.Config, function string, getenv func(string) string) *Dispatcher {
	return &Dispatcher{Function: function, Endpoint: awssigned.Endpoint(cfg, getenv, "AWS_ENDPOINT_URL_LAMBDA", "lambda"),
		Signer:  awssigned.Signer{Service: "lambda", Region: cfg.Region, Credentials: cfg.Credentials, HTTP: awssigned.HTTPClient(cfg)},
		Backoff: []time.Duration{50 * time.Millisecond, 150 * time.Millisecond}}
}

// maxAsyncPayload is Lambda's limit for an asynchronous invocation (256 KB).
const maxAsyncPayload = 256 * 1024

// Dispatch implements sb.WakeDispatcher. Throttling, server errors and no
// answer are EUNAVAILABLE (after the retries) so that the webhook answers
// 503 and the poll retries; any other refusal is EINTERNAL: a wrong name
// or a missing invoke grant, which a retry does not fix.
func (d *Dispatcher) Dispatch(ctx context.Context, job sb.WakeJob) error {
	const op = "lambdainvoke.dispatch"
	payload, err := json.Marshal(job)
	if err != nil {
		return sb.Wrap(op, sb.EINTERNAL, "the wake job could not be encoded", err)
	}
	if len(payload) > maxAsyncPayload {
		return sb.E(op, sb.EINVALID, fmt.Sprintf("the wake job is %d bytes, over Lambda's 256 KB async limit; lower maxMessagesPerRoom", len(payload)))
	}
	for attempt := 0; ; attempt++ {
		status, kind, err := d.invoke(ctx, payload)
		switch {
		case err == nil && status == http.StatusAccepted:
			return nil
		case err == nil && status != http.StatusTooManyRequests && status < 500:
			return sb.E(op, sb.EINTERNAL, fmt.Sprintf(
				"invoking the agent worker failed (%d %s); check its name and the invoke grant", status, kind))
		}
		if attempt >= len(d.Backoff) || ctx.Err() != nil {
			if err == nil {
				err = fmt.Errorf("lambda answered %d %s", status, kind)
			}
			return sb.Wrap(op, sb.EUNAVAILABLE, "the agent worker could not be reached; try again", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(d.Backoff[attempt]):
		}
	}
}

// invoke makes one signed Invoke call; kind is Lambda's error type.
func (d *Dispatcher) invoke(ctx context.Context, payload []byte) (status int, kind string, err error) {
	u := strings.TrimRight(d.Endpoint, "/") + "/2015-03-31/functions/" + url.PathEscape(d.Function) + "/invocations"
	status, header, body, err := d.Signer.Post(ctx, u, map[string]string{
		"Content-Type": "application/json", "X-Amz-Invocation-Type": "Event"}, payload)
	if err != nil {
		return 0, "", err
	}
	kind = header.Get("X-Amzn-ErrorType")
	if kind == "" && status != http.StatusAccepted {
		var e struct{ Type string }
		_ = json.Unmarshal(body, &e)
		kind = e.Type
	}
	kind, _, _ = strings.Cut(kind, ":")
	return status, kind, nil
}
