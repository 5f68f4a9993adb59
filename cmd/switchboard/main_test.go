package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/app"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// runCLI runs the CLI as main does and returns what it printed.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, args, &out)
	return out.String(), err
}

// writeConfig writes a config file into a temp dir and returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

func TestVersion(t *testing.T) {
	out, err := runCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if want := "switchboard " + app.Version + " (" + runtime.Version() + ")\n"; out != want {
		t.Errorf("version printed %q, want %q", out, want)
	}
}

func TestHelp(t *testing.T) {
	for _, arg := range []string{"help", "-h", "--help"} {
		t.Run(arg, func(t *testing.T) {
			out, err := runCLI(t, arg)
			if err != nil {
				t.Fatal(err)
			}
			if out != usage {
				t.Errorf("printed %q, want the usage", out)
			}
		})
	}
	for _, verb := range []string{"dev", "run-job", "invoke", "capabilities", "provision-agent", "version"} {
		if !strings.Contains(usage, "\n  "+verb+" ") {
			t.Errorf("usage does not list %s", verb)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the message
	}{
		{"no command", nil, "a command is required"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"version takes no argument", []string{"version", "extra"}, "version takes 0 argument(s), got 1"},
		{"unknown flag", []string{"version", "--verbose"}, "flag provided but not defined: -verbose"},
		{"run-job without a job", []string{"run-job"}, "run-job takes 1 argument(s), got 0"},
		{"run-job with two jobs", []string{"run-job", "heartbeat", "rocketchat-poll"}, "run-job takes 1 argument(s), got 2"},
		{"run-job with two jobs around a flag", []string{"run-job", "heartbeat", "--config", "x.yaml", "rocketchat-poll"}, "got 2"},
		{"flag without its value", []string{"run-job", "heartbeat", "--config"}, "flag needs an argument: -config"},
		{"dev takes no argument", []string{"dev", "now"}, "dev takes 0 argument(s), got 1"},
		{"capabilities takes no argument", []string{"capabilities", "hermes"}, "capabilities takes 0 argument(s), got 1"},
		{"invoke without flags", []string{"invoke"}, "invoke needs --fn and --event"},
		{"invoke without --event", []string{"invoke", "--fn", "tools"}, "invoke needs --fn and --event"},
		{"invoke of an unknown function", []string{"invoke", "--fn", "nope", "--event", "x.json"}, `no function "nope"`},
		{"provision-agent with an argument", []string{"provision-agent", "agent-hermes"}, "provision-agent takes 0 argument(s), got 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCLI(t, tt.args...)
			if !isUsage(err) {
				t.Fatalf("run(%q) = %v (%T), want a usageError", tt.args, err, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if out != "" {
				t.Errorf("printed %q on a usage error", out)
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInvokeMissingEventFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.json")
	_, err := runCLI(t, "invoke", "--fn", "jobs", "--event", missing)
	if err == nil || isUsage(err) || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("err = %v, want a run-time error naming the event file", err)
	}
}

// With the example config, `make invoke` has approvals set up like `make
// dev`: the example's signing key and, for the links, the dev listener's
// address. The sample approval link then reaches the approvals flow (which
// knows no such request) instead of "approvals are not set up".
func TestInvokeWithTheExampleConfigHasApprovals(t *testing.T) {
	localEnv(t)
	t.Setenv(app.EnvPublicBaseURL, "")
	out, err := runCLI(t, "invoke", "--fn", "approvals", "--event", "../../events/approvals/open-link.json", "--config", "../../switchboard.example.yaml")
	if err != nil {
		t.Fatalf("invoke approvals: %v\n%s", err, out)
	}
	if strings.Contains(out, "not set up") || !strings.Contains(out, "Nothing was changed") {
		t.Errorf("the sample approval link found approvals not set up:\n%s", out)
	}
}
