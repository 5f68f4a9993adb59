package dynamo

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig"
)

// NewClientFromConfig builds the DynamoDB client from the config
// awsconfig.FromEnvironment (or awsprofile.Load) gave, once per cold start.
//
// Endpoints come from the environment alone, handled by the SDK itself:
// config v1.33.18 reads AWS_ENDPOINT_URL into aws.Config.BaseEndpoint
// (config/env_config.go:417, applied in config/resolve.go resolveBaseEndpoint),
// and service/dynamodb v1.74.0 lets AWS_ENDPOINT_URL_DYNAMODB override it
// (service/dynamodb/endpoints.go resolveBaseEndpoint via
// EnvConfig.GetServiceBaseEndpoint). TestNewClientEndpointFromEnv pins both.
//
// Two conveniences for local runs: without a configured region it uses
// awsconfig.DefaultRegion, and when the endpoint is a loopback address and
// no credentials can be found it uses static dummy credentials (dynalite
// ignores them). Then the call limits of deadline.go: every call ends
// within OperationTimeout (or the caller's deadline), each attempt within
// AttemptTimeout, throttling is retried with short waits.
func NewClientFromConfig(ctx context.Context, cfg aws.Config) *dynamodb.Client {
	cfg = awsconfig.LocalCredentials(ctx, cfg, endpointOf(cfg))
	if cfg.Region == "" {
		cfg.Region = awsconfig.DefaultRegion
	}
	return dynamodb.NewFromConfig(cfg, withCallLimits)
}

// endpointOf is the endpoint the DynamoDB client will use, "" for AWS itself.
func endpointOf(cfg aws.Config) string {
	if v := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"); v != "" {
		return v
	}
	return aws.ToString(cfg.BaseEndpoint)
}
