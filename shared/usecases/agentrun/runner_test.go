package agentrun_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

type gate struct {
	over bool
	err  error
}

func (g gate) Over(context.Context, string) (bool, error) { return g.over, g.err }

type admit struct {
	refused bool
	err     error
}

func (a admit) Admits(context.Context, sb.WakeJob) (bool, error) {
	return !a.refused && a.err == nil, a.err
}

type noProviders struct{}

func (noProviders) Model(m swcfg.Model) (sb.Model, error) {
	return nil, sb.E("test.model", sb.EINVALID, "unknown model provider "+m.Provider)
}

func newRunner(g gate, a admit) *agentrun.Runner {
	cfg := &swcfg.Config{
		Instance: swcfg.Instance{Model: swcfg.Model{Provider: swcfg.ProviderScripted, Reply: "hi from {{agent}}"}},
		Agents:   []swcfg.Agent{{ID: "hermes", Name: "Hermes", SystemPrompt: "You help."}},
	}
	return &agentrun.Runner{Engine: &agentrun.Engine{Tools: &recInvoker{}, Receipts: memstore.New()}, Budget: g, Tasks: a,
		Agents: &agentrun.Agents{Config: cfg, Providers: noProviders{}}}
}

func TestRunnerRunJob(t *testing.T) {
	job := sb.WakeJob{AgentID: "hermes", Text: "hello", Claim: &sb.WakeJobClaim{Keys: []string{"rc#hermes#m1"}}}
	tests := []struct {
		name        string
		gate        gate
		admit       admit
		job         sb.WakeJob
		wantOutcome string
		wantErr     string // sb error code; "" none
	}{
		{name: "runs", job: job, wantOutcome: "answered"},
		{name: "over budget", gate: gate{over: true}, job: job, wantOutcome: agentrun.OutcomeBudget},
		{name: "budget unknown", gate: gate{err: sb.E("test", sb.EUNAVAILABLE, "store down")}, job: job, wantOutcome: agentrun.OutcomeBudget, wantErr: sb.EUNAVAILABLE},
		{name: "task refused", admit: admit{refused: true}, job: job, wantOutcome: agentrun.OutcomeTaskRefused},
		{name: "task check failed", admit: admit{err: sb.E("t", sb.EUNAVAILABLE, "store down")}, job: job, wantErr: sb.EUNAVAILABLE},
		{name: "unknown agent", job: sb.WakeJob{AgentID: "nobody"}, wantErr: sb.ENOTFOUND},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := newRunner(tt.gate, tt.admit).RunJob(context.Background(), tt.job)
			if got := sb.ErrorCode(err); (tt.wantErr == "") != (err == nil) || (err != nil && got != tt.wantErr) {
				t.Fatalf("err = %v (%s), want %q", err, got, tt.wantErr)
			}
			if res.Outcome != tt.wantOutcome {
				t.Errorf("outcome = %q, want %q", res.Outcome, tt.wantOutcome)
			}
			if tt.wantOutcome == "answered" && !strings.HasPrefix(res.Answer, "hi from Hermes") {
				t.Errorf("answer = %q, want the scripted reply of Hermes", res.Answer)
			}
		})
	}
}

func TestRunnerAsk(t *testing.T) {
	res, err := newRunner(gate{}, admit{}).Ask(context.Background(), "hermes", "cli", "hello", nil)
	if err != nil || res.Outcome != "answered" {
		t.Fatalf("Ask = %+v, %v; want answered", res, err)
	}
	_, err = newRunner(gate{over: true}, admit{}).Ask(context.Background(), "hermes", "cli", "hello", nil)
	if sb.ErrorCode(err) != sb.EFORBIDDEN || !strings.Contains(err.Error(), "daily budget") {
		t.Errorf("Ask over budget = %v, want EFORBIDDEN naming the daily budget", err)
	}
}

func TestAgentsBuildEveryAgentOnce(t *testing.T) {
	cfg := &swcfg.Config{Agents: []swcfg.Agent{{ID: "hermes", Model: &swcfg.Model{Provider: "nosuch"}}}}
	err := (&agentrun.Agents{Config: cfg, Providers: noProviders{}}).Check()
	var e *sb.Error
	if !errors.As(err, &e) || e.Code != sb.EINVALID || !strings.Contains(err.Error(), "agent hermes") {
		t.Errorf("Check = %v, want the provider's EINVALID naming the agent", err)
	}
	ag, err := newRunner(gate{}, admit{}).Agents.Agent("hermes")
	if err != nil || ag.ModelName != "scripted" || !strings.HasPrefix(ag.SystemPrompt, "You help.\n\n") {
		t.Errorf("Agent = %+v, %v; want the scripted model and the prompt first", ag, err)
	}
}
