// Package awsconfig loads the AWS SDK config that every AWS client of a
// process is built from (DynamoDB, S3, Step Functions, Lambda, Secrets
// Manager), once per cold start.
//
// Endpoints come from the environment alone, handled by the SDK itself:
// AWS_ENDPOINT_URL (and AWS_ENDPOINT_URL_<SERVICE>, read by each service
// client) picks dynalite, LocalStack or the local Step Functions runtime;
// nothing else changes between local runs and AWS. What this package adds:
// short connect timeouts, no instance-metadata probing when DynamoDB is
// local, and placeholder credentials for servers on this machine.
package awsconfig

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
)

// DefaultRegion is used when neither AWS_REGION nor a profile names one
// (local runs against dynalite do not care, but the SDK insists on one).
const DefaultRegion = "us-east-1"

// Connection limits of the HTTP client every AWS client shares. They hold
// for every service (Bedrock included, whose answers take minutes), so they
// bound only connecting; each adapter bounds its own calls (the DynamoDB
// adapter's call limits, per-call deadlines in s3blob and the secrets
// resolver).
const (
	dialTimeout         = 3 * time.Second
	tlsHandshakeTimeout = 5 * time.Second
)

// Load loads the SDK's default config; when DynamoDB is pointed at a
// loopback endpoint it leaves IMDS out (a local endpoint never needs
// instance-role credentials, and probing 169.254.169.254 off EC2 can
// stall). The composition root loads it once and builds every client from
// it. The HTTP client connects within dialTimeout and tlsHandshakeTimeout
// (the SDK's defaults are 30 s and 10 s).
func Load(ctx context.Context, opts ...func(*config.LoadOptions) error) (aws.Config, error) {
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

// IsLoopback reports whether endpoint points at this machine: localhost,
// a name under .localhost, or a loopback IP.
func IsLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
