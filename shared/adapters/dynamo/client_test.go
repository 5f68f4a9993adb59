package dynamo_test

import (
	"context"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig/awsprofile"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
)

// TestNewClientEndpointFromEnv pins what NewClientFromConfig's comment claims
// about the SDK: AWS_ENDPOINT_URL is honoured, AWS_ENDPOINT_URL_DYNAMODB wins
// over it, and a loopback endpoint works without a region or credentials.
func TestNewClientEndpointFromEnv(t *testing.T) {
	endpoint := dynamotest.Endpoint(t)
	tests := []struct {
		name string
		env  map[string]string
	}{
		{"AWS_ENDPOINT_URL", map[string]string{"AWS_ENDPOINT_URL": endpoint}},
		{"AWS_ENDPOINT_URL_DYNAMODB wins", map[string]string{
			"AWS_ENDPOINT_URL":          "http://127.0.0.1:1", // nothing listens there
			"AWS_ENDPOINT_URL_DYNAMODB": endpoint,
		}},
	}
	loaders := map[string]func(context.Context) (aws.Config, error){
		"FromEnvironment": awsconfig.FromEnvironment, // a Lambda function's
		"awsprofile.Load": func(ctx context.Context) (aws.Config, error) { return awsprofile.Load(ctx) },
	}
	for _, tt := range tests {
		for loader, load := range loaders {
			t.Run(tt.name+"/"+loader, func(t *testing.T) {
				isolateAWSEnv(t)
				for k, v := range tt.env {
					t.Setenv(k, v)
				}
				cfg, err := load(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				c := dynamo.NewClientFromConfig(t.Context(), cfg)
				if got := c.Signer.Region; got != "us-east-1" {
					t.Errorf("region %q, want the us-east-1 default", got)
				}
				if _, err := c.ListTables(t.Context()); err != nil {
					t.Fatalf("ListTables through %v: %v", tt.env, err)
				}
			})
		}
	}
}

// isolateAWSEnv hides the developer's AWS settings for the test's duration.
func isolateAWSEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
		"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"} {
		t.Setenv(k, "") // restores the old value afterwards
		os.Unsetenv(k)
	}
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
}
