package wake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

const hookToken = "tok-new-3f9a"

// hookEnv is a receiver behind an httptest server on 127.0.0.1, fed with
// the bodies rcfake builds for its outgoing webhook.
type hookEnv struct {
	rc                     *rcfake.Server
	ids                    map[string]string
	general, finanz        string
	dmRichard, dmRichAtlas string
	clk                    *clock
	store                  *memstore.Store
	disp                   *dispatcher
	logs                   *logs
	url                    string
}

func hermesHook(ids map[string]string) wake.WebhookAgent {
	return wake.WebhookAgent{ID: "hermes", UserID: ids["agent-hermes"], Username: "agent-hermes",
		AgentUsernames: []string{"agent-hermes", "agent-atlas"}, MentionOnly: true}
}

func atlasHook(ids map[string]string) wake.WebhookAgent {
	return wake.WebhookAgent{ID: "atlas", UserID: ids["agent-atlas"], Username: "agent-atlas",
		AgentUsernames: []string{"agent-hermes", "agent-atlas"}, MentionOnly: true}
}

// newHookEnv builds the world; agents picks the receiver's agents once users
// and rooms exist (default: hermes only). d may replace the recording
// dispatcher.
func newHookEnv(t *testing.T, tokens []string, agents func(e *hookEnv) []wake.WebhookAgent, d sb.WakeDispatcher) *hookEnv {
	t.Helper()
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.SetWebhookToken(hookToken)
	clk := newClock(t0)
	rc.SetClock(clk.Now)
	e := &hookEnv{rc: rc, clk: clk, ids: map[string]string{}, store: memstore.New(), disp: &dispatcher{}}
	for _, u := range []string{"richard", "agent-hermes", "agent-atlas", "ci-bot"} {
		e.ids[u], _ = rc.AddUser(u)
	}
	e.general = rc.AddChannel("general", "richard", "agent-hermes", "agent-atlas", "ci-bot")
	e.finanz = rc.AddGroup("finanz-team", "richard", "agent-hermes", "agent-atlas")
	e.dmRichard = rc.AddDM("richard", "agent-hermes")
	e.dmRichAtlas = rc.AddDM("richard", "agent-atlas")
	if agents == nil {
		agents = func(e *hookEnv) []wake.WebhookAgent { return []wake.WebhookAgent{hermesHook(e.ids)} }
	}
	if d == nil {
		d = e.disp
	}
	log, logs := newLog()
	e.logs = logs
	srv := httptest.NewServer(httpapi.RocketChatWebhook(wake.NewReceiver(tokens, agents(e), &sb.WakeClaims{KV: e.store.KV()}, d, log)))
	t.Cleanup(srv.Close)
	e.url = srv.URL + "/hooks/rocketchat"
	return e
}

// post injects a message one second after the previous one, so that
// messages get distinct timestamps.
func (e *hookEnv) post(t *testing.T, as, rid, text string, opts rcfake.PostOptions) rcfake.Message {
	t.Helper()
	e.clk.Add(time.Second)
	return e.rc.MustPost(t, as, rid, text, opts)
}

// payload is the webhook body for m, changed by edit (keys set; a nil value
// deletes the key).
func (e *hookEnv) payload(t *testing.T, m rcfake.Message, edit map[string]any) []byte {
	t.Helper()
	raw := e.rc.OutgoingWebhookPayload(m)
	if edit == nil {
		return raw
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	for k, v := range edit {
		if v == nil {
			delete(obj, k)
		} else {
			obj[k] = v
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type hookAnswer struct {
	status int
	ctype  string
	raw    []byte
	obj    map[string]any
	took   time.Duration
}

// deliver POSTs body like Rocket.Chat does.
func (e *hookEnv) deliver(t *testing.T, body []byte) hookAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/41.0.2227.0 Safari/537.36")
	begin := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := hookAnswer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), raw: raw, took: time.Since(begin)}
	_ = json.Unmarshal(raw, &a.obj)
	return a
}

// checkOK asserts what makes Rocket.Chat count a delivery as done and post
// nothing: 200, a non-empty JSON body without text or attachments (an empty
// body would be retried).
func checkOK(t *testing.T, a hookAnswer) {
	t.Helper()
	if a.status != http.StatusOK {
		t.Fatalf("status %d (%s), want 200", a.status, a.raw)
	}
	checkJSONBody(t, a)
	for _, k := range []string{"text", "attachments", "msg"} {
		if _, ok := a.obj[k]; ok {
			t.Errorf("200 body %s has %q: Rocket.Chat would post it into the room", a.raw, k)
		}
	}
}

func checkJSONBody(t *testing.T, a hookAnswer) {
	t.Helper()
	if len(bytes.TrimSpace(a.raw)) == 0 {
		t.Fatalf("status %d with an empty body", a.status)
	}
	if a.obj == nil {
		t.Fatalf("body %q is not a JSON object", a.raw)
	}
	if !strings.HasPrefix(a.ctype, "application/json") {
		t.Errorf("Content-Type %q, want application/json (Rocket.Chat parses only JSON types)", a.ctype)
	}
}

func checkError(t *testing.T, a hookAnswer, status int) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d (%s), want %d", a.status, a.raw, status)
	}
	checkJSONBody(t, a)
	if a.obj["status"] != "error" {
		t.Errorf("body %s: status %v, want \"error\"", a.raw, a.obj["status"])
	}
	if e, _ := a.obj["error"].(string); e == "" {
		t.Errorf("body %s says nothing about what to do", a.raw)
	}
}

// the body token is compared against every configured token.
func TestReceiverTokens(t *testing.T) {
	tests := []struct {
		name  string
		token any // nil: no token key at all
		want  int
	}{
		{"current token", hookToken, http.StatusOK},
		{"previous token while rotating", "tok-old-71c2", http.StatusOK},
		{"wrong token", "tok-wrong-0000", http.StatusUnauthorized},
		{"prefix of the token", hookToken[:len(hookToken)-1], http.StatusUnauthorized},
		{"token plus a character", hookToken + "x", http.StatusUnauthorized},
		{"token in other case", strings.ToUpper(hookToken), http.StatusUnauthorized},
		{"token with a space", " " + hookToken, http.StatusUnauthorized},
		{"empty token", "", http.StatusUnauthorized},
		{"no token", nil, http.StatusUnauthorized},
		{"token of the wrong type", 42, http.StatusBadRequest},
	}
	e := newHookEnv(t, []string{"tok-old-71c2", hookToken, ""}, nil, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.disp.Len()
			m := e.post(t, "richard", e.general, "@agent-hermes bitte prüfen", rcfake.PostOptions{})
			a := e.deliver(t, e.payload(t, m, map[string]any{"token": tt.token}))
			queued := e.disp.Len() - before
			switch tt.want {
			case http.StatusOK:
				checkOK(t, a)
				if queued != 1 {
					t.Errorf("%d jobs queued, want 1", queued)
				}
			default:
				checkError(t, a, tt.want)
				if queued != 0 {
					t.Errorf("%d jobs queued for a refused delivery", queued)
				}
			}
			if strings.Contains(string(a.raw), hookToken) {
				t.Errorf("the answer echoes the token: %s", a.raw)
			}
		})
	}
}

// With no token configured every delivery is refused, an empty one too.
func TestReceiverNoTokensRefusesAll(t *testing.T) {
	for _, tokens := range [][]string{nil, {""}} {
		e := newHookEnv(t, tokens, nil, nil)
		m := e.post(t, "richard", e.general, "@agent-hermes hallo", rcfake.PostOptions{})
		for _, tok := range []any{"", hookToken, nil} {
			checkError(t, e.deliver(t, e.payload(t, m, map[string]any{"token": tok})), http.StatusUnauthorized)
		}
		if e.disp.Len() != 0 {
			t.Errorf("tokens %q: %d jobs queued", tokens, e.disp.Len())
		}
	}
}

// Messages that can never wake the agent are answered 200 (so Rocket.Chat
// does not retry) and queue nothing.
func TestReceiverIgnores(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, nil, nil)
	tests := []struct {
		name string
		as   string
		room func() string
		text string
		opts rcfake.PostOptions
		edit map[string]any
	}{
		{"bot:true", "ci-bot", func() string { return e.general }, "@agent-hermes build kaputt", rcfake.PostOptions{Bot: true}, nil},
		{"bot object of a saved message", "ci-bot", func() string { return e.general }, "@agent-hermes build kaputt", rcfake.PostOptions{},
			map[string]any{"bot": map[string]any{"i": "integration1"}}},
		{"own message", "agent-hermes", func() string { return e.general }, "@agent-hermes Notiz an mich", rcfake.PostOptions{}, nil},
		{"own message in the DM", "agent-hermes", func() string { return e.dmRichard }, "erledigt", rcfake.PostOptions{}, nil},
		{"own user id under another name", "richard", func() string { return e.general }, "@agent-hermes x", rcfake.PostOptions{},
			map[string]any{"user_id": e.ids["agent-hermes"]}},
		{"own username in other case", "richard", func() string { return e.general }, "@agent-hermes x", rcfake.PostOptions{},
			map[string]any{"user_name": "Agent-Hermes", "user_id": "someone"}},
		{"other agent without mention", "agent-atlas", func() string { return e.finanz }, "Bericht ist fertig", rcfake.PostOptions{}, nil},
		{"other agent mentions someone else", "agent-atlas", func() string { return e.finanz }, "@richard Bericht ist fertig", rcfake.PostOptions{}, nil},
		{"plain channel message", "richard", func() string { return e.general }, "guten Morgen", rcfake.PostOptions{}, nil},
		{"longer username that starts like the agent's", "richard", func() string { return e.general }, "@agent-hermes2 hallo", rcfake.PostOptions{}, nil},
		{"mail address", "richard", func() string { return e.general }, "schreib an x@agent-hermes.example", rcfake.PostOptions{}, nil},
		{"DM between two others", "richard", func() string { return e.dmRichAtlas }, "hallo Atlas", rcfake.PostOptions{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.disp.Len()
			m := e.post(t, tt.as, tt.room(), tt.text, tt.opts)
			checkOK(t, e.deliver(t, e.payload(t, m, tt.edit)))
			if got := e.disp.Len() - before; got != 0 {
				t.Errorf("%d jobs queued, want none: %+v", got, e.disp.All()[before:])
			}
		})
	}
}

func TestReceiverQueues(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, func(e *hookEnv) []wake.WebhookAgent {
		h := hermesHook(e.ids)
		h.RespondToAllRooms = []string{"finanz-team"}
		return []wake.WebhookAgent{h, atlasHook(e.ids)}
	}, nil)
	parent := e.post(t, "richard", e.general, "Thema Quartal", rcfake.PostOptions{})
	tests := []struct {
		name       string
		as, room   string
		text       string
		opts       rcfake.PostOptions
		edit       map[string]any
		wantAgents []string
		wantThread string
	}{
		{"mention in a channel", "richard", e.general, "@agent-hermes schau mal", rcfake.PostOptions{}, nil, []string{"hermes"}, ""},
		{"mention followed by punctuation", "richard", e.general, "Hallo @agent-hermes, schau mal", rcfake.PostOptions{}, nil, []string{"hermes"}, ""},
		{"mention in other case", "richard", e.general, "@Agent-Hermes schau mal", rcfake.PostOptions{Mentions: []string{"agent-hermes"}}, nil, []string{"hermes"}, ""},
		{"mention at the very end", "richard", e.general, "schau mal @agent-hermes", rcfake.PostOptions{}, nil, []string{"hermes"}, ""},
		{"two agents mentioned", "richard", e.general, "@agent-hermes @agent-atlas bitte abstimmen", rcfake.PostOptions{}, nil, []string{"hermes", "atlas"}, ""},
		{"DM without mention", "richard", e.dmRichard, "kannst du mir helfen?", rcfake.PostOptions{}, nil, []string{"hermes"}, ""},
		{"respondToAllRooms by name", "richard", e.finanz, "neue Zahlen sind da", rcfake.PostOptions{}, nil, []string{"hermes"}, ""},
		{"other agent with mention", "agent-atlas", e.general, "@agent-hermes übernimm bitte", rcfake.PostOptions{}, nil, []string{"hermes"}, ""},
		{"thread reply with mention", "richard", e.general, "@agent-hermes und hier?", rcfake.PostOptions{Tmid: parent.ID}, nil, []string{"hermes"}, parent.ID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.disp.Len()
			m := e.post(t, tt.as, tt.room, tt.text, tt.opts)
			checkOK(t, e.deliver(t, e.payload(t, m, tt.edit)))
			jobs := e.disp.All()[before:]
			if len(jobs) != len(tt.wantAgents) {
				t.Fatalf("%d jobs queued, want %d (%v): %+v", len(jobs), len(tt.wantAgents), tt.wantAgents, jobs)
			}
			for i, j := range jobs {
				if j.AgentID != tt.wantAgents[i] {
					t.Errorf("job %d for %q, want %q", i, j.AgentID, tt.wantAgents[i])
				}
				if j.Source != "rocketchat-webhook" {
					t.Errorf("source %q, want rocketchat-webhook", j.Source)
				}
				want := sb.PendingMessage{RoomID: tt.room, MessageID: m.ID, ThreadID: tt.wantThread}
				if j.Pending == nil || *j.Pending != want {
					t.Errorf("pending %+v, want %+v", j.Pending, want)
				}
				// The worker fetches and frames the message; nothing unframed
				// travels in the job.
				if j.Text != "" || j.ReplyTo != nil {
					t.Errorf("job carries text %q / reply %+v before it was prepared", j.Text, j.ReplyTo)
				}
			}
		})
	}
}

func TestReceiverRespondToAllByID(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, func(e *hookEnv) []wake.WebhookAgent {
		h := hermesHook(e.ids)
		h.RespondToAllRooms = []string{e.finanz}
		return []wake.WebhookAgent{h}
	}, nil)
	m := e.post(t, "richard", e.finanz, "neue Zahlen", rcfake.PostOptions{})
	checkOK(t, e.deliver(t, e.payload(t, m, nil)))
	if e.disp.Len() != 1 {
		t.Fatalf("%d jobs, want 1 for a room in respondToAllRooms by id", e.disp.Len())
	}
	other := e.post(t, "richard", e.general, "guten Morgen", rcfake.PostOptions{})
	checkOK(t, e.deliver(t, e.payload(t, other, nil)))
	if e.disp.Len() != 1 {
		t.Fatalf("a plain message in another room was queued")
	}
}

// a repeated delivery (Rocket.Chat's retry) wakes nobody twice. A
// delivery that says "edited" is queued for the worker to judge on the
// message it fetches (its editedAt), never claimed on the payload's word.
func TestReceiverDuplicatesAndEdits(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, nil, nil)
	m := e.post(t, "richard", e.general, "@agent-hermes erste Fassung", rcfake.PostOptions{})
	body := e.payload(t, m, nil)
	for i := range 3 {
		checkOK(t, e.deliver(t, body))
		if e.disp.Len() != 1 {
			t.Fatalf("after delivery %d: %d jobs, want 1", i+1, e.disp.Len())
		}
	}
	if j := e.disp.All()[0]; j.Pending.Edited || j.Claim == nil || len(j.Claim.Keys) != 1 {
		t.Fatalf("first job %+v / claim %+v, want a claimed, unedited message", j.Pending, j.Claim)
	}
	// The edit as rcfake delivers it (isEdited, message.ts unchanged).
	e.clk.Add(time.Minute)
	if err := e.rc.Edit(m.ID, "@agent-hermes zweite Fassung"); err != nil {
		t.Fatal(err)
	}
	edited := e.payload(t, m, nil)
	if !bytes.Contains(edited, []byte(`"isEdited":true`)) {
		t.Fatalf("rcfake payload of an edit lacks isEdited: %s", edited)
	}
	checkOK(t, e.deliver(t, edited))
	checkOK(t, e.deliver(t, edited)) // its retry
	if e.disp.Len() != 3 {
		t.Fatalf("after an edit and its retry: %d jobs, want 3", e.disp.Len())
	}
	for _, j := range e.disp.All()[1:] {
		if j.Pending == nil || j.Pending.MessageID != m.ID || !j.Pending.Edited || j.Claim == nil || len(j.Claim.Keys) != 0 {
			t.Errorf("edit job %+v / %+v, want message %s marked edited, its claim left to the worker", j.Pending, j.Claim, m.ID)
		}
	}
}

// A delivery that cannot be queued answers 503 (Rocket.Chat retries 503;
// a 500 with a body it never retries) and gives its claim back, so that the
// retry is queued and not taken for a duplicate.
func TestReceiverDispatchFailure(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, func(e *hookEnv) []wake.WebhookAgent {
		return []wake.WebhookAgent{hermesHook(e.ids), atlasHook(e.ids)}
	}, nil)
	m := e.post(t, "richard", e.general, "@agent-hermes @agent-atlas bitte", rcfake.PostOptions{})
	body := e.payload(t, m, nil)

	e.disp.FailNext(nil)           // hermes is queued
	e.disp.FailNext(unavailable()) // atlas is not
	a := e.deliver(t, body)
	checkError(t, a, http.StatusServiceUnavailable)
	if strings.Contains(string(a.raw), "queue full") {
		t.Errorf("503 body leaks the internal error: %s", a.raw)
	}
	if got := agentsOf(e.disp.All()); got != "hermes" {
		t.Fatalf("queued %q before the failure, want hermes", got)
	}
	checkOK(t, e.deliver(t, body)) // Rocket.Chat's retry
	if got := agentsOf(e.disp.All()); got != "hermes,atlas" {
		t.Fatalf("after the retry queued %q, want hermes,atlas (each once)", got)
	}
	if e.logs.Count("rocketchat webhook: temporary failure") != 1 {
		t.Errorf("the failure was not logged once")
	}
}

func agentsOf(jobs []sb.WakeJob) string {
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j.AgentID)
	}
	return strings.Join(ids, ",")
}

// failingClaims fails every Take: the store is down.
type failingClaims struct {
	wake.WakeStore
	n atomic.Int64
}

func (f *failingClaims) Take(context.Context, string, string, time.Time) (sb.WakeClaim, bool, error) {
	f.n.Add(1)
	return sb.WakeClaim{}, false, sb.E("kv.putIf", sb.EUNAVAILABLE, "the state table is busy")
}

func TestReceiverStoreDownIs503(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, nil, nil)
	log, _ := newLog()
	fc := &failingClaims{}
	srv := httptest.NewServer(httpapi.RocketChatWebhook(wake.NewReceiver([]string{hookToken}, []wake.WebhookAgent{hermesHook(e.ids)}, fc, e.disp, log)))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	m := e.post(t, "richard", e.general, "@agent-hermes hallo", rcfake.PostOptions{})
	checkError(t, e.deliver(t, e.payload(t, m, nil)), http.StatusServiceUnavailable)
	if fc.n.Load() != 1 || e.disp.Len() != 0 {
		t.Errorf("claims %d, jobs %d; want 1 and 0", fc.n.Load(), e.disp.Len())
	}
}

func TestReceiverMalformed(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, nil, nil)
	m := e.post(t, "richard", e.general, "@agent-hermes hallo", rcfake.PostOptions{})
	big := e.payload(t, m, map[string]any{"text": strings.Repeat("x", 1<<20)})
	tests := []struct {
		name string
		body []byte
		want int
	}{
		{"not JSON", []byte("token=" + hookToken), http.StatusBadRequest},
		{"empty", nil, http.StatusBadRequest},
		{"array", []byte(`[{"token":"` + hookToken + `"}]`), http.StatusBadRequest},
		{"truncated", e.payload(t, m, nil)[:40], http.StatusBadRequest},
		{"larger than 1 MiB", big, http.StatusBadRequest},
		{"no message_id", e.payload(t, m, map[string]any{"message_id": nil}), http.StatusBadRequest},
		{"no channel_id", e.payload(t, m, map[string]any{"channel_id": nil}), http.StatusBadRequest},
		{"message_id of the wrong type", e.payload(t, m, map[string]any{"message_id": 7}), http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkError(t, e.deliver(t, tt.body), tt.want)
		})
	}
	if e.disp.Len() != 0 {
		t.Errorf("%d jobs queued from malformed deliveries", e.disp.Len())
	}
}

// the receiver answers at once even when the runs are slow: the pool
// queues without waiting, and a full queue is refused at once with 503.
func TestReceiverAnswersFastWithSlowRuns(t *testing.T) {
	log, _ := newLog()
	started := make(chan struct{}, 8)
	release := make(chan struct{})
	pool := wake.NewPool(1, 1, func(ctx context.Context, _ sb.WakeJob) error {
		started <- struct{}{}
		select { // a run that takes "minutes"
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}, log)
	t.Cleanup(func() { close(release); pool.Close(context.Background()) })
	e := newHookEnv(t, []string{hookToken}, nil, pool)

	deliver := func(text string) hookAnswer {
		m := e.post(t, "richard", e.general, "@agent-hermes "+text, rcfake.PostOptions{})
		return e.deliver(t, e.payload(t, m, nil))
	}
	a := deliver("eins")
	checkOK(t, a)
	within(t, 5*time.Second, started, "the first run")
	b := deliver("zwei") // waits in the queue
	checkOK(t, b)
	c := deliver("drei") // queue full
	checkError(t, c, http.StatusServiceUnavailable)
	// The first run is held until the test ends, so these answers came
	// without waiting for it; the bound only turns a receiver that waits
	// for a run into a clear failure instead of a hung test.
	for i, x := range []hookAnswer{a, b, c} {
		if x.took > 5*time.Second {
			t.Errorf("answer %d took %v with a run still going; the receiver must answer without waiting for runs", i+1, x.took)
		}
	}
}

// The receiver serves any path and method the router gives it; a GET
// without a body is malformed, not a crash.
func TestReceiverGetIsBadRequest(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, nil, nil)
	resp, err := http.Get(e.url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET: %d, want 400", resp.StatusCode)
	}
}
