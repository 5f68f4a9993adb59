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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Client sends task token results.
type Client struct {
	Endpoint    string // base URL, e.g. https://states.eu-central-1.amazonaws.com
	Region      string
	Credentials aws.CredentialsProvider
	HTTP        aws.HTTPClient
}

// New builds a Client from the loaded AWS config. The endpoint comes from
// AWS_ENDPOINT_URL_SFN, else AWS_ENDPOINT_URL (the config's base endpoint),
// else the region's public endpoint.
func New(cfg aws.Config, getenv func(string) string) *Client {
	endpoint := getenv("AWS_ENDPOINT_URL_SFN")
	if endpoint == "" && cfg.BaseEndpoint != nil {
		endpoint = *cfg.BaseEndpoint
	}
	if endpoint == "" {
		endpoint = "https://states." + cfg.Region + ".amazonaws.com"
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return &Client{Endpoint: endpoint, Region: cfg.Region, Credentials: cfg.Credentials, HTTP: hc}
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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.Endpoint, "/")+"/", bytes.NewReader(payload))
	if err != nil {
		return sb.Wrap(op, sb.EINTERNAL, "bad Step Functions endpoint", err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+action)
	creds, err := c.Credentials.Retrieve(ctx)
	if err != nil {
		return sb.Wrap(op, sb.EUNAVAILABLE, "no AWS credentials", err)
	}
	sum := sha256.Sum256(payload)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "states", c.Region, time.Now()); err != nil {
		return sb.Wrap(op, sb.EINTERNAL, "signing the request failed", err)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions could not be reached", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode == http.StatusOK {
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
	cause := fmt.Errorf("%s: %d %s: %s", action, resp.StatusCode, kind, e.Message)
	if gone[kind] {
		return sb.Wrap(op, sb.ECONFLICT, "the execution no longer waits for this token", cause)
	}
	return sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions refused the call", cause)
}
