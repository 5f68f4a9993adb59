package bedrock

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
)

// Client makes Bedrock Runtime's Converse call: one SigV4-signed POST of
// the request's JSON to /model/{modelId}/converse (restJson1, as the SDK's
// bedrockruntime client sends it). It replaces that client, whose types
// and schemas for every Bedrock Runtime operation were a tenth of the
// agent-worker's zip and a few tenths of a millisecond of its cold start.
// It never retries: the model's retry policy does (modelretry).
type Client struct {
	Endpoint string // base URL, e.g. https://bedrock-runtime.eu-central-1.amazonaws.com
	Signer   awssigned.Signer
}

var _ ConverseAPI = (*Client)(nil)

// NewClient builds the client from the loaded AWS config (its region, its
// credentials, its HTTP client). The endpoint comes from
// AWS_ENDPOINT_URL_BEDROCK_RUNTIME, else AWS_ENDPOINT_URL (the config's
// base endpoint), else the region's public endpoint.
func NewClient(cfg aws.Config) *Client {
	return &Client{
		Endpoint: awssigned.Endpoint(cfg, os.Getenv, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "bedrock-runtime"),
		Signer:   awssigned.Signer{Service: "bedrock", Region: cfg.Region, Credentials: cfg.Credentials, HTTP: awssigned.HTTPClient(cfg)},
	}
}

// maxAnswer bounds a Converse answer read into memory.
const maxAnswer = 16 << 20

// Converse sends body (a Converse request, JSON) for modelID and returns
// the answer's body. An answer other than 200 is an *APIError; a request
// that got no answer is a *SendError; credentials that cannot be loaded
// are a plain error.
func (c *Client) Converse(ctx context.Context, modelID string, body []byte) ([]byte, error) {
	if c.Signer.Credentials == nil {
		return nil, errors.New("no AWS credentials configured")
	}
	u := strings.TrimRight(c.Endpoint, "/") + "/model/" + awssigned.Escape(modelID, "") + "/converse"
	status, header, answer, err := c.Signer.PostLimited(ctx, u, map[string]string{"Content-Type": "application/json"}, body, maxAnswer)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, &SendError{Err: err}
		}
		return nil, err
	}
	if status != http.StatusOK {
		return nil, awssigned.ReadJSONError(status, header, answer)
	}
	return answer, nil
}

// APIError is an answer other than 200: its status and Bedrock's error
// code (ThrottlingException, ValidationException, …; "" when the answer
// named none, as a proxy's 502 does).
type APIError = awssigned.APIError

// SendError is a request that got no answer (the connection failed or
// timed out).
type SendError = awssigned.SendError
