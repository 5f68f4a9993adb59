// Package sfntoken resumes or fails a Step Functions Task that waits on a
// task token (.waitForTaskToken): SendTaskSuccess and SendTaskFailure;
// stops a running execution when the operator stops its chain
// (DescribeExecution, StopExecution); and starts the document pipeline's
// executions (Machine: StartExecution).
//
// It speaks the Step Functions JSON API directly (one SigV4-signed POST per
// call) rather than through the SDK's client: the functions make only these
// calls and must stay small, and that client with its schemas would cost
// each of them about 80 KB of zip.
package sfntoken

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Client sends task token results.
type Client struct {
	Endpoint string // base URL, e.g. https://states.eu-central-1.amazonaws.com
	// SyncEndpoint receives StartSyncExecution: AWS serves it on the sync
	// data plane, sync-states.<region>.amazonaws.com; an override serves
	// both (the SDK drops the "sync-" host prefix there too).
	SyncEndpoint string
	Signer       awssigned.Signer
}

// New builds a Client from the loaded AWS config. The endpoint comes from
// AWS_ENDPOINT_URL_SFN, else AWS_ENDPOINT_URL (the config's base endpoint),
// else the region's public endpoint.
func New(cfg aws.Config, getenv func(string) string) *Client {
	endpoint := awssigned.Endpoint(cfg, getenv, "AWS_ENDPOINT_URL_SFN", "states")
	sync := endpoint
	if endpoint == "https://states."+cfg.Region+".amazonaws.com" {
		sync = "https://sync-states." + cfg.Region + ".amazonaws.com"
	}
	return &Client{Endpoint: endpoint, SyncEndpoint: sync,
		Signer: awssigned.Signer{Service: "states", Region: cfg.Region, Credentials: cfg.Credentials, HTTP: awssigned.HTTPClient(cfg)}}
}

// Succeed resumes the waiting Task with output (JSON) as its result.
// ECONFLICT when the execution no longer waits (the token timed out, was
// used, or is unknown); EUNAVAILABLE when Step Functions cannot be reached
// or refuses for another reason.
func (c *Client) Succeed(ctx context.Context, token, output string) error {
	return c.send(ctx, "SendTaskSuccess", map[string]string{"taskToken": token, "output": output})
}

// Fail ends the waiting Task with the error errName (what Catch matches)
// and cause. Errors as Succeed.
func (c *Client) Fail(ctx context.Context, token, errName, cause string) error {
	return c.send(ctx, "SendTaskFailure", map[string]string{"taskToken": token, "error": errName, "cause": cause})
}

// StopError is the error a stopped execution ends with (StopExecution's
// error field; its cause says who stopped it).
const StopError = "Switchboard.ChainStopped"

// Stop stops the execution arn if it still runs (DescribeExecution, then
// StopExecution) and reports whether it did: false, and no error, for one
// that has ended already or that Step Functions does not know (its
// history expired). EINVALID for a string that is not an execution ARN;
// EUNAVAILABLE when Step Functions cannot be reached or refuses.
func (c *Client) Stop(ctx context.Context, arn, cause string) (bool, error) {
	const op = "stepfunctions.stop"
	var d struct {
		Status string `json:"status"`
	}
	raw, kind, err := c.call(ctx, "DescribeExecution", map[string]string{"executionArn": arn})
	if err == nil && json.Unmarshal(raw, &d) != nil {
		err = fmt.Errorf("DescribeExecution: an answer without a status: %.200s", raw)
	}
	if err == nil && d.Status == "RUNNING" {
		_, kind, err = c.call(ctx, "StopExecution", map[string]string{"executionArn": arn, "error": StopError, "cause": cause})
	}
	switch {
	case kind == "ExecutionDoesNotExist":
		return false, nil
	case kind == "InvalidArn":
		return false, sb.Wrap(op, sb.EINVALID, "not an execution ARN", err)
	case err != nil:
		return false, sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions could not stop the execution", err)
	}
	return d.Status == "RUNNING", nil
}

// Machine starts executions of a Standard state machine (StartExecution).
// ARN is read per call: the dev runtime creates its machines after the
// functions' handlers are built.
type Machine struct {
	Client *Client
	ARN    func() string
}

// startRetries are the waits before the second and third StartExecution
// attempts, after no answer, a 5xx or throttling (the SDK's retryer tried
// three times too). A retry is safe: the same name and input answer the
// execution the first attempt started.
var startRetries = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond}

// Start starts an execution called name on input and returns its ARN.
// Starting a running execution's name with the same input again answers
// that execution (Step Functions' own idempotency). ENOTFOUND when no ARN
// is configured; ECONFLICT when the name was used with another input;
// EUNAVAILABLE when the service cannot be reached.
func (m Machine) Start(ctx context.Context, name, input string) (string, error) {
	const op = "stepfunctions.start"
	arn := m.ARN()
	if arn == "" {
		return "", sb.E(op, sb.ENOTFOUND, "no state machine is configured")
	}
	for attempt := 0; ; attempt++ {
		raw, kind, err := m.Client.call(ctx, "StartExecution", map[string]string{"stateMachineArn": arn, "name": name, "input": input})
		switch {
		case err == nil:
			var out struct {
				ExecutionArn string `json:"executionArn"`
			}
			if json.Unmarshal(raw, &out) != nil || out.ExecutionArn == "" {
				return "", sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions could not be reached", fmt.Errorf("start %s: an answer without an execution ARN: %.200s", arn, raw))
			}
			return out.ExecutionArn, nil
		case kind == "ExecutionAlreadyExists":
			return "", sb.Wrap(op, sb.ECONFLICT, "an execution with this name exists with other input", err)
		case attempt < len(startRetries) && ctx.Err() == nil && retryable(kind):
			select {
			case <-ctx.Done():
			case <-time.After(startRetries[attempt]):
			}
			continue
		}
		return "", sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions could not be reached", fmt.Errorf("start %s: %w", arn, err))
	}
}

// SyncMachine starts one Express state machine with StartSyncExecution
// and waits for its output. ARN is read per call, as for Machine.
type SyncMachine struct {
	Client *Client
	ARN    func() string
}

// StartSync runs the machine on input and returns its output. ENOTFOUND
// when no ARN is configured; EUNAVAILABLE when the service cannot be
// reached or the execution did not succeed (its error and cause are kept
// for the log, not for the caller). Only a throttled start is tried again:
// any other failure may have run the machine.
func (m SyncMachine) StartSync(ctx context.Context, input string) (string, error) {
	const op = "stepfunctions.startSync"
	arn := m.ARN()
	if arn == "" {
		return "", sb.E(op, sb.ENOTFOUND, "no state machine is configured")
	}
	var out struct {
		ExecutionArn string `json:"executionArn"`
		Status       string `json:"status"`
		Output       string `json:"output"`
		Error        string `json:"error"`
		Cause        string `json:"cause"`
	}
	for attempt := 0; ; attempt++ {
		raw, kind, err := m.Client.callAt(ctx, m.Client.SyncEndpoint, "StartSyncExecution", map[string]string{"stateMachineArn": arn, "input": input})
		if err == nil {
			if err := json.Unmarshal(raw, &out); err != nil {
				return "", sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions could not be reached", fmt.Errorf("start %s: %w", arn, err))
			}
			break
		}
		if attempt < len(startRetries) && ctx.Err() == nil && (kind == "HTTP 429" || strings.Contains(kind, "Throttl")) {
			select {
			case <-ctx.Done():
			case <-time.After(startRetries[attempt]):
			}
			continue
		}
		return "", sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions could not be reached", fmt.Errorf("start %s: %w", arn, err))
	}
	if out.Status != "SUCCEEDED" {
		return "", sb.Wrap(op, sb.EUNAVAILABLE, "the state machine did not finish", fmt.Errorf("execution %s: %s: %s: %s",
			out.ExecutionArn, out.Status, out.Error, out.Cause))
	}
	return out.Output, nil
}

// retryable: no answer (kind ""), a 5xx or 429, or throttling.
func retryable(kind string) bool {
	return kind == "" || strings.HasPrefix(kind, "HTTP 5") || kind == "HTTP 429" || strings.Contains(kind, "Throttl") ||
		kind == "ServiceUnavailable" || kind == "InternalFailure"
}

// gone are the answers that mean nobody waits for the token any more.
var gone = map[string]bool{"TaskTimedOut": true, "TaskDoesNotExist": true, "InvalidToken": true}

func (c *Client) send(ctx context.Context, action string, body map[string]string) error {
	op := "stepfunctions." + action
	_, kind, err := c.call(ctx, action, body)
	switch {
	case err == nil:
		return nil
	case gone[kind]:
		return sb.Wrap(op, sb.ECONFLICT, "the execution no longer waits for this token", err)
	case kind == "":
		return sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions could not be reached", err)
	}
	return sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions refused the call", err)
}

// call sends one action and returns the answer's body; on an error answer
// it returns the error's kind ("TaskTimedOut"; "" when nothing answered).
func (c *Client) call(ctx context.Context, action string, body map[string]string) (json.RawMessage, string, error) {
	return c.callAt(ctx, c.Endpoint, action, body)
}

// maxAnswer bounds an answer: an execution's input and output (in
// DescribeExecution and StartSyncExecution answers) hold up to 256 KiB each.
const maxAnswer = 1 << 20

// callAt is call on endpoint.
func (c *Client) callAt(ctx context.Context, endpoint, action string, body map[string]string) (json.RawMessage, string, error) {
	payload, _ := json.Marshal(body)
	status, _, raw, err := c.Signer.PostLimited(ctx, strings.TrimRight(endpoint, "/")+"/", map[string]string{
		"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AWSStepFunctions." + action}, payload, maxAnswer)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", action, err)
	}
	if status == http.StatusOK {
		return raw, "", nil
	}
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &e)
	kind := e.Type
	if i := strings.LastIndex(kind, "#"); i >= 0 {
		kind = kind[i+1:] // "com.amazonaws.swf.service.v2.model#TaskTimedOut"
	}
	if kind == "" {
		kind = "HTTP " + strconv.Itoa(status)
	}
	return nil, kind, fmt.Errorf("%s: %d %s: %s", action, status, kind, e.Message)
}
