package rctool_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
)

func TestSendMessageRooms(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name     string
		args     map[string]any
		wantRoom string // room id
		wantName string
	}{
		{"channel by name", map[string]any{"room": "finanz-team", "text": "Hallo Team"}, e.finanz, "#finanz-team"},
		{"channel by #name", map[string]any{"room": "#finanz-team", "text": "mit Raute"}, e.finanz, "#finanz-team"},
		{"channel by id", map[string]any{"room": e.finanz, "text": "per id"}, e.finanz, "#finanz-team"},
		{"private group by name", map[string]any{"room": "vorstand", "text": "intern"}, e.vorstand, "#vorstand"},
		{"DM by counterpart username", map[string]any{"room": "richard", "text": "direkt"}, e.dmRichard, "@richard"},
		{"DM by @username (existing)", map[string]any{"room": "@richard", "text": "mit at"}, e.dmRichard, "@richard"},
		{"DM by room id", map[string]any{"room": e.dmRichard, "text": "dm per id"}, e.dmRichard, "@richard"},
		{"default room when room is left out", map[string]any{"text": "ohne Raum"}, e.finanz, "#finanz-team"},
		{"public channel the agent has not joined", map[string]any{"room": "general", "text": "hallo general"}, e.general, "#general"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := e.ok("send_message", jsonArgs(tt.args))
			if got := str(env, "roomId"); got != tt.wantRoom {
				t.Errorf("roomId = %q, want %q", got, tt.wantRoom)
			}
			if got := str(env, "room"); got != tt.wantName {
				t.Errorf("room = %q, want %q", got, tt.wantName)
			}
			if _, err := time.Parse(time.RFC3339Nano, str(env, "ts")); err != nil {
				t.Errorf("ts = %q: %v", str(env, "ts"), err)
			}
			msgs := e.rc.Messages(tt.wantRoom)
			last := msgs[len(msgs)-1]
			if last.ID != str(env, "messageId") || last.Text != tt.args["text"] || last.Username != agentRC {
				t.Errorf("stored message = %+v, answer %v", last, env.Data)
			}
		})
	}
	if n := e.rc.Calls("im.create"); n != 0 {
		t.Errorf("im.create called %d times for existing rooms, want 0", n)
	}
}

func TestSendMessageThreadAndReply(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root, err := e.rc.Post("richard", e.finanz, "Frage zum Budget", rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	env := e.ok("send_message", jsonArgs(map[string]any{"room": "finanz-team", "text": "im Thread", "tmid": root.ID}))
	if str(env, "tmid") != root.ID {
		t.Errorf("tmid = %q, want %q", str(env, "tmid"), root.ID)
	}
	env = e.ok("reply", jsonArgs(map[string]any{"room": "finanz-team", "tmid": root.ID, "text": "Antwort"}))
	if str(env, "roomId") != e.finanz {
		t.Errorf("reply roomId = %q, want %q (the reply path compares it)", str(env, "roomId"), e.finanz)
	}
	msgs := e.rc.Messages(e.finanz)
	for _, m := range msgs[len(msgs)-2:] {
		if m.ThreadID != root.ID {
			t.Errorf("message %q has thread %q, want %q", m.Text, m.ThreadID, root.ID)
		}
	}
	e.fails("reply", jsonArgs(map[string]any{"room": "finanz-team", "text": "x"}), `missing argument "tmid"`)
	e.fails("reply", jsonArgs(map[string]any{"tmid": root.ID, "text": "x"}), `missing argument "room"`)
	e.fails("reply", jsonArgs(map[string]any{"room": "finanz-team", "tmid": "../x", "text": "x"}), "not a Rocket.Chat id")
}

// TestAtNameOpensDM: only an explicit "@name" opens a new DM; a plain name
// that is nobody's room is an unknown room.
func TestAtNameOpensDM(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	env := e.fails("send_message", jsonArgs(map[string]any{"room": "anna", "text": "hallo"}),
		`unknown room "anna"`, `write "@anna" to start a direct message`)
	if env.HTTPStatus != 400 || env.Endpoint != "GET /api/v1/rooms.info" {
		t.Errorf("http_status/endpoint = %d %q, want 400 GET /api/v1/rooms.info", env.HTTPStatus, env.Endpoint)
	}
	if n := e.rc.Calls("im.create"); n != 0 {
		t.Fatalf("a plain name opened a DM (im.create called %d times)", n)
	}

	env = e.ok("send_message", jsonArgs(map[string]any{"room": "@anna", "text": "hallo Anna"}))
	if n := e.rc.Calls("im.create"); n != 1 {
		t.Fatalf("im.create called %d times, want 1", n)
	}
	rid := str(env, "roomId")
	if str(env, "room") != "@anna" {
		t.Errorf("room = %q, want @anna", str(env, "room"))
	}
	msgs := e.rc.Messages(rid)
	if len(msgs) != 1 || msgs[0].Text != "hallo Anna" {
		t.Fatalf("DM messages = %+v", msgs)
	}
	if _, ok := e.rc.Subscription("anna", rid); !ok {
		t.Errorf("anna has no subscription to the new DM %s", rid)
	}

	// Now the DM exists: both spellings find it without a second im.create.
	e.ok("send_message", jsonArgs(map[string]any{"room": "@anna", "text": "nochmal"}))
	e.ok("send_message", jsonArgs(map[string]any{"room": "anna", "text": "ohne at"}))
	if n := e.rc.Calls("im.create"); n != 1 {
		t.Errorf("im.create called %d times, want still 1", n)
	}
	if got := len(e.rc.Messages(rid)); got != 3 {
		t.Errorf("DM has %d messages, want 3", got)
	}

	e.fails("send_message", jsonArgs(map[string]any{"room": "@nobody", "text": "x"}), `unknown user "nobody"`)
}

func TestUnknownRoom(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, room := range []string{"no-such-room", "#no-such-room"} {
		env := e.fails("send_message", jsonArgs(map[string]any{"room": room, "text": "x"}),
			"unknown room "+`"`+room+`"`, "list_rooms")
		if env.HTTPStatus != 400 || !strings.HasPrefix(env.Endpoint, "GET /api/v1/rooms.info") {
			t.Errorf("%s: http_status/endpoint = %d %q", room, env.HTTPStatus, env.Endpoint)
		}
		if env.Data["code"] != sb.ENOTFOUND {
			t.Errorf("%s: code = %v, want %s", room, env.Data["code"], sb.ENOTFOUND)
		}
	}
	e.fails("read_room", `{"room":"no-such-room"}`, `unknown room "no-such-room"`)
	// A private group the agent is not in is no unknown room: the server
	// says it is not allowed.
	env := e.fails("send_message", `{"room":"geheim","text":"x"}`, "not allowed")
	if env.HTTPStatus != 400 {
		t.Errorf("geheim: http_status = %d", env.HTTPStatus)
	}
}

// TestAllowedRooms: rooms outside allowedRooms are refused by the tool itself, for DMs by the
// counterpart's username, for reading as well as sending.
func TestAllowedRooms(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.configure(func(a *rctool.Agent) { a.AllowedRooms = []string{"finanz-team", "richard"} })

	e.ok("send_message", `{"room":"finanz-team","text":"erlaubt"}`)
	e.ok("send_message", jsonArgs(map[string]any{"room": e.finanz, "text": "erlaubt per id"}))
	e.ok("send_message", `{"room":"richard","text":"DM erlaubt"}`)
	e.ok("send_message", `{"room":"@richard","text":"DM erlaubt"}`)
	e.ok("send_message", `{"text":"default room"}`)

	before := len(e.rc.Messages(e.vorstand))
	for _, args := range []string{
		`{"room":"vorstand","text":"nicht erlaubt"}`,
		`{"room":"` + e.vorstand + `","text":"per id"}`,
		`{"room":"general","text":"public"}`,
	} {
		env := e.fails("send_message", args, "not in this agent's allowedRooms (finanz-team, richard)")
		if env.Data["code"] != sb.EFORBIDDEN {
			t.Errorf("%s: code %v", args, env.Data["code"])
		}
	}
	if got := len(e.rc.Messages(e.vorstand)); got != before {
		t.Errorf("vorstand got %d new messages", got-before)
	}
	e.fails("send_message", `{"room":"@anna","text":"neuer DM"}`, "@anna is not in this agent's allowedRooms")
	if n := e.rc.Calls("im.create"); n != 0 {
		t.Errorf("im.create called %d times for a user outside the list", n)
	}
	e.fails("reply", `{"room":"vorstand","tmid":"abc","text":"x"}`, "allowedRooms")
	e.fails("read_room", `{"room":"vorstand"}`, "allowedRooms")
	e.fails("mark_read", `{"room":"vorstand"}`, "allowedRooms")
	e.fails("search", `{"room":"vorstand","query":"x"}`, "allowedRooms")

	e.configure(func(a *rctool.Agent) { a.DefaultRoom = "vorstand" })
	e.fails("send_message", `{"text":"default room outside the list"}`, "#vorstand is not in")
}

// TestCondition: the staging condition for sends outside allowedRooms.
func TestCondition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cond := func(action, args string) string { return e.tool.Condition(e.call(action, args)) }

	if got := cond("send_message", `{"room":"vorstand","text":"x"}`); got != "" {
		t.Errorf("empty allowedRooms: condition %q, want \"\"", got)
	}
	e.configure(func(a *rctool.Agent) { a.AllowedRooms = []string{"finanz-team", "richard"} })
	tests := []struct {
		action, args, want string
	}{
		{"send_message", `{"room":"finanz-team","text":"x"}`, ""},
		{"send_message", `{"room":"#finanz-team","text":"x"}`, ""},
		{"send_message", `{"room":"` + e.finanz + `","text":"x"}`, ""},
		{"send_message", `{"room":"richard","text":"x"}`, ""},
		{"send_message", `{"room":"@richard","text":"x"}`, ""},
		{"send_message", `{"room":"` + e.dmRichard + `","text":"x"}`, ""},
		{"send_message", `{"text":"default room finanz-team"}`, ""},
		{"send_message", `{"room":"vorstand","text":"x"}`, "other_room"},
		{"send_message", `{"room":"` + e.vorstand + `","text":"x"}`, "other_room"},
		{"send_message", `{"room":"@anna","text":"x"}`, "other_room"},
		{"send_message", `{"room":"general","text":"x"}`, "other_room"},
		{"reply", `{"room":"vorstand","tmid":"a","text":"x"}`, "other_room"},
		{"send_file", `{"room":"vorstand","localPath":"a.md"}`, "other_room"},
		{"send_file", `{"room":"finanz-team","localPath":"a.md"}`, ""},
		{"read_room", `{"room":"vorstand"}`, ""},              // not a send; Invoke refuses it
		{"send_message", `{"room":"no-such","text":"x"}`, ""}, // Invoke says "unknown room"
		{"send_message", `not json`, ""},
	}
	for _, tt := range tests {
		if got := cond(tt.action, tt.args); got != tt.want {
			t.Errorf("Condition(%s %s) = %q, want %q", tt.action, tt.args, got, tt.want)
		}
	}
	if n := e.rc.Calls("im.create"); n != 0 {
		t.Errorf("Condition opened a DM (im.create %d)", n)
	}
}

// TestRoomCache: room lookups share one subscriptions.get for CacheTTL; a
// miss asks again at once.
func TestRoomCache(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Date(2026, 8, 14, 10, 0, 0, 0, time.UTC)
	e.tool.SetClock(func() time.Time { return now })
	for range 3 {
		e.ok("send_message", `{"room":"finanz-team","text":"x"}`)
	}
	if n := e.rc.Calls("subscriptions.get"); n != 1 {
		t.Errorf("subscriptions.get called %d times for 3 sends, want 1", n)
	}
	// A room joined after the cache was filled is found by a fresh call.
	if err := e.rc.Join(agentRC, e.general); err != nil {
		t.Fatal(err)
	}
	e.ok("read_room", `{"room":"general"}`)
	if n := e.rc.Calls("subscriptions.get"); n != 2 {
		t.Errorf("subscriptions.get called %d times, want 2 (refresh on a miss)", n)
	}
	now = now.Add(rctool.CacheTTL)
	e.ok("send_message", `{"room":"finanz-team","text":"x"}`)
	if n := e.rc.Calls("subscriptions.get"); n != 3 {
		t.Errorf("subscriptions.get called %d times, want 3 (expired)", n)
	}
}

// TestRateLimited: a 429 from Rocket.Chat becomes an envelope that says when
// to retry.
func TestRateLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rc.SetRateLimit(1, time.Minute)
	e.ok("list_rooms", `{}`)
	env := e.fails("list_rooms", `{}`, "rate limited (429)", "wait")
	if env.HTTPStatus != 429 || env.Endpoint != "GET /api/v1/subscriptions.get" {
		t.Errorf("http_status/endpoint = %d %q", env.HTTPStatus, env.Endpoint)
	}
	if env.Data["code"] != sb.ERATELIMITED {
		t.Errorf("code = %v", env.Data["code"])
	}
	if s := num(env, "retryAfterSeconds"); s < 1 || s > 60 {
		t.Errorf("retryAfterSeconds = %d, want 1..60", s)
	}

	// A 429 without X-RateLimit-Reset still says when.
	e.rc.SetRateLimit(0, 0)
	e.rc.FailNext("chat.postMessage", 429, `{"success":false,"error":"too many"}`)
	env = e.fails("send_message", `{"room":"finanz-team","text":"x"}`, "429", "wait about a minute")
	if env.HTTPStatus != 429 || env.Endpoint != "POST /api/v1/chat.postMessage" || num(env, "retryAfterSeconds") != 60 {
		t.Errorf("envelope = %+v", env)
	}
}

// TestRocketChatFailures: server failures reach the model as envelopes with
// status and endpoint, never with credentials.
func TestRocketChatFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rc.SetDown(true)
	env := e.fails("send_message", `{"room":"finanz-team","text":"x"}`, "try again later")
	if env.HTTPStatus != 503 || env.Endpoint != "GET /api/v1/subscriptions.get" || env.Data["code"] != sb.EUNAVAILABLE {
		t.Errorf("down: %+v", env)
	}
	e.rc.SetDown(false)

	e.rc.FailNext("chat.postMessage", 401, `{"success":false,"error":"You must be logged in to do this."}`)
	env = e.fails("send_message", `{"room":"finanz-team","text":"x"}`, "authToken")
	if env.HTTPStatus != 401 || env.Endpoint != "POST /api/v1/chat.postMessage" {
		t.Errorf("401: %+v", env)
	}
	if strings.Contains(env.Error+env.Endpoint, e.rc.URL) {
		t.Errorf("envelope names the server address: %+v", env)
	}
	e.rc.FailNext("chat.postMessage", 400, `{"success":false,"error":"error-message-size-exceeded"}`)
	e.fails("send_message", `{"room":"finanz-team","text":"x"}`, "shorten it")
}

// TestNoCredentialsInAnswers: the auth token appears in no envelope, even
// when the server echoes it.
func TestNoCredentialsInAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ok("list_rooms", `{}`)
	token := e.rc.Requests()[0].Header.Get("X-Auth-Token")
	if token == "" {
		t.Fatal("no token recorded")
	}
	e.rc.FailNext("chat.postMessage", 400, `{"success":false,"error":"bad token `+token+`"}`)
	env := e.fails("send_message", `{"room":"finanz-team","text":"x"}`)
	if strings.Contains(env.Error, token) || strings.Contains(env.Endpoint, token) {
		t.Errorf("token leaked: %+v", env)
	}
}

func TestArgumentValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	long := strings.Repeat("x", 5001)
	tests := []struct {
		action, args, want string
	}{
		{"send_message", `{"room":"finanz-team"}`, `missing argument "text"`},
		{"send_message", `{"room":"finanz-team","text":"   "}`, `argument "text" is empty`},
		{"send_message", `{"room":"finanz-team","text":"` + long + `"}`, "5001 characters; at most 5000"},
		{"send_message", `{"room":"finanz-team","text":"x","channel":"y"}`, `unknown argument "channel"`},
		{"send_message", `{"room":"finanz-team","Text":"x"}`, `unknown argument "Text"`},
		{"send_message", `{"room":1,"text":"x"}`, `argument "room" must be a string`},
		{"send_message", `{"room":"finanz-team","text":"x"} {}`, "one JSON object"},
		{"send_message", `["x"]`, "one JSON object"},
		{"send_message", `{"room":"","text":"x"}`, `argument "room" is empty`},
		{"send_message", `{"room":"finanz-team","text":"x","tmid":"a/b"}`, "not a Rocket.Chat id"},
		{"read_room", `{"room":"finanz-team","count":0}`, "from 1 to 100"},
		{"read_room", `{"room":"finanz-team","count":101}`, "from 1 to 100"},
		{"read_room", `{"room":"finanz-team","count":"5"}`, `argument "count" must be a whole number`},
		{"read_room", `{}`, `missing argument "room"`},
		{"list_rooms", `{"room":"x"}`, `unknown argument "room"; list_rooms takes no arguments`},
		{"react", `{"messageId":"abc","emoji":"<script>"}`, "not an emoji name"},
		{"search", `{"room":"finanz-team"}`, `missing argument "query"`},
		{"nope", `{}`, "unknown action"},
	}
	for _, tt := range tests {
		env := e.fails(tt.action, tt.args, tt.want)
		if env.Data["code"] != sb.EINVALID {
			t.Errorf("%s %s: code = %v, want %s", tt.action, tt.args, env.Data["code"], sb.EINVALID)
		}
	}
	if n := e.rc.Calls("chat.postMessage"); n != 0 {
		t.Errorf("invalid arguments reached Rocket.Chat (%d posts)", n)
	}
	// Without a default room the room is required.
	e.configure(func(a *rctool.Agent) { a.DefaultRoom = "" })
	e.fails("send_message", `{"text":"x"}`, "no defaultRoom")
}

func TestUnconfiguredAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	call := e.call("list_rooms", `{}`)
	call.AgentID = "atlas"
	env := e.tool.Invoke(context.Background(), call)
	if env.Status != "error" || !strings.Contains(env.Error, "no RocketChat tool") || env.Data["code"] != sb.EFORBIDDEN {
		t.Errorf("envelope = %+v", env)
	}
}
