package awsconfig_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig"
)

func TestIsLoopback(t *testing.T) {
	tests := []struct {
		endpoint string
		want     bool
	}{
		{"http://127.0.0.1:8000", true},
		{"http://localhost:4566", true},
		{"http://LOCALHOST:4566", true},
		{"http://s3.localhost:4566", true},
		{"http://[::1]:8000", true},
		{"https://dynamodb.eu-central-1.amazonaws.com", false},
		{"http://10.0.0.5:8000", false},
		{"http://localhost.example.org", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := awsconfig.IsLoopback(tt.endpoint); got != tt.want {
			t.Errorf("IsLoopback(%q) = %v, want %v", tt.endpoint, got, tt.want)
		}
	}
}

func TestLocalCredentials(t *testing.T) {
	ctx := context.Background()
	own := credentials.NewStaticCredentialsProvider("AKIDOWN", "own-secret", "")
	tests := []struct {
		name     string
		creds    aws.CredentialsProvider
		endpoint string
		wantKey  string // "" = no credentials
	}{
		{"local without credentials", nil, "http://127.0.0.1:8000", "local"},
		{"local keeps configured ones", own, "http://127.0.0.1:8000", "AKIDOWN"},
		{"AWS without credentials", nil, "", ""},
		{"remote endpoint", nil, "https://states.eu-central-1.amazonaws.com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := awsconfig.LocalCredentials(ctx, aws.Config{Credentials: tt.creds}, tt.endpoint)
			var got string
			if cfg.Credentials != nil {
				v, err := cfg.Credentials.Retrieve(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got = v.AccessKeyID
			}
			if got != tt.wantKey {
				t.Errorf("access key %q, want %q", got, tt.wantKey)
			}
		})
	}
}

// A Lambda function's config comes from its environment alone.
func TestFromEnvironment(t *testing.T) {
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SECRETS_MANAGER", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"} {
		t.Setenv(k, "")
	}
	cfg, err := awsconfig.FromEnvironment(t.Context())
	if err != nil || cfg.Region != awsconfig.DefaultRegion || cfg.Credentials != nil || cfg.BaseEndpoint != nil {
		t.Fatalf("empty environment: region %q, credentials %v, endpoint %v, err %v; want the default region and nothing else",
			cfg.Region, cfg.Credentials, cfg.BaseEndpoint, err)
	}

	t.Setenv("AWS_DEFAULT_REGION", "eu-west-1")
	t.Setenv("AWS_REGION", "eu-central-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "session")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", "http://127.0.0.1:4567")
	cfg, err = awsconfig.FromEnvironment(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "eu-central-1" {
		t.Errorf("region %q, want AWS_REGION before AWS_DEFAULT_REGION", cfg.Region)
	}
	creds, err := cfg.Credentials.Retrieve(t.Context())
	if err != nil || creds.AccessKeyID != "AKIDEXAMPLE" || creds.SecretAccessKey != "secret" || creds.SessionToken != "session" {
		t.Errorf("credentials %+v (%v), want the function role's from the environment", creds, err)
	}
	if aws.ToString(cfg.BaseEndpoint) != "http://127.0.0.1:4566" {
		t.Errorf("endpoint %q, want AWS_ENDPOINT_URL", aws.ToString(cfg.BaseEndpoint))
	}
	type serviceEndpoint interface {
		GetServiceBaseEndpoint(context.Context, string) (string, bool, error)
	}
	var got string
	for _, src := range cfg.ConfigSources {
		if p, ok := src.(serviceEndpoint); ok {
			got, _, _ = p.GetServiceBaseEndpoint(t.Context(), "Secrets Manager")
		}
	}
	if got != "http://127.0.0.1:4567" {
		t.Errorf("Secrets Manager's endpoint %q, want AWS_ENDPOINT_URL_SECRETS_MANAGER", got)
	}

	t.Setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")
	if cfg, _ = awsconfig.FromEnvironment(t.Context()); cfg.BaseEndpoint != nil || len(cfg.ConfigSources) != 0 {
		t.Errorf("with AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: endpoint %v, sources %v; want none", cfg.BaseEndpoint, cfg.ConfigSources)
	}
}
