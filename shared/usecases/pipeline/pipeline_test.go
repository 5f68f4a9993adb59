package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfntoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"

	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/control"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
)

func TestDeliverCSVAsXLSXSharedWithAUser(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := newWorld(t)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","format":"xlsx","share":{"with":"richard"},
		"room":"finanz-team","message":"Q3 numbers"}`))

	d := w.wait(id)
	if d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution %s: %s %s", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	if got := w.files("/reports"); len(got) != 1 || got[0] != "/reports/q3.xlsx" {
		t.Errorf("reports folder holds %v, want [/reports/q3.xlsx]", got)
	}
	msgs := w.rc.Messages(w.room)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "Q3 numbers") || !strings.Contains(msgs[0].Text, "https://cloud.example.org/f/") {
		t.Errorf("room got %+v, want one message with the text and the file's link", msgs)
	}
	jobs := w.jobs.all()
	if len(jobs) != 1 || jobs[0].Parent == nil || jobs[0].Parent.RunID != run.RunID || jobs[0].Source != pipeline.JobSource ||
		jobs[0].ReplyTo == nil || jobs[0].ReplyTo.ThreadID != "thread-1" ||
		!strings.Contains(jobs[0].Text, "finished") || !strings.Contains(jobs[0].Text, "/reports/q3.xlsx") {
		t.Errorf("follow-up jobs %+v, want one follow-up of run-1 saying it finished", jobs)
	}
	if told := w.told.all(); len(told) != 0 {
		t.Errorf("the human was told %q on success", told)
	}
	for _, k := range []string{"Nextcloud.convert", "Nextcloud.upload", "Nextcloud.share", "RocketChat.send_message"} {
		if n := w.invoke.count(k); n != 1 {
			t.Errorf("%s called %d times, want 1", k, n)
		}
	}
}

func TestDeliverLockedReportGetsATimestampedName(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	if err := w.nc.MkdirAll(root + "/reports"); err != nil {
		t.Fatal(err)
	}
	w.nc.Lock(root + "/reports/q3.csv") // open in Collabora
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv"}`))
	if d := w.wait(id); d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution %s: %s", d.Status, aws.ToString(d.Cause))
	}
	got := w.files("/reports")
	if len(got) != 1 || got[0] != "/reports/q3-20260501-213000.csv" {
		t.Errorf("reports folder holds %v, want the timestamped name only", got)
	}
	jobs := w.jobs.all()
	if len(jobs) != 1 || !strings.Contains(jobs[0].Text, "/reports/q3-20260501-213000.csv") || !strings.Contains(jobs[0].Text, "timestamped") {
		t.Errorf("follow-up %+v, want the new name and why", jobs)
	}
	// No share: the post has the path and the file's internal link.
	if msgs := w.rc.Messages(w.room); len(msgs) != 1 || !strings.Contains(msgs[0].Text, "/reports/q3-20260501-213000.csv — https://cloud.example.org/f/") {
		t.Errorf("room got %+v, want the new name posted with the file's link", msgs)
	}
}

func TestDeliverOverQuotaStopsWithAClearMessage(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	w.nc.SetQuota(3) // 507 Insufficient Storage
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"with":"richard"}}`))
	d := w.wait(id)
	if d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "NotDelivered" {
		t.Fatalf("execution %s %s, want FAILED NotDelivered", d.Status, aws.ToString(d.Error))
	}
	if n := w.invoke.count("Nextcloud.upload"); n != 1 {
		t.Errorf("upload tried %d times, want 1: a full quota is not retried", n)
	}
	told := w.told.all()
	if len(told) != 1 || !strings.Contains(told[0], "failed at step upload") || !strings.Contains(told[0], "not uploaded, not shared, not posted") ||
		!strings.Contains(strings.ToLower(told[0]), "quota") {
		t.Errorf("human told %q, want the step, the quota and what was not done", told)
	}
	if jobs := w.jobs.all(); len(jobs) != 1 || len(told) == 1 && !strings.HasPrefix(jobs[0].Text, told[0]) {
		t.Errorf("agent follow-up %+v, want one with the same facts", jobs)
	}
}

func TestNextcloudDownLongerThanTheRetries(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	for range 10 {
		w.nc.FailNext("POST shares", 503)
	}
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"with":"richard"},"room":"finanz-team"}`))
	if d := w.wait(id); d.Status != types.ExecutionStatusFailed {
		t.Fatalf("execution %s, want FAILED", d.Status)
	}
	share := visits(w.history(id), "Share")
	if len(share) != 1 || share[0].Attempts != 4 || share[0].Outcome != "failed" {
		t.Errorf("Share visits %+v, want one with 1 + 3 retries, failed", share)
	}
	told := w.told.all()
	if len(told) != 1 || !strings.Contains(told[0], "failed at step share") || !strings.Contains(told[0], "uploaded to /reports/q3.csv") ||
		!strings.Contains(told[0], "not shared, not posted") {
		t.Errorf("human told %q, want: uploaded, not shared", told)
	}
	if jobs := w.jobs.all(); len(jobs) != 1 || jobs[0].Parent == nil || jobs[0].Parent.RunID != run.RunID || len(told) == 1 && !strings.HasPrefix(jobs[0].Text, told[0]) {
		t.Errorf("agent follow-up %+v, want the same facts for run-1", jobs)
	}
	if n := w.nc.Shares(); n != 0 {
		t.Errorf("%d shares exist, want none", n)
	}
	if msgs := w.rc.Messages(w.room); len(msgs) != 0 {
		t.Errorf("room got %+v, want nothing posted", msgs)
	}
}

// A share whose answer got lost (the proxy timed out after Nextcloud made
// it) is found on the retry, not made twice; the same for an upload.
func TestRetriedStepsDoNotDoubleUploadOrShare(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	w.nc.FailNextAfter("PUT files", 504)
	w.nc.FailNextAfter("POST shares", 504)
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"with":"richard"}}`))
	if d := w.wait(id); d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution %s: %s", d.Status, aws.ToString(d.Cause))
	}
	if n := w.nc.Shares(); n != 1 {
		t.Errorf("%d shares, want 1", n)
	}
	if got := w.files("/reports"); len(got) != 1 {
		t.Errorf("reports folder holds %v, want one file", got)
	}
	x := w.history(id)
	for _, st := range []string{"Upload", "Share"} {
		if v := visits(x, st); len(v) != 1 || v[0].Attempts != 2 || v[0].Outcome != "succeeded" {
			t.Errorf("%s visits %+v, want one with 2 attempts, succeeded", st, v)
		}
	}
	if n := w.nc.Calls("POST shares"); n != 1 {
		t.Errorf("POST shares %d times, want 1 (the retry found the share)", n)
	}

	// The whole delivery again (same run, same args) is the same execution.
	again := w.deliver(`{"localPath":"personal:q3.csv","share":{"with":"richard"}}`)
	if again.Data["executionId"] != id {
		t.Errorf("second deliver started %v, want the same execution %s", again.Data["executionId"], id)
	}
}

// Nextcloud limits share creation (20 per user in 10 minutes) and answers
// a bare 429, without Retry-After. The delivery's share meets the limit
// twice; the machine waits the schedule (1 s, then 2 s here: the local
// runtime waits Wait states in real time, so the world's base is 1 s) in
// its Wait state, the human hears of it once, and the third try succeeds
// once the window has freed a slot.
func TestShareLimitWithoutRetryAfterWaitsTheSchedule(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	w.nc.SetShareRateLimit(2, 10*time.Minute)
	if err := w.nc.MkdirAll(root + "/other"); err != nil {
		t.Fatal(err)
	}
	for _, with := range []string{"anna", "richard"} { // the window is full
		env := w.exec.Invoke(context.Background(), sb.ToolCall{AgentID: agentID, Tool: "Nextcloud", Action: "share",
			Args: json.RawMessage(`{"path":"/other","shareWith":"` + with + `"}`)})
		if env.Status != "ok" {
			t.Fatalf("sharing /other with %s: %+v", with, env)
		}
	}
	// The fake Nextcloud's clock moves on as each refused share comes
	// back: 1 s (still inside the window), then past the window.
	limited := 0
	w.invoke.onAnswer(func(call sb.ToolCall, err error) {
		if call.Tool != "Nextcloud" || call.Action != "share" || sb.HTTPStatus(err) != 429 {
			return
		}
		if se := (*sb.Error)(nil); errors.As(err, &se) && se.RetryAfter != 0 {
			t.Errorf("the share's 429 carries a wait of %s; Nextcloud 34 sends none", se.RetryAfter)
		}
		if limited++; limited == 1 {
			w.clock.Add(time.Second)
		} else {
			w.clock.Add(10 * time.Minute)
		}
	})
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"with":"richard"}}`))
	d := w.wait(id)
	if d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution %s: %s", d.Status, aws.ToString(d.Cause))
	}
	x := w.history(id)
	if v := visits(x, "Share"); len(v) != 3 {
		t.Errorf("Share visited %d times, want 3 (two 429s, then success)", len(v))
	}
	if got := waitsOf(t, w, id); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("waited %v seconds, want [1 2], the schedule's first two waits", got)
	}
	if n := w.nc.Shares(); n != 3 {
		t.Errorf("%d shares, want 3 (two others and the delivery's)", n)
	}
	told := w.told.all()
	if len(told) != 1 || !strings.Contains(told[0], "waits for Nextcloud's share limit") || !strings.Contains(told[0], "/reports/q3.csv") ||
		!strings.Contains(told[0], "with richard") || !strings.Contains(told[0], "tried again in 1 s") {
		t.Errorf("human told %q, want one notice: what waits and for how long", told)
	}
	if msgs := w.rc.Messages(w.room); len(msgs) != 1 || !strings.Contains(msgs[0].Text, "https://cloud.example.org/f/") {
		t.Errorf("room got %+v, want the link posted", msgs)
	}
	for _, s := range x.Steps {
		t.Logf("timeline: %s %-16s %-6s attempts=%d %s", s.Entered.Format("15:04:05.000"), s.Name, s.Type, s.Attempts, s.Outcome)
	}
}

// The limit outlasts the schedule (1, 2, 4, 4 s here; 60, 120, 240, 240 s
// by default): the share fails for good, the machine catches it, and the
// human hears twice in all: once that it waits, once that it failed.
func TestShareLimitOutlastsTheSchedule(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	w.nc.SetShareRateLimit(1, 10*time.Minute) // the fake clock stands still: the window never frees
	if err := w.nc.MkdirAll(root + "/other"); err != nil {
		t.Fatal(err)
	}
	if env := w.exec.Invoke(context.Background(), sb.ToolCall{AgentID: agentID, Tool: "Nextcloud", Action: "share",
		Args: json.RawMessage(`{"path":"/other","shareWith":"anna"}`)}); env.Status != "ok" {
		t.Fatalf("sharing /other: %+v", env)
	}
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"with":"richard"}}`))
	d := w.wait(id)
	if d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "NotDelivered" {
		t.Fatalf("execution %s %s, want FAILED NotDelivered", d.Status, aws.ToString(d.Error))
	}
	if got := waitsOf(t, w, id); !slices.Equal(got, []int{1, 2, 4, 4}) {
		t.Errorf("waited %v seconds, want the whole schedule [1 2 4 4]", got)
	}
	share := visits(w.history(id), "Share")
	if len(share) != 5 || share[4].Attempts != 1 || share[4].Outcome != "failed" {
		t.Errorf("Share visits %+v, want 5, the last failed at once (no retries of a PermanentError)", share)
	}
	if n := w.nc.Calls("POST shares"); n != 6 {
		t.Errorf("POST shares %d times, want 6 (the other share, then one per try)", n)
	}
	told := w.told.all()
	if len(told) != 2 || !strings.Contains(told[0], "waits for Nextcloud's share limit") ||
		!strings.Contains(told[1], "failed at step share") || !strings.Contains(told[1], "after 4 waits of 11 s in all") ||
		!strings.Contains(told[1], "uploaded to /reports/q3.csv") || !strings.Contains(told[1], "not shared, not posted") {
		t.Errorf("human told %q, want the wait notice once, then the failure with what was done", told)
	}
	if jobs := w.jobs.all(); len(jobs) != 1 || len(told) == 2 && !strings.HasPrefix(jobs[0].Text, told[1]) {
		t.Errorf("agent follow-up %+v, want one with the failure's facts", jobs)
	}
	if msgs := w.rc.Messages(w.room); len(msgs) != 0 {
		t.Errorf("room got %+v, want nothing posted", msgs)
	}
}

// waitsOf reads the seconds each RateLimitWait waited from the raw history.
func waitsOf(t *testing.T, w *world, id string) []int {
	t.Helper()
	h, err := w.sfn.Client.GetExecutionHistory(context.Background(), &sfnapi.GetExecutionHistoryInput{ExecutionArn: aws.String(w.arn(id))})
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range h.Events {
		if d := e.StateEnteredEventDetails; d != nil && aws.ToString(d.Name) == "RateLimitWait" {
			var in struct{ Wait int }
			_ = json.Unmarshal([]byte(aws.ToString(d.Input)), &in)
			out = append(out, in.Wait)
		}
	}
	return out
}

// What one delivery costs (happy path: CSV → XLSX, upload, share to a
// user, post, follow-up), counted; docs/performance.md has the numbers.
func TestMeasureDelivery(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	rcBefore, auditBefore := len(w.rc.Requests()), func() int { w.audit.mu.Lock(); defer w.audit.mu.Unlock(); return w.audit.writes }()
	began := time.Now()
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","format":"xlsx","share":{"with":"richard"},"message":"Q3"}`))
	if d := w.wait(id); d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution %s", d.Status)
	}
	wall := time.Since(began)
	x := w.history(id)
	nc, co, rc := len(w.nc.Requests()), len(w.co.Requests()), len(w.rc.Requests())-rcBefore
	w.audit.mu.Lock()
	audits := w.audit.writes - auditBefore
	w.audit.mu.Unlock()
	w.kv.mu.Lock()
	markers := w.kv.writes
	w.kv.mu.Unlock()
	t.Logf("delivery: wall %v (local runtime), %d state transitions, %d Nextcloud, %d Collabora, %d Rocket.Chat requests, "+
		"%d marker writes + %d audit writes (state and audit tables)", wall.Round(time.Millisecond), x.Transitions, nc, co, rc, markers, audits)
	if x.Transitions != 8 || co != 1 || markers != 10 || audits != 6 {
		t.Errorf("transitions %d, Collabora %d, marker writes %d, audit writes %d; want 8, 1, 10, 6 (the numbers in docs/performance.md)",
			x.Transitions, co, markers, audits)
	}
}

// tokenOf reads the signed token of an approval link.
func tokenOf(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("token")
}

// A public link waits for a human: the execution stays in AwaitApproval
// until the approval is decided, by the link or by the Telegram button.
func TestPublicLinkWaitsForApproval(t *testing.T) {
	for _, by := range []string{"link", "button"} {
		t.Run(by, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.nc.SetPublicLinks(true)
			w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
			id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"publicLink":true},"message":"Q3 for everyone"}`))
			req := w.asked.request(t)
			if req.Approval.Tool != "Nextcloud" || req.Approval.Action != "share" || req.Approval.TaskToken == "" {
				t.Fatalf("approval %+v, want Nextcloud.share carrying the task token", req.Approval)
			}
			if d, _ := w.sfn.Client.DescribeExecution(context.Background(), &sfnapi.DescribeExecutionInput{ExecutionArn: aws.String(w.arn(id))}); d.Status != types.ExecutionStatusRunning || w.nc.Shares() != 0 {
				t.Fatalf("before the decision: %s with %d shares, want RUNNING and none", d.Status, w.nc.Shares())
			}
			var out approvals.Outcome
			var err error
			if by == "link" {
				out, err = w.approvals.DecideByLink(context.Background(), req.Approval.ID, "approve", tokenOf(t, req.ApproveURL))
			} else {
				out, err = w.approvals.DecideByCallback(context.Background(), approvals.CallbackData(approvals.Approve, req.Approval.ID), "4242", []string{"4242"})
			}
			if err != nil || out.Kind != approvals.KindApproved {
				t.Fatalf("decision: %+v %v, want approved", out, err)
			}
			if d := w.wait(id); d.Status != types.ExecutionStatusSucceeded {
				t.Fatalf("execution %s: %s", d.Status, aws.ToString(d.Cause))
			}
			msgs := w.rc.Messages(w.room)
			if w.nc.Shares() != 1 || len(msgs) != 1 || !strings.Contains(msgs[0].Text, "/s/") {
				t.Errorf("%d shares, room %+v; want one public link posted", w.nc.Shares(), msgs)
			}
			entries, _ := w.store.ByRoot(context.Background(), run.RootRunID)
			var approved bool
			for _, e := range entries {
				approved = approved || e.Tool == "Nextcloud" && e.Action == "share" && e.Decision == sb.DecisionApproved && e.ApprovalID == req.Approval.ID
			}
			if !approved {
				t.Errorf("no audit entry of the share run on approval %s", req.Approval.ID)
			}
			if jobs := w.jobs.all(); len(jobs) != 1 || !strings.Contains(jobs[0].Text, "finished") {
				t.Errorf("follow-ups %+v, want one: the delivery's", jobs)
			}
		})
	}
}

func TestPublicLinkDenied(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.nc.SetPublicLinks(true)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"publicLink":true}}`))
	req := w.asked.request(t)
	if out, err := w.approvals.DecideByLink(context.Background(), req.Approval.ID, "deny", tokenOf(t, req.DenyURL)); err != nil || out.Kind != approvals.KindDenied {
		t.Fatalf("deny: %+v %v", out, err)
	}
	if d := w.wait(id); d.Status != types.ExecutionStatusFailed {
		t.Fatalf("execution %s, want FAILED", d.Status)
	}
	told := w.told.all()
	if len(told) != 1 || !strings.Contains(told[0], "failed at step share") || !strings.Contains(told[0], "denied") ||
		!strings.Contains(told[0], "uploaded to /reports/q3.csv") || !strings.Contains(told[0], "not shared, not posted") {
		t.Errorf("human told %q, want: denied, uploaded, not shared", told)
	}
	if jobs := w.jobs.all(); len(jobs) != 1 {
		t.Errorf("follow-ups %+v, want exactly one (the delivery's, not a second from the approval)", jobs)
	}
	if w.nc.Shares() != 0 || len(w.rc.Messages(w.room)) != 0 {
		t.Errorf("%d shares, room %+v; want nothing shared or posted", w.nc.Shares(), w.rc.Messages(w.room))
	}
}

// The shared reports folder (outside the agent's own) takes a delivery
// when the agent has one; a locked report there gets a timestamped name.
func TestDeliverIntoTheSharedReportsFolder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	if err := w.nc.MkdirAll("/Switchboard/Berichte"); err != nil {
		t.Fatal(err)
	}
	w.nc.Lock("/Switchboard/Berichte/q3.csv")
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","folder":"shared-reports:","share":{"with":"richard"}}`))
	if d := w.wait(id); d.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("execution %s: %s", d.Status, aws.ToString(d.Cause))
	}
	var got []string
	for _, e := range w.nc.Tree("/Switchboard/Berichte") {
		if !e.Dir {
			got = append(got, e.Path)
		}
	}
	if len(got) != 1 || got[0] != "/Switchboard/Berichte/q3-20260501-213000.csv" {
		t.Errorf("shared reports folder holds %v, want the timestamped report", got)
	}
	if jobs := w.jobs.all(); len(jobs) != 1 || !strings.Contains(jobs[0].Text, "uploaded to shared-reports:/q3-20260501-213000.csv") {
		t.Errorf("follow-up %+v, want the shared path", jobs)
	}
}

// Nobody decides: the approvals-expire job expires the approval and fails
// the waiting delivery, which tells the human and the agent once.
func TestPublicLinkExpires(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.nc.SetPublicLinks(true)
	signer, _ := approvals.NewSigner([]byte("a-signing-key-of-at-least-32-bytes!!"))
	now := time.Now()
	svc, err := approvals.New(approvals.Options{Store: memstore.NewApprovals(), Signer: signer, Notifier: w.asked, Waker: w.jobs,
		Tokens: w.steps.Tokens.(approvals.TaskTokens), PublicBaseURL: "http://127.0.0.1:9", TTL: time.Hour,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	w.exec.SetStager(svc)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"publicLink":true}}`))
	w.asked.request(t)
	now = now.Add(2 * time.Hour)
	if n, err := svc.ExpireDue(context.Background()); n != 1 || err != nil {
		t.Fatalf("ExpireDue = %d, %v; want the one approval expired", n, err)
	}
	if d := w.wait(id); d.Status != types.ExecutionStatusFailed {
		t.Fatalf("execution %s, want FAILED", d.Status)
	}
	told := w.told.all()
	if len(told) != 1 || !strings.Contains(told[0], "nobody approved") || !strings.Contains(told[0], "not shared") {
		t.Errorf("human told %q, want: nobody approved in time, not shared", told)
	}
	if jobs := w.jobs.all(); len(jobs) != 1 || w.nc.Shares() != 0 {
		t.Errorf("follow-ups %+v and %d shares; want one follow-up and no share", jobs, w.nc.Shares())
	}
}

// A link password reaches Nextcloud but never the execution's input,
// which anyone who may read the machine's history can see.
func TestLinkPasswordStaysOutOfTheExecution(t *testing.T) {
	w := newWorld(t)
	w.nc.SetPublicLinks(true)
	w.nc.SetPasswordEnforced(true) // a link without the password would be refused (403)
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	const pw = "Kr4ken-Tide-77"
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"publicLink":true,"password":"`+pw+`"}}`))
	req := w.asked.request(t)
	if _, err := w.approvals.DecideByLink(context.Background(), req.Approval.ID, "approve", tokenOf(t, req.ApproveURL)); err != nil {
		t.Fatal(err)
	}
	d := w.wait(id)
	if d.Status != types.ExecutionStatusSucceeded || w.nc.Shares() != 1 {
		t.Fatalf("execution %s (%s), %d shares; want one password-protected link", d.Status, aws.ToString(d.Cause), w.nc.Shares())
	}
	if in := aws.ToString(d.Input); strings.Contains(in, pw) || !strings.Contains(in, `"passwordKept":true`) {
		t.Errorf("execution input %s: want the password kept outside it", in)
	}
}

// A delivery waiting for a human's approval is recorded under its run's
// chain; stopping the chain stops the execution (ABORTED, the link never
// made), and the stop says it stopped one.
func TestStoppedChainStopsItsWaitingDelivery(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.nc.SetPublicLinks(true)
	store := memstore.New()
	ctl := &control.Control{KV: store.KV(), Markers: store, Receipts: store, Audit: store,
		Executions: w.steps.Tokens.(*sfntoken.Client)}
	w.tool.Chains = ctl
	w.put("personal:q3.csv", "region,revenue\nnorth,10\n")
	id := started(t, w.deliver(`{"localPath":"personal:q3.csv","share":{"publicLink":true},"message":"Q3 for everyone"}`))
	w.asked.request(t) // it waits for the human now

	rep, err := ctl.Stop(context.Background(), run.RootRunID, "telegram:4242")
	if err != nil || rep.Executions != 1 {
		t.Fatalf("Stop = %+v, %v; want the waiting delivery stopped", rep, err)
	}
	if d := w.wait(id); d.Status != types.ExecutionStatusAborted {
		t.Errorf("execution %s after the stop, want ABORTED", d.Status)
	}
	if w.nc.Shares() != 0 || len(w.rc.Messages(w.room)) != 0 {
		t.Errorf("%d shares, room %+v; want no link made or posted", w.nc.Shares(), w.rc.Messages(w.room))
	}
}
