package wake_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// source is a sb.ChatMessageSource: RoomInfo goes to rcfake through the real
// client; GetMessage is served from messages read through the real client's
// History, because rcfake has no chat.getMessage route (yet). The messages
// are therefore decoded from rcfake's wire shapes like the real call's.
type source struct {
	chat    *rocketchat.Client
	mu      sync.Mutex
	msgs    map[string]sb.ChatMessage
	gets    int
	getErr  error
	infoErr error
}

var _ sb.ChatMessageSource = (*source)(nil)

func (s *source) GetMessage(_ context.Context, id string) (sb.ChatMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	if s.getErr != nil {
		return sb.ChatMessage{}, s.getErr
	}
	m, ok := s.msgs[id]
	if !ok {
		return sb.ChatMessage{}, sb.E("rocketchat.chat.getMessage", sb.ENOTFOUND, "no message "+id)
	}
	return m, nil
}

func (s *source) RoomInfo(ctx context.Context, rid string) (sb.ChatRoom, error) {
	if s.infoErr != nil {
		return sb.ChatRoom{}, s.infoErr
	}
	return s.chat.RoomInfo(ctx, rid)
}

// load reads every message of the rooms as hermes.
func (s *source) load(t *testing.T, rooms map[string]sb.RoomType) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.msgs == nil {
		s.msgs = map[string]sb.ChatMessage{}
	}
	for rid, typ := range rooms {
		msgs, err := s.chat.History(context.Background(), typ, rid, time.Time{}, 1000, true)
		if err != nil {
			t.Fatalf("history of %s: %v", rid, err)
		}
		for _, m := range msgs {
			s.msgs[m.ID] = m
		}
	}
}

type prepEnv struct {
	*pollEnv
	src  *source
	prep *wake.Preparer
	logs *logs // the Preparer's (the embedded pollEnv has the Poller's)
}

func newPrepEnv(t *testing.T) *prepEnv {
	t.Helper()
	e := &prepEnv{pollEnv: newPollEnv(t)}
	e.src = &source{chat: e.hermesChat}
	log, logs := newLog()
	e.logs = logs
	e.prep = &wake.Preparer{Counters: e.store, Claims: e.store, Log: log, Loc: time.UTC, Now: e.clk.Now}
	return e
}

func (e *prepEnv) prepare(t *testing.T, m rcfake.Message, rules wake.Rules, maxWakes int) (sb.WakeJob, bool) {
	t.Helper()
	e.src.load(t, map[string]sb.RoomType{e.general: sb.RoomChannel, e.finanz: sb.RoomGroup, e.dmRich: sb.RoomDirect})
	in := sb.WakeJob{AgentID: "hermes", Source: "rocketchat-webhook",
		Pending: &sb.PendingMessage{RoomID: m.RoomID, MessageID: m.ID, ThreadID: m.ThreadID}}
	got, ok, err := e.prep.Prepare(context.Background(), in, e.src, rules, maxWakes)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if !ok && (got.Pending == nil || got.Text != "") {
		t.Errorf("a job that does not wake came back changed: %+v", got)
	}
	return got, ok
}

// checkPrepared asserts a prepared job against the message that woke it.
func checkPrepared(t *testing.T, j sb.WakeJob, reply wake.ReplyTo, m rcfake.Message) {
	t.Helper()
	if j.Pending != nil {
		t.Errorf("Pending still set: %+v", j.Pending)
	}
	if j.AgentID != "hermes" || j.Source != "rocketchat-webhook" {
		t.Errorf("agent %q source %q changed", j.AgentID, j.Source)
	}
	if j.ReplyTo == nil || withoutType(*j.ReplyTo, reply) != reply {
		t.Errorf("ReplyTo %+v, want %+v", j.ReplyTo, reply)
	}
	if len(j.MessageIDs) != 1 || j.MessageIDs[0] != m.ID {
		t.Errorf("MessageIDs %v, want [%s]", j.MessageIDs, m.ID)
	}
	head, _, body := splitWake(t, j.Text)
	if !strings.Contains(head, "roomId: "+reply.RoomID) {
		t.Errorf("head %q does not name room %s", head, reply.RoomID)
	}
	if reply.ThreadID != "" && !strings.Contains(head, "thread: "+reply.ThreadID) {
		t.Errorf("head %q does not name thread %s", head, reply.ThreadID)
	}
	want := "[" + m.At.UTC().Format("15:04") + "] @" + m.Username + " (messageId: " + m.ID + "): " + m.Text
	if !strings.HasPrefix(body, want) {
		t.Errorf("body %q, want it to start %q", body, want)
	}
}

func TestPrepareDirectMessage(t *testing.T) {
	tests := []struct {
		name    string
		allowed []string
		want    bool
	}{
		{"all rooms allowed", nil, true},
		{"counterpart allowed", []string{"finanz-team", "richard"}, true},
		{"counterpart not allowed", []string{"finanz-team"}, false},
		{"only the agent itself allowed", []string{"agent-hermes"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newPrepEnv(t)
			m := e.post(t, "richard", e.dmRich, "hast du kurz Zeit?", rcfake.PostOptions{})
			rules := e.hermes.Rules
			rules.AllowedRooms = tt.allowed
			j, ok := e.prepare(t, m, rules, 12)
			if ok != tt.want {
				t.Fatalf("wake = %v, want %v", ok, tt.want)
			}
			if !ok {
				if recs := e.logs.Find("webhook message does not wake"); len(recs) != 1 || recs[0].Attrs["reason"] != "room not in allowedRooms" {
					t.Errorf("logs %+v, want one 'does not wake' with the reason", recs)
				}
				return
			}
			checkPrepared(t, j, wake.ReplyTo{RoomID: e.dmRich, RoomName: "richard"}, m)
			if head, _, _ := splitWake(t, j.Text); !strings.Contains(head, "direct message from @richard") {
				t.Errorf("head %q does not name the counterpart", head)
			}
		})
	}
}

// The full rules run on the fetched message: its mentions[], not
// the webhook's text.
func TestPrepareAppliesRulesToFetchedMessage(t *testing.T) {
	tests := []struct {
		name string
		as   string
		room func(*prepEnv) string
		text string
		opts rcfake.PostOptions
		want bool
	}{
		{"mentions[] names the agent", "richard", func(e *prepEnv) string { return e.general }, "@agent-hermes bitte", rcfake.PostOptions{}, true},
		{"@name in the text but not in mentions[]", "richard", func(e *prepEnv) string { return e.general },
			"@agent-hermes bitte", rcfake.PostOptions{Mentions: []string{}}, false},
		{"in mentions[] without @ in the text", "richard", func(e *prepEnv) string { return e.general },
			"Hermes, bitte", rcfake.PostOptions{Mentions: []string{"agent-hermes"}}, true},
		{"plain channel message", "richard", func(e *prepEnv) string { return e.general }, "guten Morgen", rcfake.PostOptions{}, false},
		{"other agent without mention", "agent-atlas", func(e *prepEnv) string { return e.finanz }, "erledigt", rcfake.PostOptions{}, false},
		{"other agent with mention", "agent-atlas", func(e *prepEnv) string { return e.finanz }, "@agent-hermes übernimm", rcfake.PostOptions{}, true},
		{"bot with mention", "ci-bot", func(e *prepEnv) string { return e.general }, "@agent-hermes build rot", rcfake.PostOptions{Bot: true}, true},
		{"bot without mention", "ci-bot", func(e *prepEnv) string { return e.general }, "build rot", rcfake.PostOptions{Bot: true}, false},
		{"own message", "agent-hermes", func(e *prepEnv) string { return e.general }, "@agent-hermes merken", rcfake.PostOptions{}, false},
		{"system message", "richard", func(e *prepEnv) string { return e.general }, "richard", rcfake.PostOptions{SystemType: "au"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newPrepEnv(t)
			m := e.post(t, tt.as, tt.room(e), tt.text, tt.opts)
			j, ok := e.prepare(t, m, e.hermes.Rules, 12)
			if ok != tt.want {
				t.Fatalf("wake = %v, want %v", ok, tt.want)
			}
			if ok {
				name := map[string]string{e.general: "general", e.finanz: "finanz-team"}[m.RoomID]
				checkPrepared(t, j, wake.ReplyTo{RoomID: m.RoomID, RoomName: name}, m)
			}
		})
	}
}

func TestPrepareThreadAndFiles(t *testing.T) {
	e := newPrepEnv(t)
	parent := e.post(t, "richard", e.finanz, "Quartal", rcfake.PostOptions{})
	m := e.post(t, "richard", e.finanz, "@agent-hermes hier die Datei", rcfake.PostOptions{Tmid: parent.ID,
		Files: []rcfake.FileSpec{{Name: "q3.pdf", Type: "application/pdf", Content: make([]byte, 2048)}},
		URLs:  []rcfake.Link{{URL: "https://example.org/q3", Title: "Q3 Bericht"}}})
	j, ok := e.prepare(t, m, e.hermes.Rules, 12)
	if !ok {
		t.Fatal("a thread mention did not wake")
	}
	checkPrepared(t, j, wake.ReplyTo{RoomID: e.finanz, RoomName: "finanz-team", ThreadID: parent.ID}, m)
	_, _, body := splitWake(t, j.Text)
	for _, want := range []string{
		"    File: q3.pdf (application/pdf, 2.0 KB) — fileId: " + m.FileIDs[0],
		"    Link: https://example.org/q3 — Q3 Bericht",
	} {
		if !strings.Contains(body, want+"\n") && !strings.HasSuffix(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
}

// The hourly throttle counts webhook wakes with poll wakes, per room.
func TestPrepareThrottle(t *testing.T) {
	e := newPrepEnv(t)
	e.hermes.MaxWakesPerHour = 2
	e.post(t, "richard", e.general, "@agent-hermes per Poll", rcfake.PostOptions{})
	e.tick(t) // one wake in general this hour
	if e.disp.Len() != 1 {
		t.Fatalf("setup: %d poll jobs", e.disp.Len())
	}
	a := e.post(t, "richard", e.general, "@agent-hermes eins", rcfake.PostOptions{})
	if _, ok := e.prepare(t, a, e.hermes.Rules, 2); !ok {
		t.Fatal("the second wake of the hour was refused")
	}
	for i := range 2 {
		b := e.post(t, "richard", e.general, "@agent-hermes zu viel", rcfake.PostOptions{})
		if _, ok := e.prepare(t, b, e.hermes.Rules, 2); ok {
			t.Fatalf("wake %d over the limit was allowed", i+3)
		}
	}
	if n := e.logs.Count("wake throttle reached; silent in this room until the next hour"); n != 1 {
		t.Errorf("throttle logged %d times, want once", n)
	}
	d := e.post(t, "richard", e.dmRich, "anderer Raum", rcfake.PostOptions{})
	if _, ok := e.prepare(t, d, e.hermes.Rules, 2); !ok {
		t.Error("another room was throttled too")
	}
	e.clk.Set(t0.Add(time.Hour))
	c := e.post(t, "richard", e.general, "@agent-hermes neue Stunde", rcfake.PostOptions{})
	if _, ok := e.prepare(t, c, e.hermes.Rules, 2); !ok {
		t.Error("no wake in the next hour")
	}
}

func TestPrepareErrors(t *testing.T) {
	e := newPrepEnv(t)
	m := e.post(t, "richard", e.general, "@agent-hermes hallo", rcfake.PostOptions{})
	in := sb.WakeJob{AgentID: "hermes", Pending: &sb.PendingMessage{RoomID: e.general, MessageID: m.ID}}

	e.src.getErr = sb.E("rocketchat.chat.getMessage", sb.EUNAVAILABLE, "Rocket.Chat is down")
	if _, ok, err := e.prep.Prepare(context.Background(), in, e.src, e.hermes.Rules, 12); ok || sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Errorf("GetMessage failing: ok %v err %v, want the error", ok, err)
	}
	e.src.getErr = nil
	gone := in
	gone.Pending = &sb.PendingMessage{RoomID: e.general, MessageID: "deleted"}
	if _, ok, err := e.prep.Prepare(context.Background(), gone, e.src, e.hermes.Rules, 12); ok || sb.ErrorCode(err) != sb.ENOTFOUND {
		t.Errorf("unknown message: ok %v err %v, want ENOTFOUND", ok, err)
	}
	e.src.load(t, map[string]sb.RoomType{e.general: sb.RoomChannel})
	e.src.infoErr = sb.E("rocketchat.rooms.info", sb.EFORBIDDEN, "no access")
	if _, ok, err := e.prep.Prepare(context.Background(), in, e.src, e.hermes.Rules, 12); ok || sb.ErrorCode(err) != sb.EFORBIDDEN {
		t.Errorf("RoomInfo failing: ok %v err %v, want the error", ok, err)
	}
}

func TestPrepareJobWithoutPending(t *testing.T) {
	e := newPrepEnv(t)
	in := sb.WakeJob{AgentID: "hermes", Source: "rocketchat-poll", Text: "already framed", MessageIDs: []string{"m1"}}
	got, ok, err := e.prep.Prepare(context.Background(), in, e.src, e.hermes.Rules, 12)
	if err != nil || !ok || got.Text != in.Text || got.Pending != nil || e.src.gets != 0 {
		t.Errorf("Prepare(poll job) = %+v, %v, %v with %d fetches; want it unchanged, no fetch", got, ok, err, e.src.gets)
	}
}

// The webhook path end to end: Rocket.Chat delivers, the receiver queues in
// the local pool, the worker prepares the job from the fetched message,
// runs the agent and posts the answer into the thread as the agent.
func TestWebhookToReplyEndToEnd(t *testing.T) {
	e := newPrepEnv(t)
	e.rc.SetWebhookToken(hookToken)
	runs := make(chan sb.WakeJob, 4)
	done := make(chan error, 4)
	wakes := &sb.WakeClaims{KV: e.store.KV(), Now: e.clk.Now}
	w := &wake.Worker{
		Leases: e.store,
		Preparer: prepareFunc(func(ctx context.Context, j sb.WakeJob) (sb.WakeJob, bool, error) {
			return e.prep.Prepare(ctx, j, e.src, e.hermes.Rules, 12)
		}),
		Runner: runFunc(func(_ context.Context, j sb.WakeJob) (agentrun.Result, error) {
			runs <- j
			return answered("hermes", "Die Zahlen stimmen."), nil
		}),
		Replies: replyFunc(func(ctx context.Context, j sb.WakeJob, _ sb.RunContext, text string) error {
			_, err := e.hermesChat.PostMessage(ctx, j.ReplyTo.RoomID, text, j.ReplyTo.ThreadID)
			return err
		}),
		Claims: wakes, RunFor: time.Minute, WaitFor: time.Second, Now: e.clk.Now,
	}
	log, _ := newLog()
	pool := wake.NewPool(2, 8, func(ctx context.Context, j sb.WakeJob) error {
		err := w.Handle(ctx, j)
		done <- err
		return err
	}, log)
	t.Cleanup(func() { pool.Close(context.Background()) })
	recv := wake.NewReceiver([]string{hookToken}, []wake.WebhookAgent{{ID: "hermes", UserID: e.ids["agent-hermes"],
		Username: "agent-hermes", AgentUsernames: []string{"agent-hermes", "agent-atlas"}, MentionOnly: true}}, wakes, pool, log)
	srv := httptest.NewServer(httpapi.RocketChatWebhook(recv))
	t.Cleanup(srv.Close)

	parent := e.post(t, "richard", e.general, "Quartal", rcfake.PostOptions{})
	m := e.post(t, "richard", e.general, "@agent-hermes stimmen die Zahlen?", rcfake.PostOptions{Tmid: parent.ID})
	e.src.load(t, map[string]sb.RoomType{e.general: sb.RoomChannel})
	for range 2 { // the delivery and Rocket.Chat's retry
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(string(e.rc.OutgoingWebhookPayload(m))))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("webhook answered %d", resp.StatusCode)
		}
	}
	if err := within(t, 5*time.Second, done, "the worker"); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	j := within(t, time.Second, runs, "the run")
	checkPrepared(t, j, wake.ReplyTo{RoomID: e.general, RoomName: "general", ThreadID: parent.ID}, m)
	msgs := e.rc.Messages(e.general)
	last := msgs[len(msgs)-1]
	if last.Username != "agent-hermes" || last.Text != "Die Zahlen stimmen." || last.ThreadID != parent.ID {
		t.Errorf("last message %+v, want the agent's answer in the thread", last)
	}
	select {
	case j := <-runs:
		t.Errorf("the retried delivery ran again: %+v", j)
	case <-time.After(100 * time.Millisecond):
	}
}
