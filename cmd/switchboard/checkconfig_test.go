package main

import (
	"strings"
	"testing"
)

// check-config validates a config for where it will run without reading a
// secret: for aws it refuses inline secret values at their lines, for dev
// it allows them; a mistyped reference fails either way; the repository's
// example passes for dev only.
func TestCheckConfig(t *testing.T) {
	refs := writeConfig(t, `instance:
  name: acme
  toolApiToken: env:SB_CLI_CHECK_UNSET
  approvals: {signingKey: secretsmanager:switchboard/approval-signing-key}
  model: {provider: scripted}
agents:
  - id: hermes
`)
	inline := writeConfig(t, `instance:
  name: acme
  toolApiToken: inline-cli-tool-token
  model: {provider: scripted}
agents:
  - id: hermes
`)
	typo := writeConfig(t, `instance:
  name: acme
  toolApiToken: evn:SWITCHBOARD_TOOL_TOKEN
  model: {provider: scripted}
agents:
  - id: hermes
`)
	const example = "../../switchboard.example.yaml"
	tests := []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{"references for aws", []string{"--config", refs, "--for", "aws"}, "ok for aws", ""},
		{"aws is the default", []string{"--config", refs}, "ok for aws", ""},
		{"inline for dev", []string{"--config", inline, "--for", "dev"}, "ok for dev", ""},
		{"inline for aws", []string{"--config", inline, "--for", "aws"}, "", ":3: instance.toolApiToken: is an inline secret value"},
		{"typo for dev", []string{"--config", typo, "--for", "dev"}, "", `did you mean "env:"?`},
		{"example for dev", []string{"--config", example, "--for", "dev"}, "ok for dev", ""},
		{"example for aws", []string{"--config", example, "--for", "aws"}, "", "instance.approvals.signingKey: is an inline secret value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCLI(t, append([]string{"check-config"}, tt.args...)...)
			if tt.wantErr == "" {
				if err != nil || !strings.Contains(out, tt.wantOut) {
					t.Fatalf("check-config printed %q, err %v; want %q", out, err, tt.wantOut)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("check-config err = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "inline-cli-tool-token") {
				t.Errorf("the error shows the inline secret: %v", err)
			}
		})
	}
	if !strings.Contains(usage, "\n  check-config ") {
		t.Error("usage does not list check-config")
	}
	if _, err := runCLI(t, "check-config", "--config", refs, "--for", "lambda"); !isUsage(err) || !strings.Contains(err.Error(), `"aws" or "dev"`) {
		t.Errorf("--for lambda: err = %v, want a usage error naming aws and dev", err)
	}
}
