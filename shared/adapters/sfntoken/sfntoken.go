// Package sfntoken resumes or fails a Step Functions Task that waits on a
// task token (.waitForTaskToken): SendTaskSuccess and SendTaskFailure; and
// stops a running execution when the operator stops its chain
// (DescribeExecution, StopExecution).
//
// It speaks the Step Functions JSON API directly (one SigV4-signed POST per
// call) rather than through the SDK's client: the functions that decide an
// approval or stop a chain (the Telegram webhook, the approval page, the
// console) make only these calls and must stay small, and that client with
// its schemas would cost each of them about 80 KB of zip.
package sfntoken

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Client sends task token results.
type Client struct {
	Endpoint string // base URL, e.g. https://states.eu-central-1.amazonaws.com
	Signer   awssigned.Signer
}

// New builds a Client from the loaded AWS config. The endpoint comes from
// AWS_ENDPOINT_URL_SFN, else AWS_ENDPOINT_URL (the config's base endpoint),
// else the region's public endpoint.
func New(cfg aws.Config, getenv func(string) string) *Client {
	return &Client{Endpoint: awssigned.Endpoint(cfg, getenv, "AWS_ENDPOINT_URL_SFN", "states"),
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
	payload, _ := json.Marshal(body)
	status, _, raw, err := c.Signer.Post(ctx, strings.TrimRight(c.Endpoint, "/")+"/", map[string]string{
		"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AWSStepFunctions." + action}, payload)
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
