package s3blob

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig"
	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
)

// Dummy credentials for a loopback S3 server: in-process gofakes3 and a local
// LocalStack accept any signature, but a request is never sent unsigned.
const (
	dummyAccessKey = "switchboard-local"
	dummySecretKey = "switchboard-local-secret"
	// DefaultLocalRegion is used when an endpoint override is set and no
	// region is configured: signing needs one, the emulators ignore it.
	DefaultLocalRegion = "us-east-1"
)

// Client makes the S3 REST calls the Store needs (objects, multipart
// uploads, listing, and the bucket check of dev mode), SigV4-signed and
// retried like the SDK's standard retryer. It replaces the SDK's S3 client,
// which alone was about 0.3 MiB of every function zip that reads files (its
// endpoint rules, checksums, S3 Express and access-point code).
type Client struct {
	endpoint    string // base URL of an override; "" = the region's public endpoint
	pathStyle   bool
	region      string
	creds       aws.CredentialsProvider
	http        aws.HTTPClient
	signer      *v4.Signer
	maxAttempts int
}

// NewClient builds the AWS config from the environment (awsconfig.FromEnvironment) and the S3 client
// from it; a process that builds other AWS clients loads the config once and
// calls NewClientFromConfig.
//
// The endpoint follows the SDK's conventions and nothing else, so no
// handler needs an "if local" branch: AWS_ENDPOINT_URL_S3 (or a services
// section of the shared config file, through the config's sources) wins over
// AWS_ENDPOINT_URL (the config's base endpoint);
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true turns both off.
//
// With an override set, the client uses path-style addressing (gofakes3 and
// LocalStack do not serve bucket.host names) and fills in DefaultLocalRegion
// when no region is configured. When the override is a loopback address and
// no credentials are configured, it uses dummy static keys.
func NewClient(ctx context.Context) (*Client, error) {
	cfg, err := awsconfig.FromEnvironment(ctx)
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	return NewClientFromConfig(cfg), nil
}

// NewClientFromConfig builds the S3 client from an already loaded config
// (the composition root loads it once per cold start).
func NewClientFromConfig(cfg aws.Config) *Client {
	c := &Client{
		endpoint:    serviceEndpoint(cfg),
		region:      cfg.Region,
		creds:       cfg.Credentials,
		http:        cfg.HTTPClient,
		maxAttempts: cfg.RetryMaxAttempts,
		signer:      v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }),
	}
	if c.maxAttempts <= 0 {
		c.maxAttempts = defaultMaxAttempts
	}
	if c.http == nil {
		c.http = awshttp.NewBuildableClient()
	}
	if bc, ok := c.http.(*awshttp.BuildableClient); ok {
		c.http = bc.WithTransportOptions(func(t *http.Transport) { t.ResponseHeaderTimeout = responseHeaderTimeout })
	}
	if c.endpoint != "" {
		c.pathStyle = true
		if c.region == "" {
			c.region = DefaultLocalRegion
		}
		if awsconfig.IsLoopback(c.endpoint) && noCredentialsConfigured(c.creds) {
			c.creds = credentials.NewStaticCredentialsProvider(dummyAccessKey, dummySecretKey, "")
		}
	}
	return c
}

// Endpoint is the override the client sends to ("" = AWS's own), PathStyle
// whether it names the bucket in the path, Region the signing region, and
// Credentials what it signs with.
func (c *Client) Endpoint() string                     { return c.endpoint }
func (c *Client) PathStyle() bool                      { return c.pathStyle }
func (c *Client) Region() string                       { return c.region }
func (c *Client) Credentials() aws.CredentialsProvider { return c.creds }

// serviceEndpoint is S3's endpoint override as the SDK's client resolves it:
// the config sources' services entry for S3 (AWS_ENDPOINT_URL_S3), else the
// config's base endpoint (AWS_ENDPOINT_URL).
func serviceEndpoint(cfg aws.Config) string {
	type serviceEndpointSource interface {
		GetServiceBaseEndpoint(ctx context.Context, sdkID string) (string, bool, error)
	}
	for _, src := range cfg.ConfigSources {
		if s, ok := src.(serviceEndpointSource); ok {
			if v, found, err := s.GetServiceBaseEndpoint(context.Background(), "S3"); err == nil && found && v != "" {
				return v
			}
		}
	}
	return aws.ToString(cfg.BaseEndpoint)
}

// noCredentialsConfigured reports whether the chain found nothing and
// fell back to the EC2 instance role (the SDK config loader's
// resolveCredsFromProfile, default case), which does not exist on a laptop.
// The provider says so by its sources: naming ec2rolecreds.Provider would
// link the instance-metadata client into every function that uses S3.
func noCredentialsConfigured(p aws.CredentialsProvider) bool {
	if p == nil {
		return true
	}
	src, ok := p.(aws.CredentialProviderSource)
	return ok && slices.Equal(src.ProviderSources(), []aws.CredentialSource{aws.CredentialSourceIMDS})
}

// responseHeaderTimeout bounds one attempt from the end of the request
// body to the response headers (S3 answers a PUT after the whole body is
// in); a silent server is retried on a fresh connection instead of waited
// for until the call's deadline. The body of a GetObject is bounded by the
// call's deadline (transferTimeout).
const responseHeaderTimeout = 15 * time.Second

// The SDK's standard retryer: three attempts; before retry i (from 0) a
// random part of base·2^i, at most 20 s, where base is 1 s after throttling
// and 50 ms after anything else.
const (
	defaultMaxAttempts = 3
	maxBackoff         = 20 * time.Second
	throttleBase       = time.Second
	transientBase      = 50 * time.Millisecond
)

// backoff is the wait after the failed attempt (from 1) with err.
func backoff(attempt int, err error) time.Duration {
	base := transientBase
	var api *APIError
	if errors.As(err, &api) && (awssigned.Throttling(api.Code) || api.Status == http.StatusTooManyRequests) {
		base = throttleBase
	}
	return time.Duration(rand.Float64() * float64(min(base<<(attempt-1), maxBackoff)))
}

// emptySHA256 is the payload hash of a request without a body.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// request is one S3 call: bucket, key ("" for a bucket call), query and
// headers; body, when set, is sent from its current offset on every attempt.
type request struct {
	method  string
	bucket  string
	key     string
	query   url.Values
	header  http.Header
	body    io.ReadSeeker
	size    int64
	withMD5 bool
}

// do sends r, retrying throttling, 5xx answers and failed connections, and
// returns the response of a 2xx answer (the caller closes its body). Any
// other answer is an *APIError; a request that got no answer is a
// *SendError.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	var body *rewindable
	if r.body != nil {
		start, err := r.body.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		body = &rewindable{r: r.body, start: start}
		if r.withMD5 {
			sum, err := body.md5()
			if err != nil {
				return nil, fmt.Errorf("body: %w", err)
			}
			r.header = cloneOrNew(r.header)
			r.header.Set("Content-MD5", sum)
		}
	}
	for attempt := 1; ; attempt++ {
		resp, err := c.once(ctx, r, body)
		if err == nil || attempt >= c.maxAttempts || !retryable(ctx, err) {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, &SendError{Err: ctx.Err()}
		case <-time.After(backoff(attempt, err)):
		}
	}
}

func (c *Client) once(ctx context.Context, r request, body *rewindable) (*http.Response, error) {
	u, err := c.url(r.bucket, r.key, r.query)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	hash := emptySHA256
	if body != nil {
		b, err := body.attempt()
		if err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
		rd, hash = b, "UNSIGNED-PAYLOAD"
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	req.URL = u
	if body != nil {
		req.ContentLength = r.size
		if r.size == 0 {
			req.Body = http.NoBody
		}
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if c.creds == nil {
		return nil, errors.New("no AWS credentials configured")
	}
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if err := c.signer.SignHTTP(ctx, creds, req, hash, "s3", c.region, time.Now().UTC()); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &SendError{Err: err}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, readAPIError(resp)
}

// url addresses bucket and key: in the path for an override (and for
// bucket names with dots, which a virtual host's certificate does not
// cover), else as bucket.s3.<region>.amazonaws.com.
func (c *Client) url(bucket, key string, query url.Values) (*url.URL, error) {
	base := c.endpoint
	path := "/" + awssigned.Escape(key, "/")
	if c.pathStyle || strings.Contains(bucket, ".") {
		if base == "" {
			base = "https://s3." + c.region + ".amazonaws.com"
		}
		path = "/" + bucket + path
		if key == "" {
			path = "/" + bucket
		}
	} else {
		base = "https://" + bucket + ".s3." + c.region + ".amazonaws.com"
	}
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil {
		return nil, fmt.Errorf("s3 endpoint %q: %w", base, err)
	}
	u.RawPath = strings.TrimRight(u.Path, "/") + path
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery = strings.ReplaceAll(query.Encode(), "+", "%20")
	return u, nil
}

// APIError is an S3 answer other than 2xx: its status and, when the answer
// had an error document (HEAD answers have none), its code.
type APIError = awssigned.APIError

// SendError is a request that got no answer: credentials, the connection,
// the deadline.
type SendError = awssigned.SendError

func readAPIError(resp *http.Response) error {
	e := &APIError{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Amz-Request-Id")}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var doc struct {
		Code      string `xml:"Code"`
		Message   string `xml:"Message"`
		RequestID string `xml:"RequestId"`
	}
	if len(bytes.TrimSpace(data)) > 0 && xml.Unmarshal(data, &doc) == nil {
		e.Code, e.Message = doc.Code, doc.Message
		if doc.RequestID != "" {
			e.RequestID = doc.RequestID
		}
	}
	return e
}

// retryable reports whether another attempt may succeed: a failed
// connection (unless the caller's context ended), throttling, a 5xx or a
// request timeout.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var se *SendError
	if errors.As(err, &se) {
		return !errors.Is(err, context.Canceled)
	}
	var api *APIError
	if errors.As(err, &api) {
		return awssigned.Throttling(api.Code) || api.Code == "RequestTimeout" || api.Code == "RequestTimeoutException" ||
			api.Status == http.StatusTooManyRequests || api.Status >= 500
	}
	return false
}

// rewindable sends a body again on every attempt. The HTTP transport may
// still read a failed attempt's body after Do returned, so each attempt
// gets its own reader, which stops working when the next attempt starts.
type rewindable struct {
	mu    sync.Mutex
	r     io.ReadSeeker
	start int64
	gen   int
}

func (b *rewindable) md5() (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := md5.New()
	if _, err := io.Copy(h, b.r); err != nil {
		return "", err
	}
	if _, err := b.r.Seek(b.start, io.SeekStart); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

func (b *rewindable) attempt() (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gen++
	if _, err := b.r.Seek(b.start, io.SeekStart); err != nil {
		return nil, err
	}
	return &attemptBody{b: b, gen: b.gen}, nil
}

type attemptBody struct {
	b   *rewindable
	gen int
}

var errStaleAttempt = errors.New("s3: body of a finished attempt")

func (a *attemptBody) Read(p []byte) (int, error) {
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	if a.gen != a.b.gen {
		return 0, errStaleAttempt
	}
	return a.b.r.Read(p)
}

func (a *attemptBody) Close() error { return nil }

func cloneOrNew(h http.Header) http.Header {
	if h == nil {
		return http.Header{}
	}
	return h.Clone()
}
