package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
)

// The daily budget lives in an unexported function of shared/app
// (overBudget); it is tested here through the public surface that reaches
// it: `switchboard invoke --fn agent-worker`, the production decode path of
// the worker Lambda, on dynalite, with the router's Telegram channel on a
// fake Bot API.

const budgetChat = int64(4242)

type budgetWorld struct {
	store *dynamo.Store
	tg    *tgfake.Server
	cfg   string
	event func(agent string) string
}

func newBudgetWorld(t *testing.T) *budgetWorld {
	t.Helper()
	w := &budgetWorld{store: localEnv(t), tg: tgfake.New()}
	t.Cleanup(w.tg.Close)
	w.tg.AddUser(tgfake.User{ID: budgetChat, FirstName: "Richard"})
	// The scripted model counts bytes/4 as tokens; at 10,000 USD per million
	// tokens one run costs dollars, far over hermes' 0.01.
	w.cfg = writeConfig(t, fmt.Sprintf(`instance:
  name: budgettest
  model: {provider: scripted, inputPer1M: 10000, outputPer1M: 10000}
  channels: [Telegram]
  telegram:
    apiBaseUrl: %s
    botToken: %s
    chatId: "%d"
agents:
  - id: hermes
    name: Hermes
    dailyBudgetUsd: 0.01
    tools:
      Workspace: {}
  - id: atlas
    tools:
      Workspace: {}
`, w.tg.URL, tgfake.DefaultToken, budgetChat))
	dir := t.TempDir()
	w.event = func(agent string) string {
		p := filepath.Join(dir, agent+".json")
		// No replyTo: the answer goes nowhere, which keeps Rocket.Chat out.
		body := fmt.Sprintf(`{"agentId": %q, "source": "cli-test", "text": "How are the Q3 numbers?"}`, agent)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return w
}

func (w *budgetWorld) wake(t *testing.T, agent string) {
	t.Helper()
	out, err := runCLI(t, "invoke", "--fn", "agent-worker", "--event", w.event(agent), "--config", w.cfg)
	if err != nil {
		t.Fatalf("invoke agent-worker for %s: %v\n%s", agent, err, out)
	}
}

func (w *budgetWorld) spent(t *testing.T, agent string) float64 {
	t.Helper()
	usd, err := w.store.AgentCostSince(context.Background(), agent, time.Now().UTC().Truncate(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return usd
}

func (w *budgetWorld) texts() []string {
	var out []string
	for _, m := range w.tg.Messages(budgetChat) {
		out = append(out, m.Text)
	}
	return out
}

var budgetNotice = regexp.MustCompile(`^Switchboard: Hermes reached its daily budget of \$0\.01 \(\$(\d+\.\d\d) spent today\) and takes no new requests until 00:00 UTC\.$`)

func TestBudgetStopsTheAgentAndTellsTheHumanOnce(t *testing.T) {
	w := newBudgetWorld(t)

	// Under budget: the run happens and costs.
	w.wake(t, "hermes")
	spent := w.spent(t, "hermes")
	if spent < 0.01 {
		t.Fatalf("hermes spent %.4f USD after one run; the test needs a run over 0.01", spent)
	}
	if got := w.texts(); len(got) != 0 {
		t.Fatalf("Telegram got %q while under budget", got)
	}

	// Over budget: no run, one notice.
	w.wake(t, "hermes")
	if got := w.spent(t, "hermes"); got != spent {
		t.Errorf("spent %.4f → %.4f: the agent ran although over budget", spent, got)
	}
	got := w.texts()
	if len(got) != 1 {
		t.Fatalf("Telegram got %q, want one budget notice", got)
	}
	m := budgetNotice.FindStringSubmatch(got[0])
	if m == nil {
		t.Fatalf("notice %q does not match %s", got[0], budgetNotice)
	}
	if want := fmt.Sprintf("%.2f", spent); m[1] != want {
		t.Errorf("notice says $%s spent, want $%s", m[1], want)
	}

	// Still over budget: still no run, and no second notice.
	w.wake(t, "hermes")
	w.wake(t, "hermes")
	if got := w.spent(t, "hermes"); got != spent {
		t.Errorf("spent %.4f → %.4f after more wakes", spent, got)
	}
	if got := w.texts(); len(got) != 1 {
		t.Errorf("Telegram got %q, want still the one notice", got)
	}

	// An agent without a budget is not affected.
	w.wake(t, "atlas")
	w.wake(t, "atlas")
	if a := w.spent(t, "atlas"); a <= 0 {
		t.Errorf("atlas spent %.4f; its runs should have happened", a)
	}
	if got := w.texts(); len(got) != 1 {
		t.Errorf("Telegram got %q; atlas has no budget to exceed", got)
	}
}
