package router_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// rcWorld is a fake Rocket.Chat with the human (richard) and two agents
// with their own identities; ghost is an agent without a RocketChat block.
type rcWorld struct {
	s       *rcfake.Server
	clients map[string]*rocketchat.Client // agent id → its client
	users   map[string]string             // agent id → Rocket.Chat username
}

func newRCWorld(t *testing.T) *rcWorld {
	t.Helper()
	s := rcfake.New()
	t.Cleanup(s.Close)
	s.SetRateLimit(0, 0)
	w := &rcWorld{s: s, clients: map[string]*rocketchat.Client{},
		users: map[string]string{"hermes": "agent-hermes", "atlas": "agent-atlas"}}
	s.AddUser("richard")
	for id, username := range w.users {
		uid, token := s.AddUser(username, "bot", "user")
		c, err := rocketchat.New(s.URL, uid, token, s.Client())
		if err != nil {
			t.Fatal(err)
		}
		w.clients[id] = c
	}
	return w
}

func (w *rcWorld) lookup(agentID string) (sb.ChatPoster, bool) {
	c, ok := w.clients[agentID]
	return c, ok
}

// dm returns the messages of the DM between the human and username.
func (w *rcWorld) dm(username string) []rcfake.Message {
	return w.s.Messages(w.s.AddDM("richard", username))
}

func TestRocketChatChannelSends(t *testing.T) {
	tests := []struct {
		name     string
		human    string
		def      string
		notice   router.Notice
		wantFrom string // Rocket.Chat username the DM comes from
		wantText string
	}{
		{name: "agent speaks as itself",
			human: "richard", def: "hermes",
			notice:   router.Notice{Kind: router.KindAgent, AgentID: "atlas", Text: "The backup finished."},
			wantFrom: "agent-atlas", wantText: "The backup finished."},
		{name: "human written with @",
			human: "@richard", def: "hermes",
			notice:   router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "hi"},
			wantFrom: "agent-hermes", wantText: "hi"},
		{name: "system notice is prefixed and uses the default agent",
			human: "richard", def: "hermes",
			notice:   router.Notice{Kind: router.KindApproval, Text: "Approve Nextcloud.delete /Reports/q3.csv?"},
			wantFrom: "agent-hermes", wantText: "[Switchboard] Approve Nextcloud.delete /Reports/q3.csv?"},
		{name: "agent without identity falls back to the default agent",
			human: "richard", def: "atlas",
			notice:   router.Notice{Kind: router.KindAgent, AgentID: "ghost", Text: "from ghost"},
			wantFrom: "agent-atlas", wantText: "from ghost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newRCWorld(t)
			ch := &router.RocketChatChannel{Human: tt.human, Clients: w.lookup, Default: tt.def}
			if ch.Name() != "RocketChat" {
				t.Errorf("Name = %q, want RocketChat", ch.Name())
			}
			if err := ch.Send(testCtx(t), tt.notice); err != nil {
				t.Fatalf("Send: %v", err)
			}
			for _, username := range w.users {
				msgs := w.dm(username)
				if username != tt.wantFrom {
					if len(msgs) != 0 {
						t.Errorf("DM richard–%s has %d messages, want none", username, len(msgs))
					}
					continue
				}
				if len(msgs) != 1 {
					t.Fatalf("DM richard–%s has %d messages, want 1", username, len(msgs))
				}
				if m := msgs[0]; m.Text != tt.wantText || m.Username != tt.wantFrom {
					t.Errorf("message %q from %s, want %q from %s", m.Text, m.Username, tt.wantText, tt.wantFrom)
				}
			}
			if n := w.s.Calls("chat.postMessage"); n != 1 {
				t.Errorf("%d chat.postMessage calls, want 1", n)
			}
		})
	}
}

func TestRocketChatChannelErrors(t *testing.T) {
	tests := []struct {
		name     string
		human    string
		def      string
		down     bool
		notice   router.Notice
		wantCode string
		wantMsg  string
	}{
		{name: "no human configured", human: "", def: "hermes",
			notice:   router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "x"},
			wantCode: sb.EINVALID, wantMsg: "rocketchatUsername"},
		{name: "nobody to send with", human: "richard", def: "",
			notice:   router.Notice{Kind: router.KindOutage, Text: "x"},
			wantCode: sb.EINVALID, wantMsg: "RocketChat block"},
		{name: "default without identity either", human: "richard", def: "ghost",
			notice:   router.Notice{Kind: router.KindAgent, AgentID: "nobody", Text: "x"},
			wantCode: sb.EINVALID, wantMsg: "RocketChat block"},
		{name: "human unknown to Rocket.Chat", human: "nobody-here", def: "hermes",
			notice:   router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "x"},
			wantCode: sb.ENOTFOUND},
		{name: "Rocket.Chat down", human: "richard", def: "hermes", down: true,
			notice:   router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "x"},
			wantCode: sb.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newRCWorld(t)
			w.s.SetDown(tt.down)
			ch := &router.RocketChatChannel{Human: tt.human, Clients: w.lookup, Default: tt.def}
			err := ch.Send(testCtx(t), tt.notice)
			if got := sb.ErrorCode(err); err == nil || got != tt.wantCode {
				t.Fatalf("Send = %v (code %q), want code %q", err, got, tt.wantCode)
			}
			if !strings.Contains(sb.ErrorMessage(err), tt.wantMsg) {
				t.Errorf("message %q does not contain %q", sb.ErrorMessage(err), tt.wantMsg)
			}
			w.s.SetDown(false)
			for _, username := range w.users {
				if msgs := w.dm(username); len(msgs) != 0 {
					t.Errorf("DM richard–%s has %d messages after a failed send", username, len(msgs))
				}
			}
		})
	}
}

// Rocket.Chat down: the router moves on to the next channel and audits
// that the primary failed.
func TestRocketChatDownFallsBack(t *testing.T) {
	w := newRCWorld(t)
	w.s.SetDown(true)
	next := &fakeChannel{name: "Telegram"}
	r := router.New([]router.Channel{&router.RocketChatChannel{Human: "richard", Clients: w.lookup, Default: "hermes"}, next},
		memstore.New(), discard())
	d, err := r.Deliver(testCtx(t), router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "x",
		Run: sb.NewRun("hermes", nil, time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	if d.Channel != "Telegram" || !d.PrimaryFailed || len(d.Failures) != 1 || !strings.HasPrefix(d.Failures[0], "RocketChat: ") {
		t.Errorf("delivery = %+v, want Telegram after a RocketChat failure", d)
	}
	if len(next.sent()) != 1 {
		t.Errorf("Telegram got %d notices, want 1", len(next.sent()))
	}
	if n := w.s.Calls("chat.postMessage"); n != 1 {
		t.Errorf("%d chat.postMessage calls while down, want exactly 1 (no retries)", n)
	}
}
