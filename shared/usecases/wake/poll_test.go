package wake_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// pollEnv is the rocketchat-poll job against rcfake (Rocket.Chat 8.x as
// measured on Rocket.Chat 8.7) with state in memstore, all on one settable clock.
type pollEnv struct {
	rc                      *rcfake.Server
	clk                     *clock
	ids, tokens             map[string]string
	general, finanz, dmRich string
	store                   *memstore.Store
	storeCalls              atomic.Int64
	disp                    *dispatcher
	logs                    *logs
	poller                  *wake.Poller
	hermes, atlas           wake.PollAgent
	hermesChat, atlasChat   *rocketchat.Client
}

func newPollEnv(t *testing.T) *pollEnv {
	t.Helper()
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	clk := newClock(t0)
	rc.SetClock(clk.Now)
	e := &pollEnv{rc: rc, clk: clk, ids: map[string]string{}, tokens: map[string]string{},
		store: &memstore.Store{Now: clk.Now}, disp: &dispatcher{}}
	for _, u := range []string{"richard", "agent-hermes", "agent-atlas", "ci-bot", "neu"} {
		e.ids[u], e.tokens[u] = rc.AddUser(u)
	}
	e.general = rc.AddChannel("general", "richard", "agent-hermes", "agent-atlas", "ci-bot")
	e.finanz = rc.AddGroup("finanz-team", "richard", "agent-hermes", "agent-atlas")
	e.dmRich = rc.AddDM("richard", "agent-hermes")
	e.hermesChat = e.client(t, "agent-hermes")
	e.atlasChat = e.client(t, "agent-atlas")
	e.hermes = wake.PollAgent{ID: "hermes", Chat: e.hermesChat, MaxMessages: 20, Lookback: 5 * time.Minute, MaxWakesPerHour: 12,
		Rules: wake.Rules{Username: "agent-hermes", UserID: e.ids["agent-hermes"],
			AgentUsernames: []string{"agent-hermes", "agent-atlas"}, MentionOnly: true}}
	e.atlas = wake.PollAgent{ID: "atlas", Chat: e.atlasChat, MaxMessages: 20, Lookback: 5 * time.Minute, MaxWakesPerHour: 12,
		Rules: wake.Rules{Username: "agent-atlas", UserID: e.ids["agent-atlas"],
			AgentUsernames: []string{"agent-hermes", "agent-atlas"}, MentionOnly: true}}
	e.poller = e.newPoller()
	e.disp.Complete = finishClaims(e.wakes())
	return e
}

// wakes is the wake claims on the env's store (uncounted).
func (e *pollEnv) wakes() *sb.WakeClaims { return &sb.WakeClaims{KV: e.store.KV(), Now: e.clk.Now} }

func (e *pollEnv) client(t *testing.T, user string) *rocketchat.Client {
	t.Helper()
	c, err := rocketchat.New(e.rc.URL, e.ids[user], e.tokens[user], e.rc.Client())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newPoller is a fresh Poller on the same store: a Lambda cold start.
func (e *pollEnv) newPoller() *wake.Poller {
	log, logs := newLog()
	e.logs = logs
	return &wake.Poller{
		KV:       countKV{KV: e.store.KV(), n: &e.storeCalls},
		Counters: countCounters{Counters: e.store, n: &e.storeCalls},
		Claims:   countClaims{Claims: e.store, n: &e.storeCalls},
		Wakes:    &sb.WakeClaims{KV: countKV{KV: e.store.KV(), n: &e.storeCalls}, Now: e.clk.Now},
		Dispatch: e.disp, Log: log, Loc: time.UTC, Now: e.clk.Now,
	}
}

// post injects a message one second after the previous event.
func (e *pollEnv) post(t *testing.T, as, rid, text string, opts rcfake.PostOptions) rcfake.Message {
	t.Helper()
	e.clk.Add(time.Second)
	return e.rc.MustPost(t, as, rid, text, opts)
}

// tick runs the poll for hermes ten seconds after the last event and fails
// the test on an error.
func (e *pollEnv) tick(t *testing.T) wake.PollStats {
	t.Helper()
	e.clk.Add(10 * time.Second)
	st, err := e.poller.Tick(context.Background(), []wake.PollAgent{e.hermes})
	if err != nil {
		t.Fatalf("Tick: %v", err)
	}
	return st
}

// since returns the requests after the first n.
func (e *pollEnv) since(n int) []rcfake.Request { return e.rc.Requests()[n:] }

func routes(reqs []rcfake.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Route)
	}
	return out
}

// readRoom is the room a subscriptions.read request marked read.
func readRoom(t *testing.T, r rcfake.Request) string {
	t.Helper()
	var body struct {
		RID    string `json:"rid"`
		RoomID string `json:"roomId"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("subscriptions.read body %q: %v", r.Body, err)
	}
	return body.RID + body.RoomID
}

// historyOldest is the oldest parameter of the last history request for rid.
func (e *pollEnv) historyOldest(t *testing.T, rid string) string {
	t.Helper()
	reqs := e.rc.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if strings.HasSuffix(reqs[i].Route, ".history") && reqs[i].Query.Get("roomId") == rid {
			return reqs[i].Query.Get("oldest")
		}
	}
	t.Fatalf("no history request for %s", rid)
	return ""
}

func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// sub is hermes' subscription to rid.
func (e *pollEnv) sub(t *testing.T, rid string) rcfake.Subscription {
	t.Helper()
	s, ok := e.rc.Subscription("agent-hermes", rid)
	if !ok {
		t.Fatalf("hermes has no subscription to %s", rid)
	}
	return s
}

// checkJob asserts a poll job: who, where, which messages, and that each
// message is a line of the framed wake text.
func checkJob(t *testing.T, j sb.WakeJob, agent string, reply wake.ReplyTo, msgs ...rcfake.Message) {
	t.Helper()
	if j.AgentID != agent || j.Source != "rocketchat-poll" || j.Pending != nil {
		t.Errorf("job agent %q source %q pending %+v; want %s, rocketchat-poll, none", j.AgentID, j.Source, j.Pending, agent)
	}
	if j.ReplyTo == nil || withoutType(*j.ReplyTo, reply) != reply {
		t.Errorf("ReplyTo %+v, want %+v", j.ReplyTo, reply)
	}
	var ids []string
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(j.MessageIDs, ids) {
		t.Errorf("MessageIDs %v, want %v", j.MessageIDs, ids)
	}
	head, _, body := splitWake(t, j.Text)
	if !strings.Contains(head, "roomId: "+reply.RoomID) {
		t.Errorf("wake head %q does not name room %s", head, reply.RoomID)
	}
	lines := strings.Split(body, "\n")
	for _, m := range msgs {
		want := "[" + m.At.UTC().Format("15:04") + "] @" + m.Username + " (messageId: " + m.ID + "): " + m.Text
		if !slices.Contains(lines, want) {
			t.Errorf("wake body lacks %q:\n%s", want, body)
		}
	}
}

// The seed's six live expectations.
func TestPollSeedExpectations(t *testing.T) {
	e := newPollEnv(t)
	if st := e.tick(t); st.Wakes != 0 || e.disp.Len() != 0 {
		t.Fatalf("a quiet tick woke: %+v", st)
	}
	e.post(t, "richard", e.general, "guten Morgen zusammen", rcfake.PostOptions{})
	if st := e.tick(t); st.Wakes != 0 || e.disp.Len() != 0 {
		t.Fatalf("a message without mention woke: %+v %+v", st, e.disp.All())
	}
	m := e.post(t, "richard", e.general, "@agent-hermes kannst du die Zahlen prüfen?", rcfake.PostOptions{})
	e.tick(t)
	if e.disp.Len() != 1 {
		t.Fatalf("a mention: %d jobs, want 1", e.disp.Len())
	}
	checkJob(t, e.disp.All()[0], "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general"}, m)
	dm := e.post(t, "richard", e.dmRich, "kurze Frage ohne Erwähnung", rcfake.PostOptions{})
	e.tick(t)
	if e.disp.Len() != 2 {
		t.Fatalf("a DM: %d jobs, want 2", e.disp.Len())
	}
	checkJob(t, e.disp.All()[1], "hermes", wake.ReplyTo{RoomID: e.dmRich, RoomName: "richard"}, dm)
	e.post(t, "agent-hermes", e.general, "@agent-hermes Notiz an mich", rcfake.PostOptions{})
	e.tick(t)
	if e.disp.Len() != 2 {
		t.Fatalf("an own message woke: %+v", e.disp.All()[2:])
	}
	g := e.post(t, "richard", e.finanz, "@agent-hermes Quartalszahlen?", rcfake.PostOptions{})
	e.tick(t)
	if e.disp.Len() != 3 {
		t.Fatalf("a private group mention: %d jobs, want 3", e.disp.Len())
	}
	checkJob(t, e.disp.All()[2], "hermes", wake.ReplyTo{RoomID: e.finanz, RoomName: "finanz-team"}, g)
}

// Live bug 1: userMentions counts unread mentions and stays
// up until the room is read; one old unread mention must not make every
// later plain message wake.
func TestPollStickyMentionDoesNotWakePlainMessages(t *testing.T) {
	e := newPollEnv(t)
	e.post(t, "richard", e.general, "@agent-hermes alte Frage", rcfake.PostOptions{})
	e.clk.Add(30 * time.Minute) // long before the first poll: outside the lookback
	e.post(t, "richard", e.general, "ganz normale Nachricht", rcfake.PostOptions{})
	e.post(t, "richard", e.general, "noch eine", rcfake.PostOptions{})
	if s := e.sub(t, e.general); s.UserMentions != 1 || s.Unread != 1 || !s.Alert {
		t.Fatalf("precondition: the room should be 'hot': %+v", s)
	}
	st := e.tick(t)
	if e.disp.Len() != 0 {
		t.Fatalf("plain messages woke the agent in a room with a sticky mention: %+v", e.disp.All())
	}
	if st.Rooms != 1 || st.Messages != 2 {
		t.Errorf("stats %+v, want 1 room and 2 messages checked", st)
	}
	if s := e.sub(t, e.general); s.UserMentions != 0 || s.Alert {
		t.Errorf("the checked room was not marked read: %+v", s)
	}
}

// The same bug while the counter stays up because marking read failed: the
// next tick must judge each message, not the counter.
func TestPollStickyMentionAfterFailedMarkRead(t *testing.T) {
	e := newPollEnv(t)
	m := e.post(t, "richard", e.general, "@agent-hermes bitte prüfen", rcfake.PostOptions{})
	e.rc.FailNext("subscriptions.read", http.StatusServiceUnavailable, `{"success":false,"error":"busy"}`)
	e.clk.Add(10 * time.Second)
	if _, err := e.poller.Tick(context.Background(), []wake.PollAgent{e.hermes}); err == nil {
		t.Fatal("Tick hid the failed subscriptions.read")
	}
	if e.disp.Len() != 1 || e.disp.All()[0].MessageIDs[0] != m.ID {
		t.Fatalf("the mention did not wake once: %+v", e.disp.All())
	}
	e.post(t, "richard", e.general, "danke schon mal", rcfake.PostOptions{})
	if s := e.sub(t, e.general); s.UserMentions != 1 {
		t.Fatalf("precondition: userMentions should still be up: %+v", s)
	}
	e.tick(t)
	if e.disp.Len() != 1 {
		t.Fatalf("the sticky counter woke the agent again: %+v", e.disp.All()[1:])
	}
	if s := e.sub(t, e.general); s.UserMentions != 0 || s.Alert {
		t.Errorf("not marked read on the second tick: %+v", s)
	}
}

// Live bug 2: the first fetch of a room looks back
// initialLookbackMinutes instead of setting the marker to now, so the
// message that made the room a candidate wakes the agent.
func TestPollFirstFetchKeepsTriggeringMessage(t *testing.T) {
	e := newPollEnv(t)
	m := e.post(t, "richard", e.general, "@agent-hermes bist du da?", rcfake.PostOptions{})
	st := e.tick(t)
	if st.Wakes != 1 || e.disp.Len() != 1 {
		t.Fatalf("the first message of a room was swallowed: %+v", st)
	}
	checkJob(t, e.disp.All()[0], "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general"}, m)
	if got, want := e.historyOldest(t, e.general), iso(e.clk.Now().Add(-5*time.Minute)); got != want {
		t.Errorf("first fetch oldest = %s, want now - initialLookbackMinutes = %s", got, want)
	}
}

// ... and it never replays older history: an unread mention from before the
// lookback does not wake, only the new one does.
func TestPollFirstFetchNeverReplaysOlderHistory(t *testing.T) {
	e := newPollEnv(t)
	for range 3 {
		e.post(t, "richard", e.general, "@agent-hermes alte Sache", rcfake.PostOptions{})
	}
	e.clk.Add(20 * time.Minute)
	fresh := e.post(t, "richard", e.general, "@agent-hermes neue Sache", rcfake.PostOptions{})
	e.tick(t)
	jobs := e.disp.All()
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(jobs))
	}
	checkJob(t, jobs[0], "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general"}, fresh)

	// With a lookback of zero the first fetch still never replays history.
	e2 := newPollEnv(t)
	e2.hermes.Lookback = 0
	e2.post(t, "richard", e2.general, "@agent-hermes alt", rcfake.PostOptions{})
	e2.tick(t)
	if e2.disp.Len() != 0 {
		t.Errorf("lookback 0 replayed a message from before the tick: %+v", e2.disp.All())
	}
}

// a quiet tick costs one subscriptions.get and nothing else: no
// history, no store access, no dispatch. Only a poller's first tick reads
// the agent's rate-limit state (kept in the store across cold starts).
func TestPollQuietTick(t *testing.T) {
	e := newPollEnv(t)
	wantStore := int64(1)
	check := func(when string) {
		t.Helper()
		reqs, store, jobs := len(e.rc.Requests()), e.storeCalls.Load(), e.disp.Len()
		st := e.tick(t)
		if got := routes(e.since(reqs)); !slices.Equal(got, []string{"subscriptions.get"}) {
			t.Errorf("%s: requests %v, want exactly one subscriptions.get", when, got)
		}
		if got := e.storeCalls.Load() - store; got != wantStore {
			t.Errorf("%s: %d store calls, want %d", when, got, wantStore)
		}
		wantStore = 0
		if e.disp.Len() != jobs {
			t.Errorf("%s: a quiet tick dispatched", when)
		}
		if st.Rooms != 0 || st.Messages != 0 || st.Wakes != 0 || st.Agents != 1 {
			t.Errorf("%s: stats %+v", when, st)
		}
		if q := e.rc.Requests()[reqs].Query; q.Has("updatedSince") && q.Get("updatedSince") == "" {
			t.Errorf("%s: empty updatedSince parameter", when)
		}
	}
	check("before any traffic")
	e.post(t, "richard", e.general, "@agent-hermes hallo", rcfake.PostOptions{})
	e.post(t, "richard", e.dmRich, "hallo", rcfake.PostOptions{})
	e.tick(t)
	if e.disp.Len() != 2 {
		t.Fatalf("setup: %d jobs, want 2", e.disp.Len())
	}
	check("after traffic was handled")
	check("again")
}

// history by room type, only for rooms with news; every checked room
// is marked read after its messages were collected and queued.
func TestPollMarksReadAfterCollecting(t *testing.T) {
	e := newPollEnv(t)
	readsAtDispatch := map[string]int{}
	e.disp.Before = func(j sb.WakeJob) {
		n := 0
		for _, r := range e.rc.Requests() {
			if r.Route == "subscriptions.read" && readRoom(t, r) == j.ReplyTo.RoomID {
				n++
			}
		}
		readsAtDispatch[j.ReplyTo.RoomID] = n
	}
	e.post(t, "richard", e.general, "nur Plauderei", rcfake.PostOptions{}) // checked, no wake
	e.post(t, "richard", e.finanz, "@agent-hermes Zahlen?", rcfake.PostOptions{})
	e.post(t, "richard", e.dmRich, "hallo", rcfake.PostOptions{})
	start := len(e.rc.Requests())
	st := e.tick(t)
	if st.Rooms != 3 || st.Wakes != 2 {
		t.Fatalf("stats %+v, want 3 rooms checked and 2 wakes", st)
	}
	reqs := e.since(start)
	if reqs[0].Route != "subscriptions.get" {
		t.Fatalf("first request %s, want subscriptions.get", reqs[0].Route)
	}
	wantEndpoint := map[string]string{e.general: "channels.history", e.finanz: "groups.history", e.dmRich: "im.history"}
	for rid, endpoint := range wantEndpoint {
		hist, read := -1, -1
		for i, r := range reqs {
			switch {
			case strings.HasSuffix(r.Route, ".history") && r.Query.Get("roomId") == rid:
				if r.Route != endpoint {
					t.Errorf("room %s read with %s, want %s", rid, r.Route, endpoint)
				}
				if r.Query.Get("showThreadMessages") != "true" {
					t.Errorf("history of %s without thread messages", rid)
				}
				hist = i
			case r.Route == "subscriptions.read" && readRoom(t, r) == rid:
				if read >= 0 {
					t.Errorf("room %s marked read twice", rid)
				}
				read = i
			}
		}
		if hist < 0 || read < 0 || read < hist {
			t.Errorf("room %s: history at %d, read at %d; want history first, then read", rid, hist, read)
		}
		if s := e.sub(t, rid); s.Alert || s.Unread != 0 || s.UserMentions != 0 {
			t.Errorf("room %s still unread after the tick: %+v", rid, s)
		}
	}
	for rid, n := range readsAtDispatch {
		if n != 0 {
			t.Errorf("room %s was marked read before its job was queued", rid)
		}
	}
	if len(readsAtDispatch) != 2 {
		t.Errorf("dispatched for %d rooms, want 2", len(readsAtDispatch))
	}
}

// the marker moves to the newest message seen, filtered ones included,
// so that ignored messages are not fetched again; it lives in the store and
// survives a new Poller.
func TestPollMarkerMovesPastFilteredMessages(t *testing.T) {
	e := newPollEnv(t)
	m := e.post(t, "richard", e.general, "@agent-hermes bitte", rcfake.PostOptions{})
	e.post(t, "agent-atlas", e.general, "ich übernehme das", rcfake.PostOptions{}) // another agent
	e.post(t, "ci-bot", e.general, "build grün", rcfake.PostOptions{Bot: true})
	e.clk.Add(time.Second)
	if err := e.rc.Join("neu", e.general); err != nil { // system message uj
		t.Fatal(err)
	}
	msgs := e.rc.Messages(e.general)
	newest := msgs[len(msgs)-1]
	if newest.SystemType != "uj" {
		t.Fatalf("setup: last message %+v, want the uj system message", newest)
	}
	st := e.tick(t)
	if st.Messages != 4 || st.Wakes != 1 {
		t.Fatalf("stats %+v, want 4 messages and 1 wake", st)
	}
	checkJob(t, e.disp.All()[0], "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general"}, m)

	later := e.post(t, "richard", e.general, "@agent-hermes und noch was", rcfake.PostOptions{})
	e.poller = e.newPoller() // a cold start: nothing in memory
	e.tick(t)
	if got, want := e.historyOldest(t, e.general), iso(newest.At); got != want {
		t.Errorf("after a filtered message the next fetch starts at %s, want the newest seen %s", got, want)
	}
	if jobs := e.disp.All(); len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2", len(jobs))
	} else {
		checkJob(t, jobs[1], "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general"}, later)
	}
	if got, want := e.historyOldest(t, e.general), iso(newest.At); got != want {
		t.Errorf("marker %s, want %s", got, want)
	}
}

// State survives a restart: the marker is read from the store, so a new
// Poller neither replays nor skips.
func TestPollStateSurvivesRestart(t *testing.T) {
	e := newPollEnv(t)
	first := e.post(t, "richard", e.general, "@agent-hermes eins", rcfake.PostOptions{})
	e.tick(t)
	e.clk.Add(4 * time.Minute) // still inside a fresh lookback window of the first message? no: marker decides
	second := e.post(t, "richard", e.general, "@agent-hermes zwei", rcfake.PostOptions{})
	e.poller = e.newPoller()
	e.tick(t)
	if got, want := e.historyOldest(t, e.general), iso(first.At); got != want {
		t.Errorf("after a restart the fetch starts at %s, want the stored marker %s", got, want)
	}
	jobs := e.disp.All()
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2", len(jobs))
	}
	checkJob(t, jobs[1], "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general"}, second)
}

// A failing dispatch leaves the marker and the read state alone and gives
// the claims back, so the next tick tries again.
func TestPollFailingDispatchRetries(t *testing.T) {
	e := newPollEnv(t)
	first := e.post(t, "richard", e.general, "@agent-hermes eins", rcfake.PostOptions{})
	e.tick(t)
	m := e.post(t, "richard", e.general, "@agent-hermes zwei", rcfake.PostOptions{})
	n := e.post(t, "richard", e.general, "@agent-hermes drei", rcfake.PostOptions{})
	e.disp.FailNext(unavailable())
	start := len(e.rc.Requests())
	e.clk.Add(10 * time.Second)
	_, err := e.poller.Tick(context.Background(), []wake.PollAgent{e.hermes})
	if sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Fatalf("Tick = %v, want the dispatch's EUNAVAILABLE", err)
	}
	if !strings.Contains(err.Error(), "hermes") || !strings.Contains(err.Error(), e.general) {
		t.Errorf("error %q does not say which agent and room", err)
	}
	if slices.Contains(routes(e.since(start)), "subscriptions.read") {
		t.Error("the room was marked read although its job was not queued")
	}
	if s := e.sub(t, e.general); s.UserMentions != 2 || !s.Alert {
		t.Errorf("read state changed: %+v", s)
	}
	if e.disp.Len() != 1 {
		t.Fatalf("%d jobs, want only the first", e.disp.Len())
	}
	e.tick(t)
	if got, want := e.historyOldest(t, e.general), iso(first.At); got != want {
		t.Errorf("the retry fetched from %s, want the unmoved marker %s", got, want)
	}
	jobs := e.disp.All()
	if len(jobs) != 2 {
		t.Fatalf("%d jobs after the retry, want 2", len(jobs))
	}
	checkJob(t, jobs[1], "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general"}, m, n)
	if s := e.sub(t, e.general); s.UserMentions != 0 || s.Alert {
		t.Errorf("not read after the retry: %+v", s)
	}
}

// Thread replies wake with ReplyTo.ThreadID, so the answer lands in the
// thread.
func TestPollThreadReply(t *testing.T) {
	e := newPollEnv(t)
	parent := e.post(t, "richard", e.general, "@agent-hermes Thema Quartal", rcfake.PostOptions{})
	e.tick(t)
	// The agent answers in the thread: now it takes part in it.
	e.post(t, "agent-hermes", e.general, "Ich schaue es mir an.", rcfake.PostOptions{Tmid: parent.ID})
	reply := e.post(t, "richard", e.general, "@agent-hermes und die Vorjahreszahlen?", rcfake.PostOptions{Tmid: parent.ID})
	e.tick(t)
	jobs := e.disp.All()
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2", len(jobs))
	}
	checkJob(t, jobs[1], "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general", ThreadID: parent.ID}, reply)
	if head, _, _ := splitWake(t, jobs[1].Text); !strings.Contains(head, "thread: "+parent.ID) {
		t.Errorf("wake head %q does not name the thread", head)
	}
	// A plain thread reply does not wake a mention-only agent.
	e.post(t, "richard", e.general, "danke", rcfake.PostOptions{Tmid: parent.ID})
	e.tick(t)
	if e.disp.Len() != 2 {
		t.Errorf("a plain thread reply woke the agent")
	}
}

// Messages from the room and a thread in one tick answer in the room.
func TestPollMixedThreadsAnswerInRoom(t *testing.T) {
	e := newPollEnv(t)
	parent := e.post(t, "agent-hermes", e.general, "Frage in die Runde", rcfake.PostOptions{})
	a := e.post(t, "richard", e.general, "@agent-hermes im Thread", rcfake.PostOptions{Tmid: parent.ID})
	b := e.post(t, "richard", e.general, "@agent-hermes im Raum", rcfake.PostOptions{})
	e.tick(t)
	jobs := e.disp.All()
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(jobs))
	}
	checkJob(t, jobs[0], "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general"}, a, b)
}

// Files and link previews reach the wake message.
func TestPollFilesAndLinks(t *testing.T) {
	e := newPollEnv(t)
	csv := []byte("monat,umsatz\n" + strings.Repeat("x", 64))
	m := e.post(t, "richard", e.dmRich, "schau dir die Zahlen bitte an.", rcfake.PostOptions{
		Files: []rcfake.FileSpec{{Name: "auswertung.csv", Type: "text/csv", Content: csv}},
		URLs:  []rcfake.Link{{URL: "https://www.rocket.chat/", Title: "Rocket.Chat | Secure CommsOS™"}},
	})
	e.tick(t)
	if e.disp.Len() != 1 {
		t.Fatalf("%d jobs, want 1", e.disp.Len())
	}
	_, _, body := splitWake(t, e.disp.All()[0].Text)
	want := strings.Join([]string{
		"[" + m.At.Format("15:04") + "] @richard (messageId: " + m.ID + "): schau dir die Zahlen bitte an.",
		"    File: auswertung.csv (text/csv, 77 B) — fileId: " + m.FileIDs[0],
		"    Link: https://www.rocket.chat/ — Rocket.Chat | Secure CommsOS™",
	}, "\n")
	if body != want {
		t.Errorf("wake body:\n%s\nwant:\n%s", body, want)
	}
}

// at most maxWakesPerRoomPerHour wakes per room and hour; then the
// agent is silent there, logs it once, and wakes again the next hour.
func TestPollHourlyThrottle(t *testing.T) {
	e := newPollEnv(t)
	e.hermes.MaxWakesPerHour = 2
	mention := func(rid string) rcfake.Message {
		return e.post(t, "richard", rid, "@agent-hermes noch was", rcfake.PostOptions{})
	}
	for i := range 2 {
		mention(e.general)
		if st := e.tick(t); st.Wakes != 1 {
			t.Fatalf("wake %d: %+v", i+1, st)
		}
	}
	for i := range 3 {
		mention(e.general)
		st := e.tick(t)
		if st.Wakes != 0 || st.Throttled != 1 {
			t.Fatalf("over the limit (%d): %+v", i+1, st)
		}
		if s := e.sub(t, e.general); s.Alert {
			t.Errorf("a throttled room was not marked read")
		}
	}
	if e.disp.Len() != 2 {
		t.Fatalf("%d jobs, want 2", e.disp.Len())
	}
	recs := e.logs.Find("wake throttle reached; silent in this room until the next hour")
	if len(recs) != 1 {
		t.Fatalf("throttle logged %d times, want once per room and hour", len(recs))
	}
	if recs[0].Attrs["room"] != e.general || recs[0].Attrs["agent"] != "hermes" {
		t.Errorf("throttle log attrs %v", recs[0].Attrs)
	}
	if recs[0].Level != slog.LevelWarn {
		t.Errorf("throttle logged at %v, want WARN", recs[0].Level)
	}
	// Per room: the DM still wakes in the same hour.
	mention(e.dmRich)
	if st := e.tick(t); st.Wakes != 1 {
		t.Fatalf("another room in the same hour: %+v", st)
	}
	// The next hour.
	e.clk.Set(t0.Add(time.Hour + time.Minute))
	next := mention(e.general)
	if st := e.tick(t); st.Wakes != 1 {
		t.Fatalf("the next hour: %+v", st)
	}
	jobs := e.disp.All()
	checkJob(t, jobs[len(jobs)-1], "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general"}, next)
	for range 2 {
		mention(e.general)
		e.tick(t)
	}
	if got := len(e.logs.Find("wake throttle reached; silent in this room until the next hour")); got != 2 {
		t.Errorf("throttle logged %d times over two hours, want 2", got)
	}
}

// The webhook and the poll share claims: one message wakes an agent once,
// whichever path sees it first.
func TestPollAndWebhookShareClaims(t *testing.T) {
	e := newPollEnv(t)
	hookJobs := &dispatcher{}
	hookJobs.Complete = beginClaims(e.wakes(), e.clk.Now().Add(time.Hour)) // the webhook's run began and goes on
	log, _ := newLog()
	e.rc.SetWebhookToken(hookToken)
	recv := wake.NewReceiver([]string{hookToken}, []wake.WebhookAgent{{ID: "hermes", UserID: e.ids["agent-hermes"],
		Username: "agent-hermes", AgentUsernames: []string{"agent-hermes", "agent-atlas"}, MentionOnly: true}}, &sb.WakeClaims{KV: e.store.KV(), Now: e.clk.Now}, hookJobs, log)
	deliver := func(m rcfake.Message) {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/hooks/rocketchat", strings.NewReader(string(e.rc.OutgoingWebhookPayload(m))))
		httpapi.RocketChatWebhook(recv).ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("webhook: %d %s", rec.Code, rec.Body)
		}
	}

	// Webhook first, then the poll.
	a := e.post(t, "richard", e.general, "@agent-hermes zuerst per Webhook", rcfake.PostOptions{})
	deliver(a)
	e.tick(t)
	if hookJobs.Len() != 1 || e.disp.Len() != 0 {
		t.Fatalf("webhook first: webhook jobs %d, poll jobs %d; want 1 and 0", hookJobs.Len(), e.disp.Len())
	}
	// The webhook's run is still going: the poll leaves the room unread so
	// that it looks again (and takes over, should that run die).
	if s := e.sub(t, e.general); !s.Alert {
		t.Error("the poll marked the room read while the webhook's run was in progress")
	}
	finishClaims(e.wakes())(hookJobs.All()[0])
	e.tick(t)
	if s := e.sub(t, e.general); s.Alert || e.disp.Len() != 0 {
		t.Errorf("after the webhook's run: alert %v, poll jobs %d; want read and none", s.Alert, e.disp.Len())
	}

	// Poll first, then the (late) webhook.
	b := e.post(t, "richard", e.general, "@agent-hermes zuerst per Poll", rcfake.PostOptions{})
	e.tick(t)
	deliver(b)
	if hookJobs.Len() != 1 || e.disp.Len() != 1 {
		t.Fatalf("poll first: webhook jobs %d, poll jobs %d; want 1 and 1", hookJobs.Len(), e.disp.Len())
	}
	if got := e.disp.All()[0].MessageIDs; !slices.Equal(got, []string{b.ID}) {
		t.Errorf("poll job messages %v, want %s", got, b.ID)
	}
}

// Several agents: each has its own marker and subscriptions; one agent's
// failure does not stop the others, and the errors come back joined. The
// agents are polled one after another here, so that the failure injected
// into the next subscriptions.get is hermes's (TestParallelPollReportsEachFailingAgent
// covers agents polled at once).
func TestPollSeveralAgents(t *testing.T) {
	e := newPollEnv(t)
	e.poller.Parallel = 1
	m := e.post(t, "richard", e.finanz, "@agent-hermes @agent-atlas bitte beide", rcfake.PostOptions{})
	e.clk.Add(10 * time.Second)
	st, err := e.poller.Tick(context.Background(), []wake.PollAgent{e.hermes, e.atlas})
	if err != nil {
		t.Fatal(err)
	}
	if st.Agents != 2 || st.Wakes != 2 {
		t.Fatalf("stats %+v, want 2 agents and 2 wakes", st)
	}
	if got := agentsOf(e.disp.All()); got != "hermes,atlas" {
		t.Fatalf("jobs for %q, want hermes,atlas", got)
	}
	for _, j := range e.disp.All() {
		if !slices.Equal(j.MessageIDs, []string{m.ID}) {
			t.Errorf("%s woke for %v", j.AgentID, j.MessageIDs)
		}
	}

	e.post(t, "richard", e.finanz, "@agent-hermes @agent-atlas nochmal", rcfake.PostOptions{})
	e.rc.FailNext("subscriptions.get", http.StatusUnauthorized, `{"success":false,"error":"You must be logged in to do this."}`)
	e.clk.Add(10 * time.Second)
	st, err = e.poller.Tick(context.Background(), []wake.PollAgent{e.hermes, e.atlas})
	if err == nil || !strings.Contains(err.Error(), "rocketchat-poll hermes") {
		t.Fatalf("Tick error %v, want hermes' failure", err)
	}
	if sb.ErrorCode(err) != sb.EUNAUTHORIZED {
		t.Errorf("error code %q, want %q", sb.ErrorCode(err), sb.EUNAUTHORIZED)
	}
	if st.Agents != 2 || st.Wakes != 1 || e.disp.All()[2].AgentID != "atlas" {
		t.Errorf("atlas was not polled after hermes failed: %+v %+v", st, e.disp.All())
	}
}

// A room whose history fails is left unread for the next tick; the other
// rooms of the agent are still handled.
func TestPollRoomFailureIsolated(t *testing.T) {
	e := newPollEnv(t)
	e.post(t, "richard", e.general, "@agent-hermes eins", rcfake.PostOptions{})
	d := e.post(t, "richard", e.dmRich, "zwei", rcfake.PostOptions{})
	e.rc.FailNext("channels.history", http.StatusInternalServerError, `{"success":false,"error":"boom"}`)
	e.clk.Add(10 * time.Second)
	st, err := e.poller.Tick(context.Background(), []wake.PollAgent{e.hermes})
	if err == nil || !strings.Contains(err.Error(), e.general) {
		t.Fatalf("Tick = %v, want the general room's failure", err)
	}
	if st.Wakes != 1 || e.disp.Len() != 1 || e.disp.All()[0].MessageIDs[0] != d.ID {
		t.Fatalf("the DM was not handled: %+v %+v", st, e.disp.All())
	}
	if s := e.sub(t, e.general); !s.Alert || s.UserMentions != 1 {
		t.Errorf("the failed room was marked read: %+v", s)
	}
	e.tick(t)
	if e.disp.Len() != 2 {
		t.Errorf("the failed room's mention did not wake on the next tick")
	}
}

// flakyClaims fails the claim call number failAt (1-based), once.
type flakyClaims struct {
	wake.WakeStore
	calls, failAt int
}

func (f *flakyClaims) Take(ctx context.Context, key, owner string, until time.Time) (sb.WakeClaim, bool, error) {
	f.calls++
	if f.calls == f.failAt {
		return sb.WakeClaim{}, false, sb.E("kv.putIf", sb.EUNAVAILABLE, "the state table is busy")
	}
	return f.WakeStore.Take(ctx, key, owner, until)
}

// flakyCounters fails the first Incr.
type flakyCounters struct {
	sb.Counters
	failed bool
}

func (f *flakyCounters) Incr(ctx context.Context, key string, limit int, expires time.Time) (int, bool, error) {
	if !f.failed {
		f.failed = true
		return 0, false, sb.E("counters.incr", sb.EUNAVAILABLE, "the state table is busy")
	}
	return f.Counters.Incr(ctx, key, limit, expires)
}

// A store failure half-way through claiming or throttling gives back the
// claims already taken and leaves the room unread: the next tick wakes for
// all messages, once.
func TestPollStoreFailureReleasesClaims(t *testing.T) {
	tests := []struct {
		name       string
		breakStore func(e *pollEnv)
	}{
		{"second claim fails", func(e *pollEnv) { e.poller.Wakes = &flakyClaims{WakeStore: e.poller.Wakes, failAt: 2} }},
		{"throttle counter fails", func(e *pollEnv) { e.poller.Counters = &flakyCounters{Counters: e.store} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newPollEnv(t)
			a := e.post(t, "richard", e.general, "@agent-hermes eins", rcfake.PostOptions{})
			b := e.post(t, "richard", e.general, "@agent-hermes zwei", rcfake.PostOptions{})
			tt.breakStore(e)
			e.clk.Add(10 * time.Second)
			if _, err := e.poller.Tick(context.Background(), []wake.PollAgent{e.hermes}); sb.ErrorCode(err) != sb.EUNAVAILABLE {
				t.Fatalf("Tick = %v, want the store's EUNAVAILABLE", err)
			}
			if e.disp.Len() != 0 {
				t.Fatalf("dispatched despite the failure: %+v", e.disp.All())
			}
			if s := e.sub(t, e.general); !s.Alert {
				t.Error("marked read despite the failure")
			}
			e.tick(t)
			if e.disp.Len() != 1 {
				t.Fatalf("%d jobs after the retry, want 1", e.disp.Len())
			}
			checkJob(t, e.disp.All()[0], "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general"}, a, b)
		})
	}
}

// the first 429 stops the agent's tick (no call to its other rooms),
// and the agent is not polled at all until X-RateLimit-Reset, also by a
// poller after a cold start (the reset is kept in the store).
func TestPollRateLimitHoldsAcrossTicks(t *testing.T) {
	e := newPollEnv(t)
	second := e.rc.AddChannel("zweiter-kanal", "richard", "agent-hermes")
	e.post(t, "richard", e.general, "@agent-hermes eins", rcfake.PostOptions{})
	e.post(t, "richard", second, "@agent-hermes zwei", rcfake.PostOptions{})
	e.post(t, "richard", e.finanz, "@agent-hermes drei", rcfake.PostOptions{})
	e.post(t, "richard", e.dmRich, "vier", rcfake.PostOptions{})
	e.rc.SetRateLimit(1, time.Minute) // one call per route and minute: the second channels.history is refused

	reqs := len(e.rc.Requests())
	st := e.tick(t)
	// With one call per route, the first repeated route is the 429.
	got := routes(e.since(reqs))
	refused := -1
	for i := range got {
		if slices.Contains(got[:i], got[i]) {
			refused = i
			break
		}
	}
	if refused < 0 {
		t.Fatalf("requests %v: the limiter was not reached", got)
	}
	if refused != len(got)-1 {
		t.Errorf("requests %v: calls went on after the 429 (%s)", got, got[refused])
	}
	if st.RateLimited != 1 || st.Wakes == 0 || st.Wakes >= 4 {
		t.Errorf("stats %+v, want some wakes before the agent was rate-limited", st)
	}

	// Before the reset: not one call, not even subscriptions.get; also
	// after a cold start.
	for _, p := range []*wake.Poller{e.poller, e.newPoller()} {
		e.poller = p
		reqs = len(e.rc.Requests())
		if st := e.tick(t); st.RateLimited != 1 {
			t.Errorf("stats before the reset %+v, want rate-limited", st)
		}
		if got := e.since(reqs); len(got) != 0 {
			t.Errorf("calls before the reset: %v", routes(got))
		}
	}

	// After the reset the agent is polled again and the refused rooms wake.
	e.clk.Add(time.Minute)
	e.rc.SetRateLimit(0, 0)
	e.tick(t)
	if e.disp.Len() != 4 {
		t.Errorf("%d jobs after the reset, want 4 (every room once)", e.disp.Len())
	}
}
