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
