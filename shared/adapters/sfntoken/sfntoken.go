// Package sfntoken resumes or fails a Step Functions Task that waits on a
// task token (.waitForTaskToken): SendTaskSuccess and SendTaskFailure.
//
// It speaks the Step Functions JSON API directly (one SigV4-signed POST per
// call) rather than through the SDK's client: the functions that decide an
// approval (the Telegram webhook and the approval page) make only these two
// calls and must stay small, and that client with its schemas would cost
// them a noticeable part of their zip budget.
package sfntoken

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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

// gone are the answers that mean nobody waits for the token any more.
var gone = map[string]bool{"TaskTimedOut": true, "TaskDoesNotExist": true, "InvalidToken": true}

func (c *Client) send(ctx context.Context, action string, body map[string]string) error {
	op := "stepfunctions." + action
	payload, _ := json.Marshal(body)
	status, _, raw, err := c.Signer.Post(ctx, strings.TrimRight(c.Endpoint, "/")+"/", map[string]string{
		"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AWSStepFunctions." + action}, payload)
	if err != nil {
		return sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions could not be reached", err)
	}
	if status == http.StatusOK {
		return nil
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
	cause := fmt.Errorf("%s: %d %s: %s", action, status, kind, e.Message)
	if gone[kind] {
		return sb.Wrap(op, sb.ECONFLICT, "the execution no longer waits for this token", cause)
	}
	return sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions refused the call", cause)
}
