package s3blob

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig"
)

// Dummy credentials for a loopback S3 server: in-process gofakes3 and a local
// LocalStack accept any signature, but the SDK refuses to sign without keys.
const (
	dummyAccessKey = "switchboard-local"
	dummySecretKey = "switchboard-local-secret"
	// DefaultLocalRegion is used when an endpoint override is set and no
	// region is configured: the SDK needs one to sign, the emulators ignore it.
	DefaultLocalRegion = "us-east-1"
)

// NewClient builds the AWS config from the environment (awsconfig.FromEnvironment) and the S3 client
// from it; a process that builds other AWS clients loads the config once and
// calls NewClientFromConfig.
//
// The endpoint comes from the SDK's own conventions and nothing else, so no
// handler needs an "if local" branch. In aws-sdk-go-v2, config v1.33.18 reads
// AWS_ENDPOINT_URL into aws.Config.BaseEndpoint (env_config.go:
// awsEndpointURLEnv, resolve.go: resolveBaseEndpoint), and s3 v1.114.10's
// NewFromConfig prefers AWS_ENDPOINT_URL_S3 (or a services section in the
// shared config file) over it through EnvConfig.GetServiceBaseEndpoint
// (endpoints.go: resolveBaseEndpoint);
// AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true turns both off. The option below
// runs after that resolution, so o.BaseEndpoint is exactly the override the
// SDK will use.
//
// With an override set, NewClient switches to path-style addressing
// (gofakes3 and LocalStack do not serve bucket.host names) and fills in
// DefaultLocalRegion when no region is configured. When the override is a
// loopback address and no credentials are configured (the SDK's chain fell
// through to the EC2 instance role, which does not exist on a laptop), it
// uses dummy static keys instead of waiting for the instance-metadata
// service to time out.
func NewClient(ctx context.Context) (*s3.Client, error) {
	cfg, err := awsconfig.FromEnvironment(ctx)
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	return NewClientFromConfig(cfg), nil
}

// NewClientFromConfig builds the S3 client from an already loaded config
// (the composition root loads it once per cold start).
func NewClientFromConfig(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, quietChecksums, localOverrides, attemptTimeout)
}

// responseHeaderTimeout bounds one attempt from the end of the request
// body to the response headers (S3 answers a PUT after the whole body is
// in); a silent server is retried on a fresh connection instead of waited
// for until the call's deadline. The body of a GetObject is bounded by the
// call's deadline (transferTimeout).
const responseHeaderTimeout = 15 * time.Second

func attemptTimeout(o *s3.Options) {
	if bc, ok := o.HTTPClient.(*awshttp.BuildableClient); ok {
		o.HTTPClient = bc.WithTransportOptions(func(t *http.Transport) { t.ResponseHeaderTimeout = responseHeaderTimeout })
	}
}

// quietChecksums stops the SDK from logging "Response has no supported
// checksum" on every GetObject whose object carries none (emulators, and
// multipart objects in AWS). Validation still runs when a checksum is there.
func quietChecksums(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true }

// localOverrides adjusts a client whose endpoint was overridden.
func localOverrides(o *s3.Options) {
	if o.BaseEndpoint == nil || *o.BaseEndpoint == "" {
		return
	}
	o.UsePathStyle = true
	if o.Region == "" {
		o.Region = DefaultLocalRegion
	}
	if awsconfig.IsLoopback(*o.BaseEndpoint) && noCredentialsConfigured(o.Credentials) {
		o.Credentials = credentials.NewStaticCredentialsProvider(dummyAccessKey, dummySecretKey, "")
	}
}

// noCredentialsConfigured reports whether the default chain found nothing
// and fell back to the EC2 instance role (config's resolveCredsFromProfile,
// default case).
func noCredentialsConfigured(p aws.CredentialsProvider) bool {
	if p == nil {
		return true
	}
	return aws.IsCredentialsProvider(p, (*ec2rolecreds.Provider)(nil))
}
