package approvals_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// trashTool stands in for Nextcloud.delete, which the default policy
// stages for approval.
type trashTool struct{}

func (trashTool) Spec() sb.ToolSpec {
	return sb.ToolSpec{Name: "Nextcloud", Actions: []sb.ActionSpec{{Name: "delete", Parameters: map[string]any{
		"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}}}
}

func (trashTool) Invoke(context.Context, sb.ToolCall) sb.Envelope {
	return sb.OK(map[string]any{"deleted": true})
}

// TestApprovedCallIsAuditedAsApproved runs the real executor under the
// approvals flow: the executed call's audit entry says approved, which
// approval and who decided — by link and by Telegram button.
func TestApprovedCallIsAuditedAsApproved(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		policy, err := staging.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		audit := memstore.New()
		x, err := tools.New(tools.Options{Tools: []sb.Tool{trashTool{}}, Policy: policy, Audit: audit,
			Scrub: scrub.New(nil), Permits: func(string, string) bool { return true }, Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := approvals.New(approvals.Options{Store: e.store, Signer: e.signer, Executor: x, Notifier: e.notify,
			Waker: e.waker, PublicBaseURL: publicBase + "/", Now: e.clock.Now, Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		x.SetStager(svc)

		for _, tt := range []struct {
			name   string
			decide func(id string, req approvals.Request) (approvals.Outcome, error)
			wantBy string
		}{
			{"link", func(id string, req approvals.Request) (approvals.Outcome, error) {
				_, decision, token := linkParts(t, req.ApproveURL)
				return svc.DecideByLink(t.Context(), id, decision, token)
			}, approvals.DecidedByLink},
			{"button", func(id string, _ approvals.Request) (approvals.Outcome, error) {
				return svc.DecideByCallback(t.Context(), approvals.CallbackData(approvals.Approve, id), "123456789", []string{"123456789"})
			}, "telegram:123456789"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				root := "root-" + tt.name
				run := sb.RunContext{RunID: root, RootRunID: root, AgentID: "hermes"}
				env := x.Invoke(t.Context(), sb.ToolCall{AgentID: "hermes", Tool: "Nextcloud", Action: "delete",
					Args: json.RawMessage(`{"path":"reports/q1.md"}`), Run: run, Origin: sb.OriginAgent})
				id, _ := env.Data["approval_id"].(string)
				if env.Status != sb.OutcomePending || id == "" {
					t.Fatalf("delete = %+v, want pending_approval", env)
				}
				reqs := e.notify.Requests()
				o, err := tt.decide(id, reqs[len(reqs)-1])
				if err != nil || o.Kind != approvals.KindApproved {
					t.Fatalf("approve: %+v, %v", o, err)
				}
				if err := svc.Execute(t.Context(), id); err != nil { // the worker's job
					t.Fatal(err)
				}
				entries, err := audit.ByRoot(t.Context(), root)
				if err != nil || len(entries) != 2 {
					t.Fatalf("audit of the chain: %+v, %v; want the staged and the executed call", entries, err)
				}
				staged, executed := entries[0], entries[1]
				if staged.Decision != sb.DecisionApprove || staged.Outcome != sb.OutcomePending || staged.ApprovalID != id {
					t.Errorf("staged entry %+v, want approve/pending_approval for %s", staged, id)
				}
				if executed.Decision != sb.DecisionApproved || executed.Outcome != sb.OutcomeOK ||
					executed.ApprovalID != id || executed.DecidedBy != tt.wantBy {
					t.Errorf("executed entry: decision %q outcome %q approval %q by %q; want approved ok %s %s",
						executed.Decision, executed.Outcome, executed.ApprovalID, executed.DecidedBy, id, tt.wantBy)
				}
			})
		}
	})
}
