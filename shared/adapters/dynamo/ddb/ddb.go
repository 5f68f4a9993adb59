// Package ddb calls DynamoDB's JSON API, SigV4-signed, without the AWS
// SDK's DynamoDB packages: the client (its operations, serializers,
// endpoint rules and middleware) cost every function about 0.23 MiB of
// zip, its types and attributevalue another 0.08 MiB and the schemas of
// every operation built at package init (0.56 ms of every cold start), for
// the seven item operations the stores make. The attribute values, the operation
// inputs and outputs and Marshal/Unmarshal keep the SDK's names and shapes
// (service/dynamodb, its types and feature/dynamodb/attributevalue), so
// the stores read as they did; the tests compare the wire documents and
// the marshalled items with the SDK's.
//
// Retries follow the SDK's standard retryer, with the attempts, waits and
// deadline the Client's fields set (the dynamo package sets its call
// limits there): throttling, 429/500/502/503/504 answers and requests that
// got no (complete) answer are tried again; nothing else is.
package ddb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
)

// Client sends DynamoDB requests. Build it once per cold start; it is safe
// for concurrent use.
type Client struct {
	Endpoint string // base URL of the DynamoDB API
	Signer   awssigned.Signer

	// MaxAttempts per call, the first included; 1 when zero.
	MaxAttempts int
	// OperationTimeout bounds one call, every attempt and wait included
	// (a caller's earlier deadline wins); none when zero.
	OperationTimeout time.Duration
	// Backoff is the wait before the retry after the attempt-th attempt
	// failed (attempt counts from 1); no wait when nil.
	Backoff func(attempt int) time.Duration
}

// NewFromConfig builds a client from the loaded AWS config:
// AWS_ENDPOINT_URL_DYNAMODB, else AWS_ENDPOINT_URL (the config's base
// endpoint), else the region's dynamodb.<region>.amazonaws.com.
func NewFromConfig(cfg aws.Config) *Client {
	return &Client{
		Endpoint: awssigned.Endpoint(cfg, os.Getenv, "AWS_ENDPOINT_URL_DYNAMODB", "dynamodb"),
		Signer:   awssigned.Signer{Service: "dynamodb", Region: cfg.Region, Credentials: cfg.Credentials, HTTP: awssigned.HTTPClient(cfg)},
	}
}

// maxAnswer bounds an answer: BatchGetItem returns up to 16 MB.
const maxAnswer = 20 << 20

// call sends one operation with in as its JSON document and decodes the
// answer into out, retrying as the package comment says.
func (c *Client) call(ctx context.Context, op string, in, out any) error {
	payload, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("dynamodb %s: encode request: %w", op, err)
	}
	if c.OperationTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.OperationTimeout)
		defer cancel() // answers are read completely inside the call
	}
	for attempt := 1; ; attempt++ {
		err = c.send(ctx, op, payload, out)
		if err == nil || attempt >= c.MaxAttempts || !retryable(err) || ctx.Err() != nil {
			break
		}
		var wait time.Duration
		if c.Backoff != nil {
			wait = c.Backoff(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("dynamodb %s: %w (after %d attempts, last: %v)", op, ctx.Err(), attempt, err)
		case <-t.C:
		}
	}
	if err != nil {
		return fmt.Errorf("dynamodb %s: %w", op, err)
	}
	return nil
}

// send is one attempt.
func (c *Client) send(ctx context.Context, op string, payload []byte, out any) error {
	if c.Signer.Credentials == nil {
		return errors.New("no AWS credentials configured")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.Endpoint, "/")+"/", bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	// The checksum DynamoDB sends is of the body as sent: no gzip, as the
	// SDK's client asks.
	req.Header.Set("Accept-Encoding", "identity")
	if err := c.Signer.Sign(ctx, req, payload); err != nil {
		return err
	}
	resp, err := c.Signer.HTTP.Do(req)
	if err != nil {
		return &awssigned.SendError{Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return &awssigned.SendError{Err: fmt.Errorf("read answer: %w", err)}
	}
	if err := checkCRC32(resp.Header, body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return apiError(resp.StatusCode, resp.Header, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	return nil
}

// checkCRC32 compares the body with the X-Amz-Crc32 header, when there is one.
func checkCRC32(h http.Header, body []byte) error {
	v := h.Get("X-Amz-Crc32")
	if v == "" {
		return nil
	}
	want, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return fmt.Errorf("unreadable X-Amz-Crc32 %q", v)
	}
	if got := crc32.ChecksumIEEE(body); got != uint32(want) {
		return fmt.Errorf("answer does not match its X-Amz-Crc32 checksum (%d, computed %d)", want, got)
	}
	return nil
}

// The error codes the stores tell apart.
const (
	ConditionalCheckFailed = "ConditionalCheckFailedException"
	ResourceNotFound       = "ResourceNotFoundException"
	ResourceInUse          = "ResourceInUseException"
)

// Error is an answer other than 200: its status, DynamoDB's error code
// (ConditionalCheckFailed, …; for an answer that names none, as a proxy's
// 502, the status text), message and request id. Its text is the SDK's.
type Error struct {
	Status    int
	Code      string
	Message   string
	RequestID string
	// Item is the item as it was when a conditional write asked for it
	// (ReturnValuesOnConditionCheckFailure ALL_OLD) was refused.
	Item map[string]AttributeValue
}

func (e *Error) Error() string {
	return fmt.Sprintf("https response error StatusCode: %d, RequestID: %s, api error %s: %s", e.Status, e.RequestID, e.Code, e.Message)
}

// ErrorCode is the error code, as the SDK's API errors name it.
func (e *Error) ErrorCode() string { return e.Code }

// HTTPStatusCode is the answer's status, as the SDK's response errors have it.
func (e *Error) HTTPStatusCode() int { return e.Status }

// Code is the error code of the *Error in err's chain, "" when there is none.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// apiError reads an error answer.
func apiError(status int, h http.Header, body []byte) *Error {
	api := awssigned.ReadJSONError(status, h, body)
	e := &Error{Status: status, Code: api.Code, Message: api.Message, RequestID: api.RequestID}
	if e.Code == "" {
		e.Code = http.StatusText(status)
	}
	if e.Code == ConditionalCheckFailed {
		var doc struct{ Item item }
		_ = json.Unmarshal(body, &doc)
		e.Item = doc.Item
	}
	return e
}

// retryable says whether another attempt may succeed: the SDK's standard
// retryer's throttling and transient codes and statuses, and requests that
// got no (complete) answer. Credentials or signing that failed, a checksum
// mismatch or an answer that does not decode are not retried.
func retryable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		switch e.Status {
		case http.StatusTooManyRequests, 500, 502, 503, 504:
			return true
		}
		return awssigned.Throttling(e.Code) || e.Code == "RequestTimeout" || e.Code == "RequestTimeoutException"
	}
	var send *awssigned.SendError
	return errors.As(err, &send)
}
