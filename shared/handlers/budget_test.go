package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// answerMargin is what a function needs after the budget to send the
// budget's answer before Lambda's own timeout cuts it off.
const answerMargin = 3 * time.Second

// TestEveryRouteHasABudgetBelowItsFunctionTimeout keeps the route budget
// table and the deploy catalogue in step: each function URL route has its
// own row, and the answer at the end of the budget still goes out before
// the function times out (a Lambda timeout answers 502 with no envelope,
// which Rocket.Chat does not retry).
func TestEveryRouteHasABudgetBelowItsFunctionTimeout(t *testing.T) {
	for _, f := range deploy.Functions {
		for _, r := range f.Routes {
			pattern := r.Method + " " + r.Path
			b, ok := httpapi.Budgets[pattern]
			if !ok {
				t.Errorf("%s (function %s) has no row in httpapi.Budgets", pattern, f.Name)
				continue
			}
			if limit := time.Duration(f.TimeoutSeconds)*time.Second - answerMargin; b.Limit > limit {
				t.Errorf("%s: budget %v, but function %s times out after %d s; keep the budget under %v",
					pattern, b.Limit, f.Name, f.TimeoutSeconds, limit)
			}
		}
	}
}

// The function URL handlers run under the same budgets as the dev
// listener: with DynamoDB hanging, the Rocket.Chat webhook function answers
// 503 (which Rocket.Chat retries) within its budget instead of running into
// the Lambda timeout.
func TestRocketChatWebhookFunctionAnswers503WhenDynamoDBHangs(t *testing.T) {
	// The sample event mentions agent-hermes with the example's token.
	config := filepath.Join(t.TempDir(), "hook.yaml")
	if err := os.WriteFile(config, []byte(`instance:
  name: hook
  model: {provider: scripted}
  rocketchat: {baseUrl: "http://127.0.0.1:1", webhookTokens: [dev-webhook-token]}
  dev: {scheduler: false}
agents:
  - id: hermes
    systemPrompt: You are Hermes.
    tools:
      RocketChat: {userId: u-hermes, authToken: t, username: agent-hermes}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	proxy := dynamotest.NewFaultProxy(t, dynamotest.Endpoint(t))
	a := newAppOn(t, config, proxy.URL)
	raw, err := os.ReadFile(filepath.Join(eventsDir, "rocketchat-webhook", "message.json"))
	if err != nil {
		t.Fatal(err)
	}
	proxy.Hang(true)
	start := time.Now()
	resp, err := invoke(t, a, "rocketchat-webhook", raw)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	s := parseStreamed(t, resp)
	budget := httpapi.BudgetFor("POST /hooks/rocketchat").Limit
	if s.StatusCode != 503 || !strings.Contains(string(s.Body), "Rocket.Chat will retry") {
		t.Errorf("answer = %d %s, want 503 saying Rocket.Chat will retry", s.StatusCode, s.Body)
	}
	if elapsed > budget+time.Second {
		t.Errorf("answered after %v, budget %v", elapsed, budget)
	}
	if proxy.Stats().Hung == 0 {
		t.Error("no DynamoDB request reached the hung proxy; the test proves nothing")
	}
}
