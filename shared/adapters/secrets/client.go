package secrets

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"
)

// NewClient builds the Secrets Manager client from the loaded AWS config;
// AWS_ENDPOINT_URL_SECRETS_MANAGER or AWS_ENDPOINT_URL points it at
// LocalStack.
func NewClient(cfg aws.Config) *secretsmanager.Client { return secretsmanager.NewFromConfig(cfg) }

// apiCode is the error code of a Secrets Manager API error, "" for any
// other error.
func apiCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}
