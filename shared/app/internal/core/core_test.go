package core

import (
	"context"
	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// The store keeps agent messages for instance.agentMessageRetentionDays
// days, and forever with 0.
func TestNewSetsAgentMessageRetention(t *testing.T) {
	example, err := os.ReadFile("../../../../switchboard.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1", "AWS_ENDPOINT_URL": "",
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "credentials"),
	} {
		t.Setenv(k, v)
	}
	for _, tc := range []struct {
		days int
		want time.Duration
	}{{0, 0}, {3, 72 * time.Hour}} {
		cfg := strings.Replace(string(example), "agentMessageRetentionDays: 0",
			"agentMessageRetentionDays: "+string(rune('0'+tc.days)), 1)
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := New(context.Background(), func(k string) string {
			if k == deploy.EnvConfig {
				return path
			}
			return ""
		}, awsconfig.FromEnvironment)
		if err != nil {
			t.Fatalf("days %d: New: %v", tc.days, err)
		}
		if got := c.Store.AgentMessageRetention; got != tc.want {
			t.Errorf("days %d: AgentMessageRetention = %v, want %v", tc.days, got, tc.want)
		}
	}
}
