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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Dispatcher invokes one function asynchronously per job.
type Dispatcher struct {
	Function    string // name or ARN of the agent-worker function
	Endpoint    string // base URL of the Lambda API, e.g. https://lambda.eu-central-1.amazonaws.com
	Region      string
	Credentials aws.CredentialsProvider
	HTTP        aws.HTTPClient
	// Waits before the second and third attempt of a throttled or failed
	// call (the SDK client's retries, kept short for the webhook's budget).
	Backoff []time.Duration
}

var _ wake.Dispatcher = (*Dispatcher)(nil)

// New builds a Dispatcher from the loaded AWS config. The endpoint comes
// from AWS_ENDPOINT_URL_LAMBDA, else AWS_ENDPOINT_URL (the config's base
// endpoint), else the region's public endpoint.
func New(cfg aws.Config, function string, getenv func(string) string) *Dispatcher {
	endpoint := getenv("AWS_ENDPOINT_URL_LAMBDA")
	if endpoint == "" && cfg.BaseEndpoint != nil {
		endpoint = *cfg.BaseEndpoint
	}
	if endpoint == "" {
		endpoint = "https://lambda." + cfg.Region + ".amazonaws.com"
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &Dispatcher{Function: function, Endpoint: endpoint, Region: cfg.Region, Credentials: cfg.Credentials,
		HTTP: hc, Backoff: []time.Duration{50 * time.Millisecond, 150 * time.Millisecond}}
}

// maxAsyncPayload is Lambda's limit for an asynchronous invocation (256 KB).
const maxAsyncPayload = 256 * 1024

// Dispatch implements wake.Dispatcher. Throttling, server errors and no
// answer are EUNAVAILABLE (after the retries) so that the webhook answers
// 503 and the poll retries; any other refusal is EINTERNAL: a wrong name
// or a missing invoke grant, which a retry does not fix.
func (d *Dispatcher) Dispatch(ctx context.Context, job wake.Job) error {
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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(payload))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Amz-Invocation-Type", "Event")
	creds, err := d.Credentials.Retrieve(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("credentials: %w", err)
	}
	sum := sha256.Sum256(payload)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "lambda", d.Region, time.Now()); err != nil {
		return 0, "", fmt.Errorf("sign: %w", err)
	}
	resp, err := d.HTTP.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	kind = resp.Header.Get("X-Amzn-ErrorType")
	if kind == "" && resp.StatusCode != http.StatusAccepted {
		var e struct{ Type string }
		_ = json.Unmarshal(body, &e)
		kind = e.Type
	}
	kind, _, _ = strings.Cut(kind, ":")
	return resp.StatusCode, kind, nil
}
