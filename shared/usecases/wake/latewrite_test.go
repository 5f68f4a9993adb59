package wake_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// DynamoDB hung: the webhook gave up (503) before its claim write came back,
// and the write landed afterwards — a live claim with no job behind it.
// Rocket.Chat's retry of the delivery must not wait out the whole claim
// window (minutes): once the claim has had no run for a few seconds, the
// retry takes it over and queues the wake, once.
func TestWebhookRetryTakesOverAClaimWhoseDeliveryGaveUp(t *testing.T) {
	e := newPollEnv(t)
	jobs := &dispatcher{}
	claims := &sb.WakeClaims{KV: e.store.KV(), Now: e.clk.Now}
	log, _ := newLog()
	e.rc.SetWebhookToken(hookToken)
	recv := wake.NewReceiver([]string{hookToken}, []wake.WebhookAgent{{ID: "hermes", UserID: e.ids["agent-hermes"],
		Username: "agent-hermes", AgentUsernames: []string{"agent-hermes", "agent-atlas"}, MentionOnly: true}}, claims, jobs, log)
	deliver := func(m rcfake.Message) int {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/hooks/rocketchat", strings.NewReader(string(e.rc.OutgoingWebhookPayload(m))))
		httpapi.RocketChatWebhook(recv).ServeHTTP(rec, req)
		return rec.Code
	}
	m := e.post(t, "richard", e.general, "@agent-hermes bist du da?", rcfake.PostOptions{})
	key := wake.ClaimKey("hermes", m.ID)
	// The first delivery's claim, written after it had already answered 503.
	if _, ok, err := claims.Take(t.Context(), key, "delivery-that-gave-up", e.clk.Now().Add(wake.DefaultClaimFor)); err != nil || !ok {
		t.Fatalf("the late write: %v %v", ok, err)
	}
	// A retry right away could still meet a job about to begin: it waits.
	e.clk.Add(2 * time.Second)
	if code := deliver(m); code != http.StatusOK || jobs.Len() != 0 {
		t.Fatalf("retry after 2 s: %d, %d jobs; want 200 and none yet", code, jobs.Len())
	}
	// Seconds later still no run began: the retry takes the claim over.
	e.clk.Add(sb.DefaultOrphanAfter)
	if code := deliver(m); code != http.StatusOK || jobs.Len() != 1 {
		t.Fatalf("retry after %v: %d, %d jobs; want 200 and the wake queued once", 2*time.Second+sb.DefaultOrphanAfter, code, jobs.Len())
	}
	job := jobs.All()[0]
	if job.Claim == nil || job.Claim.Owner == "delivery-that-gave-up" {
		t.Fatalf("job claim %+v, want the retry's own owner", job.Claim)
	}
	// Its run begins; a further retry queues nothing, and the gave-up
	// delivery's owner could not begin a run any more.
	if _, ok, err := claims.Begin(t.Context(), key, job.Claim.Owner, e.clk.Now().Add(time.Hour)); err != nil || !ok {
		t.Fatalf("Begin of the queued job: %v %v", ok, err)
	}
	e.clk.Add(time.Minute)
	if deliver(m); jobs.Len() != 1 {
		t.Errorf("%d jobs after a further retry, want 1", jobs.Len())
	}
	if _, ok, _ := claims.Begin(t.Context(), key, "delivery-that-gave-up", e.clk.Now().Add(time.Hour)); ok {
		t.Error("the delivery that gave up could still begin a run")
	}
}
