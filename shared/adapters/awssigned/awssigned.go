// Package awssigned makes one SigV4-signed POST to an AWS JSON or REST API
// without that service's SDK client. The functions that make only one or
// two AWS calls besides DynamoDB (the webhook receivers hand a job to the
// agent-worker; the deciding functions resume a Step Functions task) use
// it to stay small: an SDK client and its schemas cost a receiver a third
// of a megabyte and about a millisecond of every cold start.
package awssigned

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Endpoint is the base URL of a service: the variable envVar
// (AWS_ENDPOINT_URL_LAMBDA, …) when set, else AWS_ENDPOINT_URL (the config's
// base endpoint), else the region's public endpoint host.<region>.amazonaws.com.
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true ignores envVar, as the SDK's
// clients do (the config has no base endpoint then either).
func Endpoint(cfg aws.Config, getenv func(string) string, envVar, host string) string {
	if e := getenv(envVar); e != "" && !strings.EqualFold(getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"), "true") {
		return e
	}
	if cfg.BaseEndpoint != nil && *cfg.BaseEndpoint != "" {
		return *cfg.BaseEndpoint
	}
	return "https://" + host + "." + cfg.Region + ".amazonaws.com"
}

// HTTPClient is the config's HTTP client, or one with a 10 s limit.
func HTTPClient(cfg aws.Config) aws.HTTPClient {
	if cfg.HTTPClient != nil {
		return cfg.HTTPClient
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// MaxAnswer bounds how much of an answer Post reads.
const MaxAnswer = 4 << 10

// Signer signs requests for one service in one region.
type Signer struct {
	Service     string // signing name: "lambda", "states"
	Region      string
	Credentials aws.CredentialsProvider
	HTTP        aws.HTTPClient
}

// Post sends payload to url with headers, signed, and returns the status,
// the response headers and at most MaxAnswer bytes of the body. err is set
// only when no answer came (credentials, signing, the network).
func (s Signer) Post(ctx context.Context, url string, headers map[string]string, payload []byte) (int, http.Header, []byte, error) {
	return s.PostLimited(ctx, url, headers, payload, MaxAnswer)
}

// PostLimited is Post reading at most limit bytes of the answer.
func (s Signer) PostLimited(ctx context.Context, url string, headers map[string]string, payload []byte, limit int64) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if err := s.Sign(ctx, req, payload); err != nil {
		return 0, nil, nil, err
	}
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	return resp.StatusCode, resp.Header, body, nil
}

// Sign adds the SigV4 signature of req, whose body is payload, with the
// credentials' current keys.
func (s Signer) Sign(ctx context.Context, req *http.Request, payload []byte) error {
	creds, err := s.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	sum := sha256.Sum256(payload)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), s.Service, s.Region, time.Now()); err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	return nil
}
