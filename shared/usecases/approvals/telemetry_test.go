package approvals_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/telemetry/telemetrytest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// The wait for a decision is one span, recorded when the decision comes:
// from staging to the decision, under the execute_tool span that staged
// the call (its id kept with the approval, in either store), with the
// approval, the decision, who decided and how long it waited.
func TestTheWaitForADecisionIsASpanUnderTheStagingCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		decide func(t *testing.T, e *env, req approvals.Request)
		want   string
		by     string
	}{
		{"approved", func(t *testing.T, e *env, req approvals.Request) {
			e.decideLink(t, req.ApproveURL)
		}, "approved", "link"},
		{"denied", func(t *testing.T, e *env, req approvals.Request) {
			e.decideLink(t, req.DenyURL)
		}, "denied", "link"},
		{"expired", func(t *testing.T, e *env, _ approvals.Request) {
			e.clock.Add(24 * time.Hour)
			if n, err := e.svc.ExpireDue(t.Context()); err != nil || n != 1 {
				t.Fatalf("ExpireDue = %d, %v", n, err)
			}
		}, "expired", "expiry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, e *env) {
				spans := &telemetrytest.Spans{}
				e.svc.SetTelemetry(spans)
				trace, staging := sb.ChainTrace(requestingRun.RootRunID), sb.ToolSpan(requestingRun.RunID, 3)
				ctx := sb.WithSpanParent(t.Context(), sb.SpanParent{Trace: trace, Span: staging})
				envl, err := e.svc.Stage(ctx, deleteCall(), "the Q1 report is outdated")
				if err != nil {
					t.Fatal(err)
				}
				id, _ := envl.Data["approval_id"].(string)
				if a, _ := e.store.Get(t.Context(), id); a.StagedSpan != staging.String() {
					t.Fatalf("stored staged span %q, want %s", a.StagedSpan, staging)
				}
				if n := len(spans.All()); n != 0 {
					t.Fatalf("%d spans at staging, want none before the decision", n)
				}
				e.clock.Add(90 * time.Second)
				tc.decide(t, e, e.notify.Requests()[0])

				got := spans.Named("await_approval Nextcloud.delete")
				if len(got) != 1 {
					t.Fatalf("%d wait spans, want 1 (all %d)", len(got), len(spans.All()))
				}
				s := got[0]
				if s.Trace != trace || s.Parent != staging || s.ID != sb.ApprovalSpan(id) || !s.End.After(s.Start) {
					t.Errorf("wait span trace %s parent %s id %s %v..%v, want under the staging call", s.Trace, s.Parent, s.ID, s.Start, s.End)
				}
				wait := s.End.Sub(s.Start).Milliseconds()
				for key, want := range map[string]any{sb.AttrApprovalID: id, sb.AttrApprovalResult: tc.want, sb.AttrDecidedBy: tc.by,
					sb.AttrWaitMS: wait, sb.AttrRunID: requestingRun.RunID, sb.AttrConversationID: requestingRun.RootRunID} {
					if v := telemetrytest.Attr(s, key); v != want {
						t.Errorf("%s = %v, want %v", key, v, want)
					}
				}
			})
		})
	}
}

// A call staged where telemetry recorded no span (an operator's call) has
// its wait under the asking run's invoke_agent span; a span of another
// chain is not taken.
func TestTheWaitWithoutAStagingSpanHangsUnderTheRun(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		spans := &telemetrytest.Spans{}
		e.svc.SetTelemetry(spans)
		ctx := sb.WithSpanParent(context.Background(), sb.SpanParent{Trace: sb.ChainTrace("another-chain"), Span: sb.ToolSpan("x", 0)})
		a, req := e.stageCtx(t, ctx)
		if a.StagedSpan != "" {
			t.Errorf("staged span %q from another chain's context, want none", a.StagedSpan)
		}
		e.decideLink(t, req.DenyURL)
		if s := spans.Named("await_approval Nextcloud.delete"); len(s) != 1 || s[0].Parent != sb.RunSpan(requestingRun.RunID) {
			t.Errorf("wait spans %+v, want one under run-ask's span", s)
		}
	})
}

// decideLink follows an approval link as its recipient would.
func (e *env) decideLink(t *testing.T, link string) {
	t.Helper()
	id, decision, token := linkParts(t, link)
	if _, err := e.svc.DecideByLink(t.Context(), id, decision, token); err != nil {
		t.Fatal(err)
	}
}

// stageCtx stages deleteCall under ctx.
func (e *env) stageCtx(t *testing.T, ctx context.Context) (approvals.Approval, approvals.Request) {
	t.Helper()
	envl, err := e.svc.Stage(ctx, deleteCall(), "why")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := envl.Data["approval_id"].(string)
	a, err := e.store.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a, e.notify.Requests()[len(e.notify.Requests())-1]
}
