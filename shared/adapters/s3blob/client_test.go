package s3blob_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"

	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
)

func TestNewClientFromEnvironment(t *testing.T) {
	tests := []struct {
		name          string
		env           map[string]string
		wantEndpoint  string
		wantPathStyle bool
		wantRegion    string
		wantKey       string // "" = not the dummy keys and not checked
	}{
		{
			name:          "AWS_ENDPOINT_URL_S3 on loopback, nothing else",
			env:           map[string]string{"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000"},
			wantEndpoint:  "http://127.0.0.1:9000",
			wantPathStyle: true, wantRegion: s3blob.DefaultLocalRegion, wantKey: "switchboard-local",
		},
		{
			name:          "global AWS_ENDPOINT_URL on localhost",
			env:           map[string]string{"AWS_ENDPOINT_URL": "http://localhost:4566"},
			wantEndpoint:  "http://localhost:4566",
			wantPathStyle: true, wantRegion: s3blob.DefaultLocalRegion, wantKey: "switchboard-local",
		},
		{
			name: "S3-specific wins over global",
			env: map[string]string{
				"AWS_ENDPOINT_URL":    "http://127.0.0.1:1",
				"AWS_ENDPOINT_URL_S3": "http://[::1]:9000",
			},
			wantEndpoint:  "http://[::1]:9000",
			wantPathStyle: true, wantRegion: s3blob.DefaultLocalRegion, wantKey: "switchboard-local",
		},
		{
			name: "configured credentials and region are kept",
			env: map[string]string{
				"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000", "AWS_REGION": "eu-central-1",
				"AWS_ACCESS_KEY_ID": "AKIDREAL", "AWS_SECRET_ACCESS_KEY": "secret",
			},
			wantEndpoint:  "http://127.0.0.1:9000",
			wantPathStyle: true, wantRegion: "eu-central-1", wantKey: "AKIDREAL",
		},
		{
			name:          "remote override: path style, no dummy keys",
			env:           map[string]string{"AWS_ENDPOINT_URL_S3": "http://localstack:4566"},
			wantEndpoint:  "http://localstack:4566",
			wantPathStyle: true, wantRegion: s3blob.DefaultLocalRegion,
		},
		{
			name:       "no override: the SDK's defaults",
			env:        map[string]string{"AWS_REGION": "eu-central-1"},
			wantRegion: "eu-central-1",
		},
		{
			name: "overrides ignored on request",
			env: map[string]string{
				"AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true",
				"AWS_REGION": "eu-central-1",
			},
			wantRegion: "eu-central-1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			localEnv(t, "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			client, err := s3blob.NewClient(context.Background())
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			if got := client.Endpoint(); got != tt.wantEndpoint {
				t.Errorf("endpoint = %q, want %q", got, tt.wantEndpoint)
			}
			if client.PathStyle() != tt.wantPathStyle {
				t.Errorf("path style = %v, want %v", client.PathStyle(), tt.wantPathStyle)
			}
			if client.Region() != tt.wantRegion {
				t.Errorf("region = %q, want %q", client.Region(), tt.wantRegion)
			}
			if tt.wantKey == "" {
				return
			}
			creds, err := client.Credentials().Retrieve(context.Background())
			if err != nil {
				t.Fatalf("credentials: %v", err)
			}
			if creds.AccessKeyID != tt.wantKey {
				t.Errorf("access key = %q, want %q", creds.AccessKeyID, tt.wantKey)
			}
		})
	}
}

// In dev mode a chain that found no keys ends at the EC2 instance role
// (cached, as the SDK's loader wraps it); against a loopback S3 the client
// signs with placeholder keys instead. Keys that were found are kept.
func TestLoopbackEndpointReplacesTheInstanceRoleOnly(t *testing.T) {
	tests := []struct {
		name    string
		creds   aws.CredentialsProvider
		wantKey string
	}{
		{"instance role", aws.NewCredentialsCache(ec2rolecreds.New()), "switchboard-local"},
		{"none", nil, "switchboard-local"},
		{"static keys", credentials.NewStaticCredentialsProvider("mine", "secret", ""), "mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := s3blob.NewClientFromConfig(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:9000"), Credentials: tt.creds})
			got, err := c.Credentials().Retrieve(t.Context())
			if err != nil || got.AccessKeyID != tt.wantKey {
				t.Errorf("credentials %q, %v; want %q", got.AccessKeyID, err, tt.wantKey)
			}
		})
	}
}
