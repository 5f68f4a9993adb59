package dynamo

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
)

// NewClientFromConfig builds the DynamoDB client (ddb, signed calls
// without the SDK's client) from the config awsconfig.FromEnvironment (or
// awsprofile.Load) gave, once per cold start. AWS_ENDPOINT_URL_DYNAMODB,
// else AWS_ENDPOINT_URL picks dynalite or LocalStack
// (TestNewClientEndpointFromEnv).
//
// Two conveniences for local runs: without a configured region it uses
// awsconfig.DefaultRegion, and when the endpoint is a loopback address and
// no credentials can be found it uses static dummy credentials (dynalite
// ignores them). Then the call limits of deadline.go: every call ends
// within OperationTimeout (or the caller's deadline), each attempt within
// AttemptTimeout, throttling is retried with short waits.
func NewClientFromConfig(ctx context.Context, cfg aws.Config) *ddb.Client {
	cfg = awsconfig.LocalCredentials(ctx, cfg, endpointOf(cfg))
	if cfg.Region == "" {
		cfg.Region = awsconfig.DefaultRegion
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = awsconfig.HTTPClient() // whose attempts the call limits bound
	}
	c := ddb.NewFromConfig(cfg)
	withCallLimits(c)
	return c
}

// endpointOf is the endpoint the DynamoDB client will use, "" for AWS itself.
func endpointOf(cfg aws.Config) string {
	if v := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"); v != "" {
		return v
	}
	return aws.ToString(cfg.BaseEndpoint)
}
