package wake_test

import (
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// A mention in a room that has used up its hour costs the receiver two
// store calls (the count read, the once-only log marker), no claim, no job
// and no Rocket.Chat call; the log says once that the agent is silent there.
func TestReceiverTurnsAwayAMentionOverTheHourlyLimit(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, nil, nil)
	var calls atomic.Int64
	log, logs := newLog()
	hermes := hermesHook(e.ids)
	hermes.MaxWakesPerHour = 3
	recv := wake.NewReceiver([]string{hookToken}, []wake.WebhookAgent{hermes},
		&sb.WakeClaims{KV: countKV{KV: e.store.KV(), n: &calls}}, e.disp, log)
	recv.Counters = countCounters{Counters: e.store, n: &calls}
	recv.Markers = countClaims{Claims: e.store, n: &calls}
	srv := httptest.NewServer(httpapi.RocketChatWebhook(recv))
	t.Cleanup(srv.Close)
	e.url = srv.URL

	// The worker counts the wakes that happen; three of this hour's (and,
	// should the test cross an hour, the next one's) have happened.
	for _, at := range []time.Time{time.Now(), time.Now().Add(time.Hour)} {
		for range 3 {
			if _, _, err := e.store.Incr(t.Context(), wake.ThrottleKey("hermes", e.general, at), 3, at.Add(2*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
	}
	rcBefore := len(e.rc.Requests())
	const n = 50
	for i := range n {
		m := e.post(t, "richard", e.general, "@agent-hermes noch eine Frage", rcfake.PostOptions{})
		before := calls.Load()
		checkOK(t, e.deliver(t, e.payload(t, m, nil)))
		if got := calls.Load() - before; got > 2 {
			t.Fatalf("mention %d over the limit cost %d store calls, want at most 2", i+1, got)
		}
		if c, found, err := (&sb.WakeClaims{KV: e.store.KV()}).Get(t.Context(), wake.ClaimKey("hermes", m.ID)); err != nil || found {
			t.Fatalf("mention %d over the limit was claimed: %+v (%v)", i+1, c, err)
		}
	}
	if e.disp.Len() != 0 {
		t.Errorf("%d jobs for mentions over the limit, want none", e.disp.Len())
	}
	if got := len(e.rc.Requests()) - rcBefore; got != 0 {
		t.Errorf("%d Rocket.Chat requests for %d mentions over the limit, want none", got, n)
	}
	if got := logs.Count("wake throttle reached; silent in this room until the next hour"); got != 1 {
		t.Errorf("the throttle was logged %d times, want once", got)
	}

	// Another room, and the same room for another agent, are not affected.
	other := e.post(t, "richard", e.finanz, "@agent-hermes hallo", rcfake.PostOptions{})
	checkOK(t, e.deliver(t, e.payload(t, other, nil)))
	if e.disp.Len() != 1 {
		t.Errorf("%d jobs for a mention in a room with its hour left, want 1", e.disp.Len())
	}
}

// Without a limit (or without the counters wired) the receiver never reads
// a count: every mention is claimed and queued as before.
func TestReceiverWithoutALimitReadsNoCount(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, nil, nil)
	var peeks atomic.Int64
	log, _ := newLog()
	recv := wake.NewReceiver([]string{hookToken}, []wake.WebhookAgent{hermesHook(e.ids)}, &sb.WakeClaims{KV: e.store.KV()}, e.disp, log)
	recv.Counters = countCounters{Counters: e.store, n: &peeks}
	recv.Markers = e.store
	srv := httptest.NewServer(httpapi.RocketChatWebhook(recv))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	m := e.post(t, "richard", e.general, "@agent-hermes hallo", rcfake.PostOptions{})
	checkOK(t, e.deliver(t, e.payload(t, m, nil)))
	if peeks.Load() != 0 || e.disp.Len() != 1 {
		t.Errorf("%d count reads and %d jobs, want 0 and 1", peeks.Load(), e.disp.Len())
	}
}
