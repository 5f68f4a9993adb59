package secrets

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
)

// Client reads secrets with one signed GetSecretValue call each, without
// the SDK's Secrets Manager client: that client and its schemas cost every
// function about 0.1 MiB of zip and their construction at every cold start,
// for the one call a function makes.
type Client struct {
	Endpoint string // base URL of the Secrets Manager API
	Signer   awssigned.Signer
}

// NewClient builds the client from the loaded AWS config;
// AWS_ENDPOINT_URL_SECRETS_MANAGER or AWS_ENDPOINT_URL points it at
// LocalStack.
func NewClient(cfg aws.Config) *Client {
	return &Client{
		Endpoint: awssigned.Endpoint(cfg, os.Getenv, "AWS_ENDPOINT_URL_SECRETS_MANAGER", "secretsmanager"),
		Signer:   awssigned.Signer{Service: "secretsmanager", Region: cfg.Region, Credentials: cfg.Credentials, HTTP: awssigned.HTTPClient(cfg)},
	}
}

// maxSecretAnswer bounds an answer: a secret holds at most 64 KiB, which
// JSON escaping can grow.
const maxSecretAnswer = 512 << 10

// Attempts and waits as the SDK's standard retryer: three attempts, before
// retry i a random part of base·2^i, base 1 s after throttling, else 50 ms.
const (
	maxAttempts   = 3
	throttleBase  = time.Second
	transientBase = 50 * time.Millisecond
)

// ReadSecret calls GetSecretValue and returns the secret's current SecretString (or its
// SecretBinary as a string). A refusal is an *APIError carrying Secrets
// Manager's error code; throttling, 5xx answers and failed connections
// are tried again.
func (c *Client) ReadSecret(ctx context.Context, id string) (string, error) {
	payload, err := json.Marshal(map[string]string{"SecretId": id})
	if err != nil {
		return "", err
	}
	for attempt := 1; ; attempt++ {
		value, err := c.getOnce(ctx, payload)
		base, again := retryDelay(err)
		if err == nil || !again || attempt >= maxAttempts || ctx.Err() != nil {
			return value, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Duration(rand.Float64() * float64(base<<(attempt-1)))):
		}
	}
}

func (c *Client) getOnce(ctx context.Context, payload []byte) (string, error) {
	if c.Signer.Credentials == nil {
		return "", errors.New("no AWS credentials configured")
	}
	status, header, body, err := c.Signer.PostLimited(ctx, strings.TrimRight(c.Endpoint, "/")+"/", map[string]string{
		"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "secretsmanager.GetSecretValue"}, payload, maxSecretAnswer)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", awssigned.ReadJSONError(status, header, body)
	}
	var out struct {
		SecretString *string `json:"SecretString"`
		SecretBinary string  `json:"SecretBinary"` // base64, as the JSON protocol sends blobs
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return "", fmt.Errorf("decode GetSecretValue answer: %w", err)
	}
	if out.SecretString != nil {
		return *out.SecretString, nil
	}
	b, err := base64.StdEncoding.DecodeString(out.SecretBinary)
	if err != nil {
		return "", fmt.Errorf("decode SecretBinary: %w", err)
	}
	return string(b), nil
}

// APIError is an answer other than 200 from Secrets Manager (its Code
// "ResourceNotFoundException", …).
type APIError = awssigned.APIError

// retryDelay says whether err is worth another attempt and the base of the
// wait before it.
func retryDelay(err error) (time.Duration, bool) {
	var api *APIError
	switch {
	case err == nil:
		return 0, false
	case errors.As(err, &api):
		if awssigned.Throttling(api.Code) || api.Status == http.StatusTooManyRequests {
			return throttleBase, true
		}
		return transientBase, api.Status >= 500
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return 0, false
	}
	// No answer: the HTTP client's *url.Error (refused, reset, timed out).
	// Credentials or signing that failed are not worth another attempt.
	var ue *url.Error
	return transientBase, errors.As(err, &ue)
}

// apiCode is the error code of a Secrets Manager API error (this client's
// or the SDK's), "" for any other error.
func apiCode(err error) string {
	var api interface{ ErrorCode() string }
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}
