// Package awsprofile loads the AWS SDK's default config chain (environment,
// shared config and credentials files, SSO, instance and container roles)
// for the processes that run on a person's machine: the dev runtime and the
// CLI. Lambda functions build theirs with awsconfig.FromEnvironment and
// never link this package: the chain brings STS and SSO clients with it.
package awsprofile

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig"
)

// Load loads the SDK's default config; when DynamoDB is pointed at a
// loopback endpoint it leaves IMDS out (a local endpoint never needs
// instance-role credentials, and probing 169.254.169.254 off EC2 can
// stall). The composition root loads it once and builds every client from
// it. It shares awsconfig.HTTPClient's short connect timeouts.
func Load(ctx context.Context, opts ...func(*config.LoadOptions) error) (aws.Config, error) {
	opts = append([]func(*config.LoadOptions) error{config.WithHTTPClient(awsconfig.HTTPClient())}, opts...)
	if awsconfig.IsLoopback(os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")) || awsconfig.IsLoopback(os.Getenv("AWS_ENDPOINT_URL")) {
		opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	return cfg, nil
}
