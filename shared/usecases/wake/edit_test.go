package wake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// syncDispatcher runs each job in the worker before Dispatch returns.
type syncDispatcher struct{ w *wake.Worker }

func (d syncDispatcher) Dispatch(ctx context.Context, j sb.WakeJob) error { return d.w.Handle(ctx, j) }

// An edit is an edit: a delivery that claims an edit with new text wakes
// nobody unless the message Rocket.Chat returns has an editedAt; each real
// edit wakes once, however often it is delivered.
func TestWebhookEditWakesOncePerRealEdit(t *testing.T) {
	e := newPrepEnv(t)
	e.rc.SetWebhookToken(hookToken)
	wakes := &sb.WakeClaims{KV: e.store.KV(), Now: e.clk.Now}
	e.prep.Wakes = wakes
	var runs atomic.Int64
	var texts []string
	w := &wake.Worker{
		Leases: e.store, Claims: wakes,
		Preparer: prepareFunc(func(ctx context.Context, j sb.WakeJob) (sb.WakeJob, bool, error) {
			return e.prep.Prepare(ctx, j, e.hermesChat, e.hermes.Rules, 100)
		}),
		Runner: runFunc(func(_ context.Context, j sb.WakeJob) (agentrun.Result, error) {
			runs.Add(1)
			texts = append(texts, j.Text)
			return answered("hermes", ""), nil
		}),
		Replies: replyFunc(func(context.Context, sb.WakeJob, sb.RunContext, string) error { return nil }),
		RunFor:  time.Minute, WaitFor: time.Second, Now: e.clk.Now,
	}
	log, _ := newLog()
	recv := wake.NewReceiver([]string{hookToken}, []wake.WebhookAgent{{ID: "hermes", UserID: e.ids["agent-hermes"],
		Username: "agent-hermes", AgentUsernames: []string{"agent-hermes", "agent-atlas"}, MentionOnly: true}}, wakes, syncDispatcher{w}, log)
	srv := httptest.NewServer(httpapi.RocketChatWebhook(recv))
	t.Cleanup(srv.Close)
	deliver := func(body []byte) {
		t.Helper()
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("webhook answered %d", resp.StatusCode)
		}
	}
	forged := func(m rcfake.Message, text string) []byte {
		var p map[string]any
		if err := json.Unmarshal(e.rc.OutgoingWebhookPayload(m), &p); err != nil {
			t.Fatal(err)
		}
		p["isEdited"], p["text"] = true, text
		b, _ := json.Marshal(p)
		return b
	}
	wantRuns := func(n int64, what string) {
		t.Helper()
		if got := runs.Load(); got != n {
			t.Fatalf("%s: %d runs, want %d", what, got, n)
		}
	}

	m := e.post(t, "richard", e.general, "@agent-hermes erste Fassung", rcfake.PostOptions{})
	deliver(e.rc.OutgoingWebhookPayload(m))
	wantRuns(1, "the message")

	// Forged edits of a message nobody edited: no run, however many.
	for _, text := range []string{"@agent-hermes neu 1", "@agent-hermes neu 2", "@agent-hermes neu 2"} {
		deliver(forged(m, text))
	}
	wantRuns(1, "forged edits")

	// A real edit, delivered and retried: one run, on the edited text.
	e.clk.Add(time.Minute)
	if err := e.rc.Edit(m.ID, "@agent-hermes zweite Fassung"); err != nil {
		t.Fatal(err)
	}
	edited := e.rc.OutgoingWebhookPayload(m)
	deliver(edited)
	deliver(edited)
	wantRuns(2, "a real edit and its retry")
	if !bytes.Contains([]byte(texts[1]), []byte("zweite Fassung")) {
		t.Errorf("the edit's run saw %q, want the edited text", texts[1])
	}
	// A forged edit after it (new text, same editedAt): nothing.
	deliver(forged(m, "@agent-hermes gefälscht"))
	wantRuns(2, "a forged edit after a real one")

	// A second real edit wakes once more.
	e.clk.Add(time.Minute)
	if err := e.rc.Edit(m.ID, "@agent-hermes dritte Fassung"); err != nil {
		t.Fatal(err)
	}
	deliver(e.rc.OutgoingWebhookPayload(m))
	deliver(e.rc.OutgoingWebhookPayload(m))
	wantRuns(3, "a second real edit")
}
