// Package awsconfig builds the AWS SDK config that every AWS client of a
// Lambda function is built from (DynamoDB, S3, Step Functions, Lambda,
// Secrets Manager), once per cold start, from the function's environment
// (FromEnvironment); its subpackage awsprofile loads the SDK's full default
// chain (profiles, SSO, instance roles) for the dev runtime and the CLI.
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
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
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

// FromEnvironment builds the config of a Lambda function from its
// environment alone, as the Lambda runtime sets it: the region
// (AWS_REGION, else AWS_DEFAULT_REGION, else DefaultRegion), the function
// role's credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN; none: LocalCredentials may add placeholders for a
// server on this machine) and the endpoints (AWS_ENDPOINT_URL and
// AWS_ENDPOINT_URL_<SERVICE>, as LocalStack sets them, unless
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS is true). It never reads a
// profile, SSO or an instance role: the SDK's config loader that does
// (awsprofile.Load) links STS, SSO and their credential chain, about
// 0.45 MB of every function's zip. The dev runtime and the CLI use that
// loader; the functions use this one.
func FromEnvironment(_ context.Context) (aws.Config, error) {
	cfg := aws.Config{Region: DefaultRegion, HTTPClient: HTTPClient()}
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION"} {
		if v := os.Getenv(k); v != "" {
			cfg.Region = v
			break
		}
	}
	if id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"); id != "" && secret != "" {
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN")))
	}
	if strings.EqualFold(os.Getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"), "true") {
		return cfg, nil // as the SDK's loader: the endpoints set above are ignored
	}
	cfg.ConfigSources = []any{serviceEndpoints{}}
	if ep := os.Getenv("AWS_ENDPOINT_URL"); ep != "" {
		cfg.BaseEndpoint = aws.String(ep)
	}
	return cfg, nil
}

// serviceEndpoints answers each service client's question for its own
// endpoint, AWS_ENDPOINT_URL_<SERVICE> (the SDK id upper-cased, spaces as
// underscores: DYNAMODB, S3, SFN, LAMBDA, SECRETS_MANAGER), as the SDK's
// config loader does.
type serviceEndpoints struct{}

func (serviceEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	v := os.Getenv("AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_"))
	return v, v != "", nil
}

// HTTPClient is the HTTP client every AWS client shares: it connects
// within dialTimeout and tlsHandshakeTimeout (the SDK's defaults are 30 s
// and 10 s).
func HTTPClient() aws.HTTPClient {
	return awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = dialTimeout }).
		WithTransportOptions(func(t *http.Transport) { t.TLSHandshakeTimeout = tlsHandshakeTimeout })
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
