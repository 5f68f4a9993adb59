package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
)

// vaultTool refuses paths that leave its folder in Preflight, as the real
// tools do; its one action needs approval.
type vaultTool struct {
	preflights atomic.Int32
	runs       atomic.Int32
	panics     bool
}

var _ tools.Preflighter = (*vaultTool)(nil)

func (v *vaultTool) Spec() sb.ToolSpec {
	return sb.ToolSpec{Name: "Vault", Actions: []sb.ActionSpec{{Name: "shred", Parameters: map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"path"},
		"properties": map[string]any{"path": map[string]any{"type": "string", "minLength": 1}},
	}}}}
}

func (v *vaultTool) Preflight(_ context.Context, call sb.ToolCall) error {
	v.preflights.Add(1)
	if v.panics {
		panic("preflight bug")
	}
	var a struct{ Path string }
	_ = json.Unmarshal(call.Args, &a)
	switch {
	case strings.Contains(a.Path, ".."):
		return sb.E("vault.shred", sb.EINVALID, "path "+a.Path+" climbs out of the vault; give a path inside it")
	case a.Path == "missing.txt":
		return sb.E("vault.shred", sb.ENOTFOUND, "no file missing.txt in the vault; list it first")
	}
	return nil
}

func (v *vaultTool) Invoke(context.Context, sb.ToolCall) sb.Envelope {
	v.runs.Add(1)
	return sb.OK(nil)
}

// countingStager records what it was asked to keep for approval.
type countingStager struct{ calls atomic.Int32 }

func (s *countingStager) Stage(context.Context, sb.ToolCall, string) (sb.Envelope, error) {
	s.calls.Add(1)
	return sb.Envelope{Status: sb.OutcomePending, Data: map[string]any{"approval_id": "ap-1"}}, nil
}

func TestPreflightRefusesBeforeStaging(t *testing.T) {
	tests := []struct {
		name        string
		args        string
		panics      bool
		wantStatus  string
		wantOutcome string
		wantErr     string
		wantCode    string
		wantStaged  int32
		wantPre     int32
	}{
		{name: "escaping path", args: `{"path":"../etc/passwd"}`, wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: "climbs out of the vault", wantCode: sb.EINVALID, wantPre: 1},
		{name: "missing file", args: `{"path":"missing.txt"}`, wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: "no file missing.txt", wantCode: sb.ENOTFOUND, wantPre: 1},
		{name: "schema errors come first, preflight is not asked", args: `{"path":""}`, wantStatus: "error",
			wantOutcome: sb.OutcomeRejected, wantErr: "args of Vault.shred are wrong"},
		{name: "valid call is staged", args: `{"path":"old.txt"}`, wantStatus: sb.OutcomePending,
			wantOutcome: sb.OutcomePending, wantStaged: 1, wantPre: 1},
		{name: "a panicking preflight cannot tell, so the call is staged", args: `{"path":"old.txt"}`, panics: true,
			wantStatus: sb.OutcomePending, wantOutcome: sb.OutcomePending, wantStaged: 1, wantPre: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vault := &vaultTool{panics: tt.panics}
			policy, err := staging.New(map[string]string{"Vault.shred": "approve"})
			if err != nil {
				t.Fatal(err)
			}
			store := memstore.New()
			x, err := tools.New(tools.Options{Tools: []sb.Tool{vault}, Policy: policy, Audit: store,
				Scrub: scrub.New(nil), Permits: func(string, string) bool { return true }, Log: discard()})
			if err != nil {
				t.Fatal(err)
			}
			stager := &countingStager{}
			x.SetStager(stager)
			call := sb.ToolCall{AgentID: "alice", Tool: "Vault", Action: "shred", Args: json.RawMessage(tt.args),
				Run: runCtx("root-pre"), Origin: sb.OriginAgent}
			env := x.Invoke(context.Background(), call)
			if env.Status != tt.wantStatus || !strings.Contains(env.Error, tt.wantErr) {
				t.Errorf("envelope = %q %q, want %q containing %q", env.Status, env.Error, tt.wantStatus, tt.wantErr)
			}
			if tt.wantCode != "" && env.Data["code"] != tt.wantCode {
				t.Errorf("code = %v, want %s", env.Data["code"], tt.wantCode)
			}
			if got := stager.calls.Load(); got != tt.wantStaged {
				t.Errorf("staged %d times, want %d", got, tt.wantStaged)
			}
			if got := vault.preflights.Load(); got != tt.wantPre {
				t.Errorf("preflight ran %d times, want %d", got, tt.wantPre)
			}
			if got := vault.runs.Load(); got != 0 {
				t.Errorf("the tool ran %d times before anyone approved", got)
			}
			entries, _ := store.ByRoot(context.Background(), "root-pre")
			if len(entries) != 1 || entries[0].Outcome != tt.wantOutcome {
				t.Fatalf("audit = %+v, want one entry with outcome %s", entries, tt.wantOutcome)
			}
			if tt.wantStatus == "error" && entries[0].Decision != "" {
				t.Errorf("a refused call has the policy decision %q; the policy must not have been asked", entries[0].Decision)
			}
		})
	}
}

// TestApprovedCallsAreAuditedAsApproved: the staged entry names the
// approval it waits for; the call the approvals flow runs after a yes is
// audited as approved, with the approval and who decided. A rule that
// became deny meanwhile still wins.
func TestApprovedCallsAreAuditedAsApproved(t *testing.T) {
	f := newFixture(t)
	stager := &countingStager{}
	f.x.SetStager(stager)
	staged := f.x.Invoke(context.Background(), sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "erase",
		Run: runCtx("root-staged"), Origin: sb.OriginAgent})
	if staged.Status != sb.OutcomePending {
		t.Fatalf("erase = %+v, want pending_approval", staged)
	}
	if e := f.only(t, "root-staged"); e.Decision != sb.DecisionApprove || e.ApprovalID != "ap-1" || e.DecidedBy != "" {
		t.Errorf("staged entry: decision %q, approval %q, decided by %q; want approve, ap-1, nobody yet", e.Decision, e.ApprovalID, e.DecidedBy)
	}

	for _, tt := range []struct {
		action       string
		wantDecision sb.Decision
		wantOutcome  string
		wantRuns     int32
	}{
		{"erase", sb.DecisionApproved, sb.OutcomeOK, 1},
		{"forbidden", sb.DecisionDeny, sb.OutcomeDenied, 0},
	} {
		t.Run(tt.action, func(t *testing.T) {
			before := f.echo.runs.Load()
			root := "root-approved-" + tt.action
			f.x.Invoke(context.Background(), sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: tt.action,
				Run: runCtx(root), Origin: sb.OriginAgent, Approved: true, ApprovalID: "ap-1", ApprovedBy: "telegram:123456789"})
			e := f.only(t, root)
			if e.Decision != tt.wantDecision || e.Outcome != tt.wantOutcome {
				t.Errorf("entry: decision %q outcome %q, want %q %q", e.Decision, e.Outcome, tt.wantDecision, tt.wantOutcome)
			}
			if tt.wantDecision == sb.DecisionApproved && (e.ApprovalID != "ap-1" || e.DecidedBy != "telegram:123456789") {
				t.Errorf("entry: approval %q decided by %q, want ap-1 and telegram:123456789", e.ApprovalID, e.DecidedBy)
			}
			if got := f.echo.runs.Load() - before; got != tt.wantRuns {
				t.Errorf("ran %d times, want %d", got, tt.wantRuns)
			}
		})
	}
}
