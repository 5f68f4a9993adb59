package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// coldConfig enables every tool and a real model provider, so that a
// function that builds clients, tool schemas or models at start pays for
// them here. Every URL is a closed loopback port: nothing may be called
// before the first invocation.
const coldConfig = `instance:
  name: coldstart
  toolApiToken: cold-tool-token
  channels: [RocketChat, Telegram]
  human: {rocketchatUsername: richard}
  model: {provider: openai, baseUrl: "http://127.0.0.1:9/v1", model: gpt-4o, apiKey: cold-model-key-0001}
  rocketchat:
    baseUrl: http://127.0.0.1:9
    webhookTokens: [cold-webhook-token]
  telegram:
    apiBaseUrl: http://127.0.0.1:9
    botToken: "123456:cold-bot-token"
    chatId: "42"
    allowedChatIds: ["42"]
    webhookSecret: cold-tg-secret
  approvals: {signingKey: cold-approval-signing-key-0001, ttlHours: 24, approverTelegramIds: ["7"]}
  publicBaseUrl: http://127.0.0.1:9
  staging: {Workspace.delete: approve}
  console: {password: cold-console-password-0001}
  askAgent: {timeoutSeconds: 60, maxSteps: 5}
  taskboard: {watchdogHours: 24}
  agentMessageRetentionDays: 90
  mcp:
    clients:
      - {name: laptop, agent: hermes, token: cold-mcp-laptop-token-01}
      - {name: ide, agent: atlas, token: cold-mcp-ide-token-0001}
agents:
  - id: hermes
    name: Hermes
    systemPrompt: You are Hermes.
    dailyBudgetUsd: 5
    tools:
      Workspace: {}
      RocketChat:
        baseUrl: http://127.0.0.1:9
        userId: hermes-id
        authToken: hermes-token
        username: agent-hermes
        allowedRooms: [finanz-team]
      Nextcloud:
        baseUrl: http://127.0.0.1:9
        username: switchboard
        appPassword: cold-nc-pass-0001
        rootPath: /Switchboard/Hermes
        collaboraUrl: http://127.0.0.1:9
      ask_agent: {}
      Taskboard: {}
      AgentCommAnalysis: {}
  - id: atlas
    name: Atlas
    systemPrompt: You are Atlas.
    tools:
      Workspace: {}
      RocketChat:
        baseUrl: http://127.0.0.1:9
        userId: atlas-id
        authToken: atlas-token
        username: agent-atlas
      ask_agent: {agents: [hermes]}
      Taskboard: {}
`

// coldFunctions are every function of the catalogue, measured against
// coldRef; the receivers have the tighter budget (they answer a webhook
// within seconds).
var coldFunctions = func() []string {
	var names []string
	for _, f := range deploy.Functions {
		names = append(names, f.Name)
	}
	return names
}()

const coldRef = "reference"

// BenchmarkColdStart measures every function binary from exec to "ready":
// the moment it asks the Lambda Runtime API for its first invocation
// (config loaded, secrets resolved, AWS clients and services built). Beside
// them, in the same run and interleaved so that a busy machine slows all
// alike, it measures a reference Lambda (testdata/coldref: aws-lambda-go,
// the AWS config and a DynamoDB client) and reports each function's p50
// and p90 and its p50 as a multiple of the reference's. Every binary is
// built as for Lambda (-tags deploy.BuildTags -trimpath -ldflags "-s -w") for
// the host architecture, and runs against a fake Runtime API on loopback.
// Rounds: at least 40 (COLDSTART_RUNS to change).
func BenchmarkColdStart(b *testing.B) {
	dir := b.TempDir()
	bins := map[string]string{}
	for _, fn := range append([]string{coldRef}, coldFunctions...) {
		src := "../functions/" + fn
		if fn == coldRef {
			src = "./testdata/coldref"
		}
		bins[fn] = filepath.Join(dir, fn)
		build := exec.Command("go", "build", "-tags", deploy.BuildTags, "-trimpath", "-ldflags", "-s -w", "-o", bins[fn], src)
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("build %s: %v\n%s", fn, err, out)
		}
	}
	// COLDSTART_BEFORE names a folder of binaries built the same way from
	// an earlier commit (one per function, named after it): each runs in
	// the same rounds as "<name> (before)", for a before/after comparison
	// on the same busy machine.
	var before []string
	if d := os.Getenv("COLDSTART_BEFORE"); d != "" {
		for _, fn := range coldFunctions {
			if _, err := os.Stat(filepath.Join(d, fn)); err == nil {
				before = append(before, fn+" (before)")
				bins[fn+" (before)"] = filepath.Join(d, fn)
			}
		}
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(coldConfig), 0o600); err != nil {
		b.Fatal(err)
	}
	ready := make(chan time.Time, 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/invocation/next") {
			select {
			case ready <- time.Now():
			default:
			}
			<-r.Context().Done() // hold the long poll until the process is killed
		}
	}))
	defer api.Close()
	// Lambda sets no AWS_CA_BUNDLE; a machine that does would make every
	// config load parse the whole bundle.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "SWITCHBOARD_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(api.URL, "http://"),
		"AWS_ENDPOINT_URL=http://127.0.0.1:9",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
		"SWITCHBOARD_CONFIG="+config, "SWITCHBOARD_BUCKET=bench",
		"SWITCHBOARD_WAKE_QUEUE_URL=http://127.0.0.1:9/000000000000/switchboard-wakes.fifo")

	start := func(name string) time.Duration {
		cmd := exec.Command(bins[name])
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case at := <-ready:
			_ = cmd.Process.Kill()
			<-exited
			return at.Sub(t0)
		case err := <-exited:
			b.Fatalf("%s exited before asking for an invocation: %v\n%s", name, err, stderr.String())
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			b.Fatalf("%s: no call to the Runtime API within 10 s\n%s", name, stderr.String())
		}
		return 0
	}

	rounds := 40
	if s := os.Getenv("COLDSTART_RUNS"); s != "" {
		fmt.Sscan(s, &rounds)
	}
	rounds = max(rounds, b.N)
	names := append(append([]string{coldRef}, coldFunctions...), before...)
	got := map[string][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < rounds; i++ {
		for _, name := range names {
			got[name] = append(got[name], start(name))
		}
	}
	b.StopTimer()
	pct := func(d []time.Duration, p int) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[(len(s)-1)*p/100].Microseconds()) / 1000
	}
	ref := pct(got[coldRef], 50)
	b.Logf("%-20s %8s %8s %6s  (%d runs each, interleaved)", "binary", "p50 ms", "p90 ms", "×ref", rounds)
	for _, name := range names {
		p50, p90 := pct(got[name], 50), pct(got[name], 90)
		b.Logf("%-20s %8.1f %8.1f %6.2f", name, p50, p90, p50/ref)
		metric := strings.ReplaceAll(name, " (before)", "-before")
		b.ReportMetric(p50, metric+"-p50-ms")
		b.ReportMetric(p90, metric+"-p90-ms")
		if name != coldRef {
			b.ReportMetric(p50/ref, metric+"-x-ref")
		}
	}
}
