package tginbound_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// getUpdatesParams returns the parameters of every getUpdates request.
func getUpdatesParams(w *world) []map[string]string {
	var out []map[string]string
	for _, r := range w.tg.Requests() {
		if r.Method == "getUpdates" {
			out = append(out, r.Params)
		}
	}
	return out
}

func tick(t *testing.T, w *world) string {
	t.Helper()
	out, err := w.poller.Tick(context.Background())
	if err != nil {
		t.Fatalf("Tick: %v", err)
	}
	return out
}

func TestPollerHandlesPendingAndStoresOffset(t *testing.T) {
	w := newWorld(t)
	msg := w.buttonMessage(t, "1111", "approve:42")
	u1 := w.tg.InjectMessage(ann, annUser, "/atlas first")
	w.tg.InjectCallback(annUser, msg, "approve:42")
	w.tg.InjectMessage(team, bobUser, "third")
	u4 := w.tg.InjectMessage(bob, bobUser, "not allowed") // confirmed, ignored
	last := u4.UpdateID + 1

	if out := tick(t, w); out != "4 updates handled" {
		t.Errorf("Tick = %q", out)
	}
	jobs := w.disp.All()
	if len(jobs) != 2 || jobs[0].AgentID != "atlas" || jobs[1].AgentID != "hermes" ||
		jobs[0].ReplyTo.TelegramChatID != "1111" || jobs[1].ReplyTo.TelegramChatID != "-1001234567890" {
		t.Fatalf("jobs = %+v", jobs)
	}
	if _, text := framed(t, jobs[0]); text != "[10:00] ann: first" {
		t.Errorf("framed = %q", text)
	}
	if got := w.dec.all(); len(got) != 1 || got[0] != (decision{"approve:42", "1111"}) {
		t.Errorf("decisions = %+v", got)
	}
	if as := w.tg.Answers(); len(as) != 1 || as[0].Text != "approved by ann" {
		t.Errorf("answers = %+v", as)
	}
	if v, found := w.offset(t); !found || v != strconv.FormatInt(last, 10) {
		t.Fatalf("offset = %q %v, want %d (last update_id + 1)", v, found, last)
	}
	// The first poll had no offset and asked for messages and callbacks only.
	ps := getUpdatesParams(w)
	if len(ps) != 1 || ps[0]["offset"] != "" || ps[0]["timeout"] != "" {
		t.Errorf("first getUpdates params = %+v (no offset, short poll)", ps)
	}
	if a := ps[0]["allowed_updates"]; !strings.Contains(a, `"message"`) || !strings.Contains(a, `"callback_query"`) || strings.Contains(a, "edited") {
		t.Errorf("allowed_updates = %s", a)
	}
	_ = u1

	// The next tick confirms the old ones and gets only newer updates.
	u5 := w.tg.InjectMessage(ann, annUser, "/iris newer")
	if out := tick(t, w); out != "1 updates handled" {
		t.Errorf("second Tick = %q", out)
	}
	ps = getUpdatesParams(w)
	if len(ps) != 2 || ps[1]["offset"] != strconv.FormatInt(u5.UpdateID, 10) {
		t.Errorf("second getUpdates params = %+v, want offset %d", ps, u5.UpdateID)
	}
	jobs = w.disp.All()
	if len(jobs) != 3 || jobs[2].AgentID != "iris" {
		t.Fatalf("jobs = %+v", jobs)
	}
	if v, _ := w.offset(t); v != strconv.FormatInt(u5.UpdateID+1, 10) {
		t.Errorf("offset = %q, want %d", v, u5.UpdateID+1)
	}

	// A quiet tick handles nothing and keeps the offset; Telegram has
	// forgotten the confirmed updates.
	if out := tick(t, w); out != "0 updates handled" {
		t.Errorf("quiet Tick = %q", out)
	}
	if v, _ := w.offset(t); v != strconv.FormatInt(u5.UpdateID+1, 10) {
		t.Errorf("offset after a quiet tick = %q", v)
	}
	if p := w.tg.Pending(); len(p) != 0 {
		t.Errorf("pending at Telegram = %+v", p)
	}
	if n := len(w.disp.All()); n != 3 || len(w.dec.all()) != 1 {
		t.Errorf("jobs %d, decisions %d", n, len(w.dec.all()))
	}
}

func TestPollerResumesFromStoredOffset(t *testing.T) {
	// Another poller instance (the next Lambda invocation) reads the offset
	// from the store, not from memory.
	w := newWorld(t)
	w.tg.InjectMessage(ann, annUser, "one")
	tick(t, w)
	u2 := w.tg.InjectMessage(ann, annUser, "two")
	fresh := *w.poller
	if out, err := fresh.Tick(context.Background()); err != nil || out != "1 updates handled" {
		t.Fatalf("Tick = %q, %v", out, err)
	}
	ps := getUpdatesParams(w)
	if ps[len(ps)-1]["offset"] != strconv.FormatInt(u2.UpdateID, 10) {
		t.Errorf("params = %+v", ps)
	}
	if n := len(w.disp.All()); n != 2 {
		t.Errorf("%d jobs", n)
	}
}

func TestPollerSkipsUpdatesTheWebhookAlreadyHandled(t *testing.T) {
	// An update delivered to the webhook first (then the webhook removed)
	// is not handled again by the poll: the claim is shared.
	w := newWorld(t)
	w.setWebhook(t, secret)
	u := w.tg.InjectMessage(ann, annUser, "hi")
	if _, err := w.tg.PushUpdate(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if err := w.client.DeleteWebhook(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	w.tg.InjectUpdate(u) // Telegram sends it again
	w.tickHandlesOnce(t, u)
}

func TestPollerWebhookSetIsNotAnError(t *testing.T) {
	w := newWorld(t)
	w.setWebhook(t, secret)
	w.tg.InjectMessage(ann, annUser, "hi")
	out, err := w.poller.Tick(context.Background())
	if err != nil {
		t.Fatalf("Tick error = %v", err)
	}
	if !strings.HasPrefix(out, "a webhook is set") {
		t.Errorf("Tick = %q", out)
	}
	if _, found := w.offset(t); found {
		t.Errorf("offset written while a webhook is set")
	}
	if n := w.disp.Attempts(); n != 0 {
		t.Errorf("%d dispatches", n)
	}
	if n := len(w.tg.Pending()); n != 1 {
		t.Errorf("pending = %d; the poll must not take the webhook's updates", n)
	}
}

func TestPollerHandlingFailureKeepsOffsetAtFailedUpdate(t *testing.T) {
	w := newWorld(t)
	u1 := w.tg.InjectMessage(ann, annUser, "one")
	u2 := w.tg.InjectMessage(ann, annUser, "two")
	u3 := w.tg.InjectMessage(ann, annUser, "three")
	w.disp.FailNext(nil, unavailable()) // one passes, two fails

	// The job records the failure (its outcome must not hide it).
	if out, err := w.poller.Tick(context.Background()); out != "1 updates handled" || err == nil {
		t.Errorf("Tick = %q, %v; want 1 handled and the failure as an error", out, err)
	}
	if v, _ := w.offset(t); v != strconv.FormatInt(u2.UpdateID, 10) {
		t.Fatalf("offset = %q, want %d (the failed update)", v, u2.UpdateID)
	}
	if n := w.disp.Attempts(); n != 2 {
		t.Errorf("%d dispatch attempts: the tick must stop at the failure", n)
	}

	if out := tick(t, w); out != "2 updates handled" {
		t.Errorf("second Tick = %q", out)
	}
	var texts []string
	for _, j := range w.disp.All() {
		_, text := framed(t, j)
		texts = append(texts, text)
	}
	if strings.Join(texts, "|") != "[10:00] ann: one|[10:00] ann: two|[10:00] ann: three" {
		t.Errorf("handled = %q", texts)
	}
	if v, _ := w.offset(t); v != strconv.FormatInt(u3.UpdateID+1, 10) {
		t.Errorf("offset = %q, want %d", v, u3.UpdateID+1)
	}
	_ = u1
}

func TestPollerFailureOnFirstUpdateWritesNoOffset(t *testing.T) {
	w := newWorld(t)
	u1 := w.tg.InjectMessage(ann, annUser, "one")
	w.tg.InjectMessage(ann, annUser, "two")
	w.disp.FailNext(unavailable())
	if out, err := w.poller.Tick(context.Background()); out != "0 updates handled" || err == nil {
		t.Errorf("Tick = %q, %v; want 0 handled and the failure as an error", out, err)
	}
	if _, found := w.offset(t); found {
		t.Errorf("offset written although nothing was handled")
	}
	if n := len(w.tg.Pending()); n != 2 {
		t.Errorf("pending = %d", n)
	}
	if out := tick(t, w); out != "2 updates handled" {
		t.Errorf("second Tick = %q", out)
	}
	jobs := w.disp.All()
	if len(jobs) != 2 {
		t.Fatalf("jobs = %+v", jobs)
	}
	if _, text := framed(t, jobs[0]); text != "[10:00] ann: one" {
		t.Errorf("first job = %q", text)
	}
	_ = u1
}

func TestPollerPermanentFailureMovesOn(t *testing.T) {
	// A failure that is not EUNAVAILABLE is logged and the update is
	// confirmed: it would fail again.
	w := newWorld(t)
	w.tg.InjectMessage(ann, annUser, "one")
	u2 := w.tg.InjectMessage(ann, annUser, "two")
	w.disp.FailNext(sb.E("test.dispatch", sb.EINVALID, "bad job"))
	if out := tick(t, w); out != "2 updates handled" {
		t.Errorf("Tick = %q", out)
	}
	if v, _ := w.offset(t); v != strconv.FormatInt(u2.UpdateID+1, 10) {
		t.Errorf("offset = %q", v)
	}
	if n := len(w.disp.All()); n != 1 {
		t.Errorf("%d jobs", n)
	}
}

func TestPollerTelegramDownIsAnError(t *testing.T) {
	w := newWorld(t)
	w.tg.InjectMessage(ann, annUser, "hi")
	w.tg.SetDown(true)
	out, err := w.poller.Tick(context.Background())
	if err == nil || sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Fatalf("Tick = %q, %v; want EUNAVAILABLE", out, err)
	}
	if _, found := w.offset(t); found {
		t.Errorf("offset written")
	}
	w.tg.SetDown(false)
	if out := tick(t, w); out != "1 updates handled" {
		t.Errorf("Tick after the outage = %q", out)
	}
}

func TestPollerOtherTelegramErrorIsAnError(t *testing.T) {
	w := newWorld(t)
	w.tg.FailNext("getUpdates", http.StatusUnauthorized, 0)
	if _, err := w.poller.Tick(context.Background()); sb.ErrorCode(err) != sb.EUNAUTHORIZED {
		t.Errorf("Tick error = %v, want EUNAUTHORIZED", err)
	}
}

func TestPollerOffsetWrittenConcurrentlyIsKept(t *testing.T) {
	// Two ticks that overlap: the one that writes second finds the offset
	// changed (PutIf ECONFLICT) and does not overwrite it, and no error.
	w := newWorld(t)
	u := w.tg.InjectMessage(ann, annUser, "hi")
	w.poller.KV = racingKV{KV: w.store.KV(), w: w, value: strconv.FormatInt(u.UpdateID+5, 10)}
	if out := tick(t, w); out != "1 updates handled" {
		t.Errorf("Tick = %q", out)
	}
	if v, _ := w.offset(t); v != strconv.FormatInt(u.UpdateID+5, 10) {
		t.Errorf("offset = %q; the other writer's value was overwritten", v)
	}
}

// racingKV writes value just before the poller's PutIf, as another tick
// would.
type racingKV struct {
	sb.KV
	w     *world
	value string
}

func (r racingKV) PutIf(ctx context.Context, key, old, value string, expires time.Time) error {
	if err := r.KV.Put(ctx, key, r.value, time.Time{}); err != nil {
		return err
	}
	return r.KV.PutIf(ctx, key, old, value, expires)
}

func TestPollerKVFailureIsAnError(t *testing.T) {
	w := newWorld(t)
	w.poller.KV = brokenKV{}
	w.tg.InjectMessage(ann, annUser, "hi")
	if _, err := w.poller.Tick(context.Background()); sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Errorf("Tick error = %v", err)
	}
	if n := w.disp.Attempts(); n != 0 {
		t.Errorf("%d dispatches without an offset", n)
	}
	if n := w.tg.Calls("getUpdates"); n != 0 {
		t.Errorf("getUpdates called %d times without an offset", n)
	}
}

type brokenKV struct{ sb.KV }

func (brokenKV) Get(context.Context, string) (string, bool, error) {
	return "", false, sb.E("kv.get", sb.EUNAVAILABLE, "store throttled")
}

func TestPollerOffsetWriteFailureIsAnErrorAndNothingRunsTwice(t *testing.T) {
	w := newWorld(t)
	u := w.tg.InjectMessage(ann, annUser, "hi")
	w.poller.KV = putFailsKV{w.store.KV()}
	if _, err := w.poller.Tick(context.Background()); sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Fatalf("Tick error = %v, want EUNAVAILABLE", err)
	}
	// The next tick sees the update again; the claim keeps it from waking
	// the agent twice.
	w.poller.KV = w.store.KV()
	w.tickHandlesOnce(t, u)
}

type putFailsKV struct{ sb.KV }

func (putFailsKV) PutIf(context.Context, string, string, string, time.Time) error {
	return sb.E("kv.putIf", sb.EUNAVAILABLE, "store throttled")
}

// tickHandlesOnce ticks and checks that u was handled on this tick, that
// the agent was woken once in all, and that the offset moved past u.
func (w *world) tickHandlesOnce(t *testing.T, u tgfake.Update) {
	t.Helper()
	if out := tick(t, w); out != "1 updates handled" {
		t.Errorf("Tick = %q", out)
	}
	if n := w.disp.Attempts(); n != 1 {
		t.Errorf("%d dispatches, want 1", n)
	}
	if v, _ := w.offset(t); v != strconv.FormatInt(u.UpdateID+1, 10) {
		t.Errorf("offset = %q", v)
	}
}
