package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// recordedTokens is the Step Functions task-token API as the approvals
// flow calls it: it keeps what each token was resumed with.
type recordedTokens struct {
	mu        sync.Mutex
	succeeded map[string]string
	failed    map[string]string
}

func (r *recordedTokens) Succeed(_ context.Context, token, output string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.succeeded[token] = output
	return nil
}

func (r *recordedTokens) Fail(_ context.Context, token, name, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed[token] = name
	return nil
}

// granted is what the token was resumed with, as the machine hands it to
// the Share step ($.approval).
func (r *recordedTokens) granted(t *testing.T, token string) *pipeline.Granted {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	out, ok := r.succeeded[token]
	if !ok {
		t.Fatalf("token %s was not resumed", token)
	}
	var g pipeline.Granted
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// stagingTools is the Nextcloud service as the public link meets it
// behind the executor: a share under a task token is staged with the real
// approvals service, with the arguments as the service sends them; an
// approved share runs (and is kept with who approved it). Other actions
// have no answer.
type stagingTools struct {
	scriptedTools
	svc    *approvals.Service
	ranMu  sync.Mutex
	shares []sb.ToolCall // the shares that ran
}

func (s *stagingTools) Share(ctx context.Context, by sb.ToolCall, a sb.ShareArgs) (sb.FileShared, error) {
	raw, _ := json.Marshal(a)
	call := by
	call.Tool, call.Action, call.Args = "Nextcloud", "share", raw
	if !call.Approved {
		env, err := s.svc.Stage(ctx, call, "the delivery's public link")
		if err != nil {
			return sb.FileShared{}, err
		}
		id, _ := env.Data["approval_id"].(string) // as the executor reads the stager's answer
		return sb.FileShared{}, &sb.PendingApproval{ApprovalID: id}
	}
	s.ranMu.Lock()
	defer s.ranMu.Unlock()
	s.shares = append(s.shares, call)
	return sb.FileShared{ID: "9", Type: sb.ShareLink, URL: "https://cloud.example.org/s/AbC"}, nil
}

func (s *stagingTools) ran() []sb.ToolCall {
	s.ranMu.Lock()
	defer s.ranMu.Unlock()
	return append([]sb.ToolCall(nil), s.shares...)
}

// approvalSteps is Steps with the real approvals service in front of a
// memory store, as the tools function has it.
type approvalSteps struct {
	steps  *pipeline.Steps
	svc    *approvals.Service
	store  *memstore.Approvals
	asked  *askedNotifier
	tokens *recordedTokens
	tools  *stagingTools
	audit  *memstore.Store
}

func newApprovalSteps(t *testing.T) *approvalSteps {
	t.Helper()
	a := &approvalSteps{store: memstore.NewApprovals(), asked: &askedNotifier{}, audit: memstore.New(),
		tokens: &recordedTokens{succeeded: map[string]string{}, failed: map[string]string{}}}
	signer, err := approvals.NewSigner([]byte("a-signing-key-of-at-least-32-bytes!!"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a.svc, err = approvals.New(approvals.Options{Store: a.store, Signer: signer, Notifier: a.asked, Waker: &jobRecorder{},
		Tokens: a.tokens, PublicBaseURL: "http://127.0.0.1:9", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	a.tools = &stagingTools{svc: a.svc}
	a.steps = &pipeline.Steps{Files: a.tools, KV: a.audit.KV(), Notify: router.New([]router.Channel{&toldChannel{}}, a.audit, log),
		Waker: &jobRecorder{}, Audit: a.audit, Approvals: a.store, Log: log}
	return a
}

// publicStep is the share step of execution with a public link of uploaded.
func publicStep(execution, uploaded string) pipeline.StepInput {
	return pipeline.StepInput{Op: pipeline.OpShare, Execution: execution, State: pipeline.State{
		Delivery: pipeline.Delivery{AgentID: agentID, Run: run, Share: &pipeline.Share{PublicLink: true}, HasShare: true, PublicLink: true},
		Done:     pipeline.Progress{Uploaded: uploaded},
	}}
}

// request runs AwaitApproval's Task for in under token and returns the
// approval it staged.
func (a *approvalSteps) request(t *testing.T, in pipeline.StepInput, token string) sb.Approval {
	t.Helper()
	before := len(a.asked.requests)
	if _, err := a.steps.RequestApproval(context.Background(), pipeline.ApprovalInput{StepInput: in, Token: token}); err != nil {
		t.Fatalf("RequestApproval: %v", err)
	}
	if len(a.asked.requests) != before+1 {
		t.Fatalf("RequestApproval staged %d approvals, want 1", len(a.asked.requests)-before)
	}
	return a.asked.requests[before].Approval
}

// decide decides approval id by its signed link, as the human does.
func (a *approvalSteps) decide(t *testing.T, id string, d approvals.Decision) {
	t.Helper()
	for _, r := range a.asked.requests {
		if r.Approval.ID != id {
			continue
		}
		link := r.ApproveURL
		if d == approvals.Deny {
			link = r.DenyURL
		}
		if _, err := a.svc.DecideByLink(context.Background(), id, string(d), tokenOf(t, link)); err != nil {
			t.Fatalf("deciding %s: %v", id, err)
		}
		return
	}
	t.Fatalf("no request for approval %s", id)
}

// The Share step after AwaitApproval trusts nothing the task output says:
// the approval it names must be the one staged for this delivery, decided
// approve in the approval store, for the share's arguments as staged; who
// decided comes from the store. Anything else makes no share and fails
// the step for good, saying the approval could not be verified.
func TestShareVerifiesTheApprovalInTheStore(t *testing.T) {
	const exec1, exec2 = "doc-hermes-1", "doc-hermes-2"
	tests := []struct {
		name string
		// arrange stages and decides; it returns the task output the Share
		// step gets ($.approval) and the step's input.
		arrange func(t *testing.T, a *approvalSteps) (*pipeline.Granted, pipeline.StepInput)
		want    string // in the error; "" = the share is made
		// wantBy is who the share's audit names as approver.
		wantBy string
	}{
		{name: "forged approval id, nobody decided", want: "not the one asked for this delivery",
			arrange: func(t *testing.T, a *approvalSteps) (*pipeline.Granted, pipeline.StepInput) {
				in := publicStep(exec1, "/reports/q3.csv")
				a.request(t, in, "token-1")
				return &pipeline.Granted{ApprovalID: "forged-by-mallory", DecidedBy: "mallory"}, in
			}},
		{name: "the real approval, still pending", want: "is pending, not approved",
			arrange: func(t *testing.T, a *approvalSteps) (*pipeline.Granted, pipeline.StepInput) {
				in := publicStep(exec1, "/reports/q3.csv")
				ap := a.request(t, in, "token-1")
				return &pipeline.Granted{ApprovalID: ap.ID, DecidedBy: "mallory"}, in
			}},
		{name: "the real approval, denied", want: "is denied, not approved",
			arrange: func(t *testing.T, a *approvalSteps) (*pipeline.Granted, pipeline.StepInput) {
				in := publicStep(exec1, "/reports/q3.csv")
				ap := a.request(t, in, "token-1")
				a.decide(t, ap.ID, approvals.Deny)
				return &pipeline.Granted{ApprovalID: ap.ID, DecidedBy: "link"}, in
			}},
		{name: "another delivery's approved link", want: "not the one asked for this delivery",
			arrange: func(t *testing.T, a *approvalSteps) (*pipeline.Granted, pipeline.StepInput) {
				in := publicStep(exec1, "/reports/q3.csv")
				a.request(t, in, "token-1")
				other := a.request(t, publicStep(exec2, "/reports/salaries.csv"), "token-2")
				a.decide(t, other.ID, approvals.Approve)
				return a.tokens.granted(t, "token-2"), in
			}},
		{name: "approved, but for other arguments", want: "arguments",
			arrange: func(t *testing.T, a *approvalSteps) (*pipeline.Granted, pipeline.StepInput) {
				ap := a.request(t, publicStep(exec1, "/reports/q3.csv"), "token-1")
				a.decide(t, ap.ID, approvals.Approve)
				return a.tokens.granted(t, "token-1"), publicStep(exec1, "/reports/salaries.csv")
			}},
		{name: "no approval came with the step", want: "no approval came",
			arrange: func(t *testing.T, a *approvalSteps) (*pipeline.Granted, pipeline.StepInput) {
				in := publicStep(exec1, "/reports/q3.csv")
				a.request(t, in, "token-1")
				return nil, in
			}},
		{name: "approved by link; the output's decidedBy is ignored", wantBy: "link",
			arrange: func(t *testing.T, a *approvalSteps) (*pipeline.Granted, pipeline.StepInput) {
				in := publicStep(exec1, "/reports/q3.csv")
				ap := a.request(t, in, "token-1")
				a.decide(t, ap.ID, approvals.Approve)
				g := a.tokens.granted(t, "token-1")
				g.DecidedBy = "mallory"
				return g, in
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newApprovalSteps(t)
			granted, in := tt.arrange(t, a)
			in.Approval = granted
			st, err := a.steps.Share(context.Background(), in)
			shares := a.tools.ran()
			if tt.want == "" {
				if err != nil || len(shares) != 1 {
					t.Fatalf("Share = %v with %d shares, want the link made once", err, len(shares))
				}
				if shares[0].ApprovedBy != tt.wantBy || shares[0].ApprovalID != granted.ApprovalID {
					t.Errorf("the share ran as approved by %q (approval %s), want %q from the store", shares[0].ApprovedBy, shares[0].ApprovalID, tt.wantBy)
				}
				if st.Done.Link == "" {
					t.Errorf("Share answered %+v, want the link in done", st.Done)
				}
				return
			}
			var perm *taskerr.PermanentError
			if !errors.As(err, &perm) || !strings.Contains(err.Error(), "the approval could not be verified") || !strings.Contains(err.Error(), tt.want) ||
				!strings.Contains(err.Error(), "no share was made") {
				t.Errorf("Share = %T %v, want a PermanentError: the approval could not be verified (%s), no share was made", err, err, tt.want)
			}
			if len(shares) != 0 {
				t.Errorf("%d shares ran, want none", len(shares))
			}
			entries, _ := a.audit.ByRoot(context.Background(), run.RootRunID)
			var refused bool
			for _, e := range entries {
				if e.Tool == "Nextcloud" && e.Action == "share" && e.Decision == sb.DecisionApproved {
					t.Errorf("audit entry %+v records the share as approved", e)
				}
				refused = refused || e.Tool == "Nextcloud" && e.Action == "share" && e.Outcome == sb.OutcomeRejected &&
					strings.Contains(e.Error, "the approval could not be verified") && e.DecidedBy == ""
			}
			if !refused {
				t.Errorf("no audit entry of the refused share saying the approval could not be verified: %+v", entries)
			}
		})
	}
}

// The attack run's forgery, on the machine: whoever holds the task token
// resumes AwaitApproval with an output of their own. The delivery fails at
// step share without a link, the audit names no approver, the human and
// the agent are told the approval could not be verified, and the real
// approval still waits for a human.
func TestForgedTaskSuccessMakesNoPublicLink(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.nc.SetPublicLinks(true)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"publicLink":true},"message":"Q3 for everyone"}`))
	req := w.asked.request(t)
	if err := w.steps.Tokens.Succeed(context.Background(), req.Approval.TaskToken, `{"approvalId":"forged-by-mallory","decidedBy":"mallory"}`); err != nil {
		t.Fatal(err)
	}
	d := w.wait(id)
	if d.Status != "FAILED" {
		t.Fatalf("execution %s, want FAILED", d.Status)
	}
	if n := w.nc.Shares(); n != 0 || w.nc.Calls("POST shares") != 0 {
		t.Errorf("%d shares (%d POST shares), want none", n, w.nc.Calls("POST shares"))
	}
	if msgs := w.rc.Messages(w.room); len(msgs) != 0 {
		t.Errorf("room got %+v, want nothing posted", msgs)
	}
	told := w.told.all()
	if len(told) != 1 || !strings.Contains(told[0], "failed at step share") || !strings.Contains(told[0], "the approval could not be verified") ||
		!strings.Contains(told[0], "not shared, not posted") {
		t.Errorf("human told %q, want once: the approval could not be verified, not shared", told)
	}
	if jobs := w.jobs.all(); len(jobs) != 1 || len(told) == 1 && !strings.HasPrefix(jobs[0].Text, told[0]) {
		t.Errorf("agent follow-ups %+v, want one with the same facts", jobs)
	}
	entries, _ := w.store.ByRoot(context.Background(), run.RootRunID)
	var refused bool
	for _, e := range entries {
		if e.DecidedBy == "mallory" || e.Decision == sb.DecisionApproved {
			t.Errorf("audit entry %s.%s says %s by %q", e.Tool, e.Action, e.Decision, e.DecidedBy)
		}
		refused = refused || e.Tool == "Nextcloud" && e.Action == "share" && e.Outcome == sb.OutcomeRejected &&
			strings.Contains(e.Error, "the approval could not be verified")
	}
	if !refused {
		t.Error("no audit entry of the refused share")
	}
	if a, err := w.approvalStore.Get(context.Background(), req.Approval.ID); err != nil || a.Status != sb.ApprovalPending {
		t.Errorf("the real approval is %s (%v), want still pending", a.Status, err)
	}
}
