package approvals_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

func TestNewChecksOptions(t *testing.T) {
	s := mustSigner(t, testKey)
	ok := approvals.Options{Store: nil, Signer: s, Executor: &executor{}, Notifier: &notifier{}, Waker: &waker{}, PublicBaseURL: publicBase}
	if _, err := approvals.New(ok); sb.ErrorCode(err) != sb.EINVALID {
		t.Fatalf("New without a store: %v", err)
	}
	for _, base := range []string{"", "abc.lambda-url.eu-central-1.on.aws", "ftp://x", "https://x/?a=1", "https://"} {
		o := ok
		o.Store = memstore.NewApprovals()
		o.PublicBaseURL = base
		if _, err := approvals.New(o); sb.ErrorCode(err) != sb.EINVALID {
			t.Errorf("New with publicBaseUrl %q: %v, want EINVALID", base, err)
		}
	}
}

func TestStage(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		call := deleteCall()
		call.ReplyTo = &sb.ReplyTo{RoomID: "rFinanz", RoomType: "p"}
		envl, err := e.svc.Stage(t.Context(), call, "the Q1 report is outdated")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(envl)
		id, _ := envl.Data["approval_id"].(string)
		if envl.Status != "pending_approval" || !sb.ValidApprovalID(id) || envl.Data["human_notified"] != true ||
			envl.Data["expires"] != "2026-03-15T09:26:53Z" || !strings.Contains(envl.Data["message"].(string), "You will be woken with the result") {
			t.Fatalf("envelope %s", raw)
		}
		// The agent must never see a link or token: it could approve itself.
		req := e.notify.Requests()[0]
		_, _, approveToken := linkParts(t, req.ApproveURL)
		_, _, denyToken := linkParts(t, req.DenyURL)
		for _, secret := range []string{approveToken, denyToken, "token", "/approvals/"} {
			if strings.Contains(string(raw), secret) {
				t.Fatalf("envelope %s contains %q", raw, secret)
			}
		}
		a, err := e.store.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		wantHash, _ := approvals.ArgsHash("Nextcloud", "delete", call.Args)
		if string(a.Args) != string(call.Args) || a.ArgsHash != wantHash || a.Run != requestingRun || a.AgentID != "hermes" ||
			a.Reason != "the Q1 report is outdated" || a.Status != approvals.StatusPending || a.Origin != sb.OriginAgent ||
			!a.CreatedAt.Equal(e.clock.Now()) || !a.ExpiresAt.Equal(time.Date(2026, 3, 15, 9, 26, 53, 0, time.UTC)) ||
			a.ReplyTo == nil || *a.ReplyTo != (sb.ReplyTo{RoomID: "rFinanz", RoomType: "p"}) || string(a.Notice) != `{"chatId":"123456789","messageId":4711}` {
			j, _ := json.Marshal(a)
			t.Fatalf("stored approval %s", j)
		}
		if req.ApproveURL != publicBase+"/approvals/"+id+"?decision=approve&token="+approveToken ||
			req.DenyURL != publicBase+"/approvals/"+id+"?decision=deny&token="+denyToken || approveToken == denyToken {
			t.Fatalf("links %s / %s", req.ApproveURL, req.DenyURL)
		}
		if err := e.signer.Verify(approveToken, id, "approve", a.ArgsHash, e.clock.Now()); err != nil {
			t.Fatalf("approve token: %v", err)
		}
	})
}

func TestStageWhenTheNotifierFails(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.notify.failWith = errDown
		envl, err := e.svc.Stage(t.Context(), deleteCall(), "")
		if err != nil {
			t.Fatalf("Stage: %v (a notifier failure must not lose the approval)", err)
		}
		id, _ := envl.Data["approval_id"].(string)
		if envl.Status != "pending_approval" || envl.Data["human_notified"] != false ||
			!strings.Contains(envl.Data["message"].(string), "could not be delivered") {
			t.Fatalf("envelope %+v", envl)
		}
		if e.status(t, id) != approvals.StatusPending {
			t.Fatal("the approval is not stored as pending")
		}
	})
}

func TestStageRefusesBadCalls(t *testing.T) {
	e := newEnv(t, backends[0])
	for name, mod := range map[string]func(*sb.ToolCall){
		"no run":        func(c *sb.ToolCall) { c.Run = sb.RunContext{} },
		"no agent":      func(c *sb.ToolCall) { c.AgentID = "" },
		"args not JSON": func(c *sb.ToolCall) { c.Args = json.RawMessage(`{"path":`) },
		"args too big":  func(c *sb.ToolCall) { c.Args = json.RawMessage(`{"t":"` + strings.Repeat("x", 70<<10) + `"}`) },
	} {
		call := deleteCall()
		mod(&call)
		envl, err := e.svc.Stage(t.Context(), call, "")
		if sb.ErrorCode(err) != sb.EINVALID || envl.Status != "error" {
			t.Errorf("%s: %v / %+v, want EINVALID and an error envelope", name, err, envl)
		}
	}
	if n := len(e.notify.Requests()); n != 0 {
		t.Fatalf("%d notifications for refused calls", n)
	}
}

// Approving records the decision and hands the call to the worker; the
// worker runs it once (a retried or repeated job runs nothing), records
// the result, updates the message and wakes the agent.
func TestApproveByLinkExecutesOnceAndWakesTheAgent(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		a, req := e.stage(t)
		id, decision, token := linkParts(t, req.ApproveURL)
		e.clock.Add(10 * time.Minute)
		decidedAt := e.clock.Now()
		o, err := e.svc.DecideByLink(t.Context(), id, decision, token)
		if err != nil {
			t.Fatal(err)
		}
		if o.Kind != approvals.KindApproved || !o.AgentInformed || o.Approval.Status != approvals.StatusApproved ||
			!strings.Contains(o.Message, "is running now; hermes will report back") {
			t.Fatalf("outcome %+v", o)
		}
		if e.exec.n.Load() != 0 || len(e.waker.Jobs()) != 0 {
			t.Fatal("the deciding side ran the action or woke the agent itself")
		}
		if st := e.waker.Starts(); len(st) != 1 || st[0].ApprovalID != id || st[0].AgentID != "hermes" || st[0].Source != "approval" {
			t.Fatalf("jobs handed to the worker: %+v, want one for approval %s", st, id)
		}
		if d := e.notify.Decisions(); len(d) != 1 || d[0].Status != approvals.StatusApproved ||
			approvals.OutcomeLine(d[0]) != "approved by link; running; the agent will report back" {
			t.Fatalf("notifier told %+v, want the approval as approved and running", d)
		}
		e.clock.Add(3 * time.Second)
		e.work(t)
		e.work(t) // Lambda's retry of the same job, or a duplicate delivery
		calls := e.exec.Calls()
		if len(calls) != 1 {
			t.Fatalf("%d executions, want 1", len(calls))
		}
		c := calls[0]
		if !c.Approved || c.Origin != sb.OriginAgent || c.AgentID != "hermes" || c.Tool != "Nextcloud" || c.Action != "delete" ||
			string(c.Args) != string(a.Args) {
			t.Fatalf("executed call %+v", c)
		}
		// The execution is audited under its own run, a child of the requesting run.
		if c.Run.RunID == "" || c.Run.RunID == requestingRun.RunID || c.Run.ParentRunID != requestingRun.RunID ||
			c.Run.RootRunID != requestingRun.RootRunID || c.Run.AgentID != "hermes" {
			t.Fatalf("execution run %+v", c.Run)
		}
		done, _ := e.store.Get(t.Context(), id)
		if done.Status != approvals.StatusExecuted || done.DecidedBy != "link" || !done.DecidedAt.Equal(decidedAt) ||
			!done.StartedAt.Equal(e.clock.Now()) ||
			done.Result.Status != "ok" || done.Result.Data["deleted"] != "reports/q1.md" || done.ExecRun != c.Run {
			j, _ := json.Marshal(done)
			t.Fatalf("stored after execution: %s", j)
		}
		if d := e.notify.Decisions(); len(d) != 2 || d[1].Status != approvals.StatusExecuted || len(d[1].Notice) == 0 {
			t.Fatalf("notifier told %+v, want the approved and then the executed approval, with its notice", d)
		}
		jobs := e.waker.Jobs()
		if len(jobs) != 1 {
			t.Fatalf("%d follow-up jobs, want 1", len(jobs))
		}
		j := jobs[0]
		if j.AgentID != "hermes" || j.Source != "approval" || j.Parent == nil || *j.Parent != requestingRun ||
			j.ReplyTo == nil || j.ReplyTo.RoomID != "rFinanz" || j.ReplyTo.ThreadID != "th1" {
			t.Fatalf("follow-up job %+v", j)
		}
		// The follow-up run the worker starts: parent = requesting run, same root.
		next := sb.NewRun(j.AgentID, j.Parent, e.clock.Now())
		if next.ParentRunID != requestingRun.RunID || next.RootRunID != requestingRun.RootRunID {
			t.Fatalf("follow-up run %+v", next)
		}
		if !strings.Contains(j.Text, "was approved by a human via the approval link") || !strings.Contains(j.Text, id) ||
			!strings.Contains(j.Text, "Do not run it again") {
			t.Fatalf("follow-up text:\n%s", j.Text)
		}
		src, body, ok := untrusted.Parse(j.Text[strings.Index(j.Text, "<untrusted_content"):])
		if !ok || !strings.Contains(src, id) || !strings.Contains(body, `"deleted":"reports/q1.md"`) || !strings.Contains(body, `"path":"reports/q1.md"`) {
			t.Fatalf("framed part: ok=%v source=%q body=%q", ok, src, body)
		}

		// Replay of the same link, also with a fresh clock: refused, nothing more happens.
		again, err := e.svc.DecideByLink(t.Context(), id, decision, token)
		if err != nil || again.Kind != approvals.KindAlreadyDecided || !strings.Contains(again.Message, "already executed") {
			t.Fatalf("replay: %+v, %v", again, err)
		}
		if e.exec.n.Load() != 1 || len(e.waker.Jobs()) != 1 || len(e.waker.Starts()) != 1 || len(e.notify.Decisions()) != 2 {
			t.Fatal("a replay did something")
		}
	})
}

func TestDenyInformsTheAgent(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		_, req := e.stage(t)
		id, decision, token := linkParts(t, req.DenyURL)
		o, err := e.svc.DecideByLink(t.Context(), id, decision, token)
		if err != nil || o.Kind != approvals.KindDenied || !o.AgentInformed {
			t.Fatalf("deny: %+v, %v", o, err)
		}
		if e.exec.n.Load() != 0 {
			t.Fatal("a denied action ran")
		}
		if e.status(t, id) != approvals.StatusDenied {
			t.Fatal("not stored as denied")
		}
		jobs := e.waker.Jobs()
		if len(jobs) != 1 || *jobs[0].Parent != requestingRun || !strings.Contains(jobs[0].Text, "was denied by a human via the approval link") ||
			!strings.Contains(jobs[0].Text, "It did not run") {
			t.Fatalf("follow-up jobs %+v", jobs)
		}
		if d := e.notify.Decisions(); len(d) != 1 || d[0].Status != approvals.StatusDenied {
			t.Fatalf("notifier told %+v", d)
		}
		// The approve link of a denied approval is refused.
		id, decision, token = linkParts(t, req.ApproveURL)
		if o, _ := e.svc.DecideByLink(t.Context(), id, decision, token); o.Kind != approvals.KindAlreadyDecided {
			t.Fatalf("approve after deny: %+v", o)
		}
		if e.exec.n.Load() != 0 {
			t.Fatal("approve after deny ran the action")
		}
	})
}

func TestLinkRefusalsChangeNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		a, req := e.stage(t)
		id, _, approveToken := linkParts(t, req.ApproveURL)
		_, _, denyToken := linkParts(t, req.DenyURL)
		other := e.signer.Token("someOtherId", "approve", a.ArgsHash, a.ExpiresAt)
		otherArgs := e.signer.Token(id, "approve", strings.Repeat("0", 64), a.ExpiresAt)
		tampered := []byte(approveToken)
		tampered[10] ^= 1
		tests := []struct {
			name, id, decision, token string
			want                      approvals.OutcomeKind
		}{
			{"tampered token", id, "approve", string(tampered), approvals.KindInvalidToken},
			{"approve token used to deny", id, "deny", approveToken, approvals.KindInvalidToken},
			{"deny token used to approve", id, "approve", denyToken, approvals.KindInvalidToken},
			{"token of another approval", id, "approve", other, approvals.KindInvalidToken},
			{"token for other args", id, "approve", otherArgs, approvals.KindInvalidToken},
			{"no token", id, "approve", "", approvals.KindInvalidToken},
			{"unknown id", "AAAAAAAAAAAAAAAAAAAAAA", "approve", approveToken, approvals.KindUnknown},
			{"malformed id", "../x", "approve", approveToken, approvals.KindUnknown},
			{"bad decision", id, "yes", approveToken, approvals.KindMalformed},
		}
		for _, tt := range tests {
			o, err := e.svc.DecideByLink(t.Context(), tt.id, tt.decision, tt.token)
			if err != nil || o.Kind != tt.want || !o.Kind.Refused() || o.Approval.ID != "" || !strings.Contains(o.Message, "Nothing was changed") {
				t.Errorf("%s: %+v, %v; want %s without details", tt.name, o, err, tt.want)
			}
		}
		e.assertUnchanged(t, a)
		if len(e.notify.Decisions()) != 0 {
			t.Fatal("the notifier was told about a refusal")
		}
	})
}

func TestExpiredLinkIsRefusedAndExpiryInformsTheAgent(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		a, req := e.stage(t)
		other, _ := e.stage(t) // stays pending but is decided before expiry
		id, decision, token := linkParts(t, req.ApproveURL)

		e.clock.Add(24*time.Hour - time.Second) // one second before expiry: nothing to expire yet
		if n, err := e.svc.ExpireDue(t.Context()); err != nil || n != 0 {
			t.Fatalf("ExpireDue before expiry: %d, %v", n, err)
		}
		e.clock.Add(time.Second)
		o, err := e.svc.DecideByLink(t.Context(), id, decision, token)
		if err != nil || o.Kind != approvals.KindExpired || o.Approval.ID != id {
			t.Fatalf("expired link: %+v, %v", o, err)
		}
		e.assertUnchanged(t, a)
		p, err := e.svc.Preview(t.Context(), id, decision, token)
		if err != nil || p.Kind != approvals.KindExpired || len(p.Choices) != 0 {
			t.Fatalf("preview of an expired link: %+v, %v", p, err)
		}

		n, err := e.svc.ExpireDue(t.Context())
		if err != nil || n != 2 {
			t.Fatalf("ExpireDue: %d, %v; want 2", n, err)
		}
		for _, x := range []approvals.Approval{a, other} {
			got, _ := e.store.Get(t.Context(), x.ID)
			if got.Status != approvals.StatusExpired || got.DecidedBy != "expiry" {
				t.Fatalf("%s after ExpireDue: %s by %q", x.ID, got.Status, got.DecidedBy)
			}
		}
		jobs := e.waker.Jobs()
		if len(jobs) != 2 || !strings.Contains(jobs[0].Text, "expired") || !strings.Contains(jobs[0].Text, "It did not run") ||
			*jobs[0].Parent != requestingRun {
			t.Fatalf("follow-up jobs %+v", jobs)
		}
		if len(e.notify.Decisions()) != 2 {
			t.Fatal("the notifier was not told about both expiries")
		}
		if n, err := e.svc.ExpireDue(t.Context()); err != nil || n != 0 {
			t.Fatalf("second ExpireDue: %d, %v", n, err)
		}
		if e.exec.n.Load() != 0 {
			t.Fatal("an expired approval ran")
		}
	})
}

func TestCallbackDecisions(t *testing.T) {
	approvers := []string{"111", "123456789"}
	eachBackend(t, func(t *testing.T, e *env) {
		a, _ := e.stage(t)
		for _, tt := range []struct {
			name, data, user string
			want             approvals.OutcomeKind
		}{
			{"not an approver", approvals.CallbackData(approvals.Approve, a.ID), "999", approvals.KindNotApprover},
			{"approver id as prefix", approvals.CallbackData(approvals.Approve, a.ID), "12345678", approvals.KindNotApprover},
			{"no user", approvals.CallbackData(approvals.Approve, a.ID), "", approvals.KindNotApprover},
			{"malformed", "x:" + a.ID, "111", approvals.KindMalformed},
			{"too long", "a:" + strings.Repeat("A", 63), "111", approvals.KindMalformed},
			{"unknown id", "a:AAAAAAAAAAAAAAAAAAAAAA", "111", approvals.KindUnknown},
		} {
			o, err := e.svc.DecideByCallback(t.Context(), tt.data, tt.user, approvers)
			if err != nil || o.Kind != tt.want || o.Approval.ID != "" {
				t.Errorf("%s: %+v, %v; want %s", tt.name, o, err, tt.want)
			}
		}
		e.assertUnchanged(t, a)

		o, err := e.svc.DecideByCallback(t.Context(), approvals.CallbackData(approvals.Approve, a.ID), "123456789", approvers)
		if err != nil || o.Kind != approvals.KindApproved {
			t.Fatalf("approver's approve: %+v, %v", o, err)
		}
		e.work(t)
		got, _ := e.store.Get(t.Context(), a.ID)
		if got.DecidedBy != "telegram:123456789" || e.exec.n.Load() != 1 || len(e.waker.Jobs()) != 1 {
			t.Fatalf("after the callback: decided by %q, %d executions, %d jobs", got.DecidedBy, e.exec.n.Load(), len(e.waker.Jobs()))
		}
		o, _ = e.svc.DecideByCallback(t.Context(), approvals.CallbackData(approvals.Deny, a.ID), "111", approvers)
		if o.Kind != approvals.KindAlreadyDecided || e.exec.n.Load() != 1 {
			t.Fatalf("second callback: %+v", o)
		}

		b, _ := e.stage(t)
		o, _ = e.svc.DecideByCallback(t.Context(), approvals.CallbackData(approvals.Deny, b.ID), "111", approvers)
		if o.Kind != approvals.KindDenied || e.exec.n.Load() != 1 {
			t.Fatalf("callback deny: %+v", o)
		}
		c, _ := e.stage(t)
		e.clock.Add(25 * time.Hour)
		o, _ = e.svc.DecideByCallback(t.Context(), approvals.CallbackData(approvals.Approve, c.ID), "111", approvers)
		if o.Kind != approvals.KindExpired || e.status(t, c.ID) != approvals.StatusPending {
			t.Fatalf("expired callback: %+v", o)
		}
	})
}

func TestConcurrentDecisionsExecuteOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const n = 20
		_, req := e.stage(t)
		id, _, approveToken := linkParts(t, req.ApproveURL)
		_, _, denyToken := linkParts(t, req.DenyURL)
		svc := e.service(t, newReadBarrier(t, e.store, n))
		var wg sync.WaitGroup
		start := make(chan struct{})
		kinds := make([]approvals.OutcomeKind, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				var o approvals.Outcome
				var err error
				switch i % 4 {
				case 0:
					o, err = svc.DecideByLink(t.Context(), id, "deny", denyToken)
				case 1:
					o, err = svc.DecideByCallback(t.Context(), approvals.CallbackData(approvals.Approve, id), "111", []string{"111"})
				default:
					o, err = svc.DecideByLink(t.Context(), id, "approve", approveToken)
				}
				if err != nil {
					t.Errorf("decider %d: %v", i, err)
				}
				kinds[i] = o.Kind
			}()
		}
		close(start)
		wg.Wait()
		e.work(t)
		won := 0
		for _, k := range kinds {
			if !k.Refused() {
				won++
			} else if k != approvals.KindAlreadyDecided {
				t.Errorf("a loser got %s, want already_decided", k)
			}
		}
		executions := e.exec.n.Load()
		notices := 1 + int(executions) // an approval shows "running", then the result
		if won != 1 || executions > 1 || len(e.waker.Starts()) != int(executions) || len(e.waker.Jobs()) != 1 ||
			len(e.notify.Decisions()) != notices {
			t.Fatalf("%d winners, %d executions, %d handed over, %d jobs, %d notices; want 1 winner, at most 1 execution, 1 job, %d notices",
				won, executions, len(e.waker.Starts()), len(e.waker.Jobs()), len(e.notify.Decisions()), notices)
		}
	})
}

func TestFailedActionIsRecorded(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.exec.env = sb.Envelope{Status: "error", Error: "Nextcloud answered 423 Locked: the file is open in Collabora", HTTPStatus: 423}
		_, req := e.stage(t)
		id, d, tok := linkParts(t, req.ApproveURL)
		o, err := e.svc.DecideByLink(t.Context(), id, d, tok)
		if err != nil || o.Kind != approvals.KindApproved {
			t.Fatalf("outcome %+v, %v", o, err)
		}
		e.work(t)
		got, _ := e.store.Get(t.Context(), id)
		if got.Status != approvals.StatusFailed || got.Result.HTTPStatus != 423 {
			t.Fatalf("stored %s / %+v", got.Status, got.Result)
		}
		if j := e.waker.Jobs(); len(j) != 1 || !strings.Contains(j[0].Text, "the action failed") || !strings.Contains(j[0].Text, "423") {
			t.Fatalf("jobs %+v", j)
		}
		if d := e.notify.Decisions(); len(d) != 2 || !strings.Contains(approvals.OutcomeLine(d[1]), "423 Locked") {
			t.Fatalf("the message does not show the failure: %+v", d)
		}
	})
}

// A worker that died after winning approved → executing (Lambda timeout,
// crash): the retried job and the link are refused, nothing runs twice,
// and after StuckAfter ExpireDue closes the approval as failed with an
// unknown outcome.
func TestStuckExecutingIsClosedNotRerun(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		a, req := e.stage(t)
		id, d, tok := linkParts(t, req.ApproveURL)
		if o, err := e.svc.DecideByLink(t.Context(), id, d, tok); err != nil || o.Kind != approvals.KindApproved {
			t.Fatalf("approve: %+v, %v", o, err)
		}
		e.clock.Add(time.Minute)
		// The worker's first write, then "crash".
		if _, err := e.store.Transition(t.Context(), a.ID, approvals.StatusApproved, approvals.StatusExecuting, func(x *approvals.Approval) {
			x.StartedAt = e.clock.Now()
		}); err != nil {
			t.Fatal(err)
		}
		e.work(t) // Lambda's retry of the job
		if o, err := e.svc.DecideByLink(t.Context(), id, d, tok); err != nil || o.Kind != approvals.KindAlreadyDecided || e.exec.n.Load() != 0 {
			t.Fatalf("retry after a crash: %+v, %v, %d executions", o, err, e.exec.n.Load())
		}
		e.clock.Add(approvals.DefaultStuckAfter - time.Second)
		if n, _ := e.svc.ExpireDue(t.Context()); n != 0 {
			t.Fatal("closed a possibly still running approval")
		}
		e.clock.Add(time.Second)
		n, err := e.svc.ExpireDue(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("ExpireDue: %d, %v", n, err)
		}
		got, _ := e.store.Get(t.Context(), id)
		if got.Status != approvals.StatusFailed || got.Result.Data["code"] != "outcome_unknown" || e.exec.n.Load() != 0 {
			t.Fatalf("stuck approval: %s %+v", got.Status, got.Result)
		}
		if j := e.waker.Jobs(); len(j) != 1 || !strings.Contains(j[0].Text, "outcome of Nextcloud.delete is unknown") {
			t.Fatalf("jobs %+v", j)
		}
	})
}

// An approved call the worker never starts (its job lost, or every
// attempt failed before the start was recorded) is closed after
// StartWithin as not run, the agent and the human are told as on expiry,
// and a job that arrives later runs nothing.
func TestApprovedButNeverStartedIsClosedAndNeverRuns(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		_, req := e.stage(t)
		id, d, tok := linkParts(t, req.ApproveURL)
		if o, err := e.svc.DecideByLink(t.Context(), id, d, tok); err != nil || o.Kind != approvals.KindApproved {
			t.Fatalf("approve: %+v, %v", o, err)
		}
		e.clock.Add(approvals.DefaultStartWithin - time.Second)
		if n, err := e.svc.ExpireDue(t.Context()); err != nil || n != 0 {
			t.Fatalf("ExpireDue before the bound: %d, %v", n, err)
		}
		e.clock.Add(time.Second)
		if n, err := e.svc.ExpireDue(t.Context()); err != nil || n != 1 {
			t.Fatalf("ExpireDue: %d, %v; want 1", n, err)
		}
		got, _ := e.store.Get(t.Context(), id)
		if got.Status != approvals.StatusFailed || got.Result.Data["code"] != "not_started" || !strings.Contains(got.Result.Error, "did not run") || !got.StartedAt.IsZero() {
			t.Fatalf("never started: %s %+v", got.Status, got.Result)
		}
		j := e.waker.Jobs()
		if len(j) != 1 || *j[0].Parent != requestingRun || !strings.Contains(j[0].Text, "it did not run") {
			t.Fatalf("follow-up jobs %+v", j)
		}
		if dd := e.notify.Decisions(); len(dd) != 2 || dd[1].Status != approvals.StatusFailed ||
			!strings.Contains(approvals.OutcomeLine(dd[1]), "did not run") {
			t.Fatalf("notifier told %+v", dd)
		}
		e.work(t) // the late job
		if e.exec.n.Load() != 0 || len(e.waker.Jobs()) != 1 {
			t.Fatalf("a late job ran the closed call: %d executions, %d jobs", e.exec.n.Load(), len(e.waker.Jobs()))
		}
		if n, _ := e.svc.ExpireDue(t.Context()); n != 0 {
			t.Fatal("closed twice")
		}
	})
}

// Many deliveries of the job that hands over one approved call, at once
// (Lambda's at-least-once delivery, concurrent workers): one runs it.
func TestConcurrentWorkersExecuteOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const n = 10
		_, req := e.stage(t)
		id, d, tok := linkParts(t, req.ApproveURL)
		if o, err := e.svc.DecideByLink(t.Context(), id, d, tok); err != nil || o.Kind != approvals.KindApproved {
			t.Fatalf("approve: %+v, %v", o, err)
		}
		svc := e.service(t, newReadBarrier(t, e.store, n))
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := svc.Execute(t.Context(), id); err != nil {
					t.Errorf("Execute: %v", err)
				}
			}()
		}
		wg.Wait()
		if e.exec.n.Load() != 1 || len(e.waker.Jobs()) != 1 || e.status(t, id) != approvals.StatusExecuted {
			t.Fatalf("%d executions, %d follow-ups, status %s; want 1, 1, executed", e.exec.n.Load(), len(e.waker.Jobs()), e.status(t, id))
		}
	})
}

// A function without an executor (the deciding ones) refuses to run an
// approved call and leaves it for the worker.
func TestExecuteWithoutExecutorRunsNothing(t *testing.T) {
	e := newEnv(t, backends[0])
	svc, err := approvals.New(approvals.Options{Store: e.store, Signer: e.signer, Notifier: e.notify, Waker: e.waker,
		PublicBaseURL: publicBase, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	_, req := e.stage(t)
	id, d, tok := linkParts(t, req.ApproveURL)
	if o, err := svc.DecideByLink(t.Context(), id, d, tok); err != nil || o.Kind != approvals.KindApproved {
		t.Fatalf("approve without an executor: %+v, %v", o, err)
	}
	if err := svc.Execute(t.Context(), id); sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Fatalf("Execute without an executor: %v, want EUNAVAILABLE", err)
	}
	if e.status(t, id) != approvals.StatusApproved {
		t.Fatal("the approval moved")
	}
	e.work(t)
	if e.exec.n.Load() != 1 || e.status(t, id) != approvals.StatusExecuted {
		t.Fatal("the worker did not run it")
	}
}

// The follow-up run answers where the asking run was woken from, whatever
// the channel and whatever the decision; a run nobody woke from a chat
// gets a follow-up that answers nowhere.
func TestFollowUpAnswersWhereTheRunWasWoken(t *testing.T) {
	tests := []struct {
		name    string
		replyTo *sb.ReplyTo
		want    *sb.ReplyTo
	}{
		{"rocket.chat thread", &sb.ReplyTo{RoomID: "rFinanz", RoomName: "finanz-team", RoomType: "p", ThreadID: "th1"},
			&sb.ReplyTo{RoomID: "rFinanz", RoomName: "finanz-team", RoomType: "p", ThreadID: "th1"}},
		{"telegram chat", &sb.ReplyTo{TelegramChatID: "-100123"}, &sb.ReplyTo{TelegramChatID: "-100123"}},
		{"not woken from a chat", nil, nil},
		{"nowhere to answer", &sb.ReplyTo{RoomName: "finanz-team"}, nil},
	}
	for _, tt := range tests {
		for _, d := range []approvals.Decision{approvals.Approve, approvals.Deny} {
			t.Run(tt.name+"/"+string(d), func(t *testing.T) {
				eachBackend(t, func(t *testing.T, e *env) {
					call := deleteCall()
					call.ReplyTo = tt.replyTo.Clone()
					envl, err := e.svc.Stage(t.Context(), call, "")
					if err != nil {
						t.Fatal(err)
					}
					id := envl.Data["approval_id"].(string)
					a, _ := e.store.Get(t.Context(), id)
					if o, err := e.svc.DecideByLink(t.Context(), id, string(d), e.signer.Token(id, string(d), a.ArgsHash, a.ExpiresAt)); err != nil || !o.AgentInformed {
						t.Fatalf("outcome %+v, %v", o, err)
					}
					e.work(t)
					jobs := e.waker.Jobs()
					if len(jobs) != 1 {
						t.Fatalf("%d follow-up jobs, want 1", len(jobs))
					}
					if got := jobs[0].ReplyTo; !reflect.DeepEqual(got, tt.want) {
						t.Errorf("follow-up ReplyTo = %+v, want %+v", got, tt.want)
					}
				})
			})
		}
	}
}

func TestOperatorCallsWakeNoAgent(t *testing.T) {
	e := newEnv(t, backends[0])
	call := deleteCall()
	call.Origin = sb.OriginOperator
	envl, err := e.svc.Stage(t.Context(), call, "")
	if err != nil {
		t.Fatal(err)
	}
	id := envl.Data["approval_id"].(string)
	a, _ := e.store.Get(t.Context(), id)
	o, err := e.svc.DecideByLink(t.Context(), id, "approve", e.signer.Token(id, "approve", a.ArgsHash, a.ExpiresAt))
	if err != nil || o.Kind != approvals.KindApproved || o.AgentInformed || strings.Contains(o.Message, "report back") {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	e.work(t)
	if c := e.exec.Calls(); len(c) != 1 || c[0].Origin != sb.OriginOperator {
		t.Fatalf("calls %+v", c)
	}
	if len(e.waker.Jobs()) != 0 {
		t.Fatal("an operator's approval woke the agent")
	}
}

// When the worker cannot be reached the approved call is closed at once as
// not run (the human sees so), and the decision is not an error.
func TestWakeFailureIsReportedNotFatal(t *testing.T) {
	e := newEnv(t, backends[0])
	e.waker.failWith = sb.E("wake.dispatch", sb.EUNAVAILABLE, "queue full")
	_, req := e.stage(t)
	id, d, tok := linkParts(t, req.ApproveURL)
	o, err := e.svc.DecideByLink(t.Context(), id, d, tok)
	if err != nil || o.Kind != approvals.KindFailed || o.AgentInformed || !strings.Contains(o.Message, "did not run") ||
		!strings.Contains(o.Message, "could not be told") {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	if got, _ := e.store.Get(t.Context(), id); got.Status != approvals.StatusFailed || got.Result.Data["code"] != "not_started" {
		t.Fatalf("recorded as %s %+v, want failed, not started", got.Status, got.Result)
	}
	if e.exec.n.Load() != 0 {
		t.Fatal("it ran")
	}

	// The follow-up of an executed call cannot be queued: the result is
	// still recorded and the worker's job does not fail.
	e.waker.failWith = nil
	_, req = e.stage(t)
	id, d, tok = linkParts(t, req.ApproveURL)
	if o, err := e.svc.DecideByLink(t.Context(), id, d, tok); err != nil || o.Kind != approvals.KindApproved {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	e.waker.failWith = sb.E("wake.dispatch", sb.EUNAVAILABLE, "queue full")
	e.work(t)
	if e.status(t, id) != approvals.StatusExecuted || e.exec.n.Load() != 1 {
		t.Fatal("not recorded as executed")
	}
}

// The notice may be stored after a quick human decided: the message still
// gets updated once.
func TestNoticeStoredAfterADecisionStillUpdatesTheMessage(t *testing.T) {
	e := newEnv(t, backends[0])
	slow := &racingNotifier{notifier: e.notify}
	svc, err := approvals.New(approvals.Options{Store: e.store, Signer: e.signer, Executor: e.exec, Notifier: slow,
		Waker: e.waker, PublicBaseURL: publicBase, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	slow.decide = func(r approvals.Request) {
		id, d, tok := linkParts(t, r.DenyURL)
		if o, err := svc.DecideByLink(t.Context(), id, d, tok); err != nil || o.Kind != approvals.KindDenied {
			t.Fatalf("deny before the notice is stored: %+v, %v", o, err)
		}
	}
	if _, err := svc.Stage(t.Context(), deleteCall(), ""); err != nil {
		t.Fatal(err)
	}
	d := e.notify.Decisions()
	if len(d) != 2 || len(d[0].Notice) != 0 || len(d[1].Notice) == 0 || d[1].Status != approvals.StatusDenied {
		t.Fatalf("Decided calls %+v; want one without and then one with the notice", d)
	}
}

// racingNotifier lets a human decide before RequestApproval returns.
type racingNotifier struct {
	*notifier
	decide func(approvals.Request)
}

func (r *racingNotifier) RequestApproval(ctx context.Context, req approvals.Request) (json.RawMessage, error) {
	notice, err := r.notifier.RequestApproval(ctx, req)
	r.decide(req)
	return notice, err
}

func TestResultsAreCapped(t *testing.T) {
	e := newEnv(t, backends[1])
	e.exec.env = sb.OK(map[string]any{"text": strings.Repeat("x", 100<<10)})
	_, req := e.stage(t)
	id, d, tok := linkParts(t, req.ApproveURL)
	if o, err := e.svc.DecideByLink(t.Context(), id, d, tok); err != nil || o.Kind != approvals.KindApproved {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	e.work(t)
	got, _ := e.store.Get(t.Context(), id)
	raw, _ := json.Marshal(got.Result)
	if got.Status != approvals.StatusExecuted || len(raw) > 32<<10 || got.Result.Data["truncated"] == nil {
		t.Fatalf("stored result of %d bytes: %.200s", len(raw), raw)
	}
}

// inlineWorker runs a handed-over call at once, inside Dispatch: a worker
// faster than the deciding function's own next step.
type inlineWorker struct {
	*waker
	svc *approvals.Service
}

func (w *inlineWorker) Dispatch(ctx context.Context, j sb.WakeJob) error {
	if j.ApprovalID != "" {
		return w.svc.Execute(ctx, j.ApprovalID)
	}
	return w.waker.Dispatch(ctx, j)
}

// However fast the worker is, the message shows "running" before the
// result, never after it.
func TestRunningIsShownBeforeTheResult(t *testing.T) {
	e := newEnv(t, backends[0])
	w := &inlineWorker{waker: e.waker}
	svc, err := approvals.New(approvals.Options{Store: e.store, Signer: e.signer, Executor: e.exec, Notifier: e.notify,
		Waker: w, PublicBaseURL: publicBase, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	w.svc = svc
	a, _ := e.stage(t)
	if o, err := svc.DecideByCallback(t.Context(), approvals.CallbackData(approvals.Approve, a.ID), "1", []string{"1"}); err != nil || o.Kind != approvals.KindApproved {
		t.Fatalf("approve: %+v, %v", o, err)
	}
	var shown []approvals.Status
	for _, d := range e.notify.Decisions() {
		shown = append(shown, d.Status)
	}
	if !reflect.DeepEqual(shown, []approvals.Status{approvals.StatusApproved, approvals.StatusExecuted}) {
		t.Fatalf("the message showed %v, want approved, then executed", shown)
	}
}
