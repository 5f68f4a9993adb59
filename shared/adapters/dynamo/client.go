package dynamo

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// defaultRegion is used when neither AWS_REGION nor a profile names one
// (local runs against dynalite do not care, but the SDK insists on one).
const defaultRegion = "us-east-1"

// NewClient builds the DynamoDB client from the environment, once per cold start.
//
// Endpoints come from the environment alone, handled by the SDK itself:
// config v1.33.18 reads AWS_ENDPOINT_URL into aws.Config.BaseEndpoint
// (config/env_config.go:417, applied in config/resolve.go resolveBaseEndpoint),
// and service/dynamodb v1.74.0 lets AWS_ENDPOINT_URL_DYNAMODB override it
// (service/dynamodb/endpoints.go resolveBaseEndpoint via
// EnvConfig.GetServiceBaseEndpoint). TestNewClientEndpointFromEnv pins both.
//
// Two conveniences for local runs: without a configured region it uses
// us-east-1, and when the endpoint is a loopback address and no credentials
// can be found it uses static dummy credentials (dynalite ignores them).
func NewClient(ctx context.Context) (*dynamodb.Client, error) {
	cfg, err := LoadAWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	return NewClientFromConfig(ctx, cfg), nil
}

// Connection limits of the HTTP client every AWS client shares. They hold
// for every service (Bedrock included, whose answers take minutes), so they
// bound only connecting; each adapter bounds its own calls (withCallLimits
// here, per-call deadlines in s3blob and the secrets resolver).
const (
	dialTimeout         = 3 * time.Second
	tlsHandshakeTimeout = 5 * time.Second
)

// LoadAWSConfig loads the SDK's default config once; when DynamoDB is
// pointed at a loopback endpoint it leaves IMDS out (a local endpoint never
// needs instance-role credentials, and probing 169.254.169.254 off EC2 can
// stall). The composition root loads it once and builds every client from it.
// The HTTP client connects within dialTimeout and tlsHandshakeTimeout (the
// SDK's defaults are 30 s and 10 s).
func LoadAWSConfig(ctx context.Context, opts ...func(*config.LoadOptions) error) (aws.Config, error) {
	hc := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = dialTimeout }).
		WithTransportOptions(func(t *http.Transport) { t.TLSHandshakeTimeout = tlsHandshakeTimeout })
	opts = append([]func(*config.LoadOptions) error{config.WithHTTPClient(hc)}, opts...)
	if IsLoopback(os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")) || IsLoopback(os.Getenv("AWS_ENDPOINT_URL")) {
		opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	return cfg, nil
}

// NewClientFromConfig builds the DynamoDB client from a loaded config, with
// the local conveniences of NewClient and the call limits of deadline.go:
// every call ends within OperationTimeout (or the caller's deadline), each
// attempt within AttemptTimeout, throttling is retried with short waits.
func NewClientFromConfig(ctx context.Context, cfg aws.Config) *dynamodb.Client {
	cfg = LocalCredentials(ctx, cfg, endpointOf(cfg))
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	return dynamodb.NewFromConfig(cfg, withCallLimits)
}

// LocalCredentials gives cfg static placeholder credentials when endpoint
// is on this machine (dynalite, the local Step Functions runtime) and the
// default chain yields none: a local server checks no signature, but the
// SDK will not send an unsigned request. Anywhere else cfg is unchanged.
func LocalCredentials(ctx context.Context, cfg aws.Config, endpoint string) aws.Config {
	if IsLoopback(endpoint) && !hasCredentials(ctx, cfg) {
		cfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
	}
	return cfg
}

// hasCredentials reports whether the configured chain yields credentials.
func hasCredentials(ctx context.Context, cfg aws.Config) bool {
	if cfg.Credentials == nil {
		return false
	}
	_, err := cfg.Credentials.Retrieve(ctx)
	return err == nil
}

// endpointOf is the endpoint the DynamoDB client will use, "" for AWS itself.
func endpointOf(cfg aws.Config) string {
	if v := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"); v != "" {
		return v
	}
	return aws.ToString(cfg.BaseEndpoint)
}

// IsLoopback reports whether endpoint points at this machine.
func IsLoopback(endpoint string) bool {
	if endpoint == "" {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
