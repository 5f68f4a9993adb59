package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/recordtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// fakeChannel is a channel that answers err and remembers every notice.
type fakeChannel struct {
	name string
	err  error

	got recordtest.List[router.Notice]
}

var _ router.Channel = (*fakeChannel)(nil)

func (c *fakeChannel) Name() string { return c.name }

func (c *fakeChannel) Send(_ context.Context, n router.Notice) error {
	c.got.Add(n)
	return c.err
}

func (c *fakeChannel) sent() []router.Notice { return c.got.All() }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var (
	errRCDown = sb.E("rocketchat.chat.postMessage", sb.EUNAVAILABLE, "Rocket.Chat POST /api/v1/chat.postMessage: 503")
	errTGDown = sb.E("telegram.sendMessage", sb.EUNAVAILABLE, "Telegram sendMessage: 502")
)

// auditEntries returns the audit entries of the run chain root.
func auditEntries(t *testing.T, store *memstore.Store, root string) []sb.AuditEntry {
	t.Helper()
	entries, err := store.ByRoot(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// auditArgs decodes the Args of a router audit entry.
type auditArgs struct {
	Kind          string   `json:"kind"`
	Channel       string   `json:"channel"`
	PrimaryFailed bool     `json:"primaryFailed"`
	Failures      []string `json:"failures"`
	Chars         int      `json:"chars"`
}

func decodeArgs(t *testing.T, raw string) auditArgs {
	t.Helper()
	var a auditArgs
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("audit args %s: %v", raw, err)
	}
	return a
}

func TestDeliverTriesChannelsInOrder(t *testing.T) {
	tests := []struct {
		name        string
		errs        []error // one channel per entry: RocketChat, Telegram, Mail
		wantChannel string
		wantPrimary bool
		wantFail    []string // prefixes of Failures, in order
		wantCalls   []int
		wantErr     string // code
	}{
		{name: "primary delivers, nothing else is tried",
			errs: []error{nil, nil}, wantChannel: "RocketChat", wantCalls: []int{1, 0}},
		{name: "primary down, second delivers",
			errs: []error{errRCDown, nil}, wantChannel: "Telegram", wantPrimary: true,
			wantFail: []string{"RocketChat: " + errRCDown.Message}, wantCalls: []int{1, 1}},
		{name: "first two fail, third delivers",
			errs: []error{errRCDown, errTGDown, nil}, wantChannel: "Mail", wantPrimary: true,
			wantFail:  []string{"RocketChat: " + errRCDown.Message, "Telegram: " + errTGDown.Message},
			wantCalls: []int{1, 1, 1}},
		{name: "second fails but the primary delivered first",
			errs: []error{nil, errTGDown}, wantChannel: "RocketChat", wantCalls: []int{1, 0}},
		{name: "every channel fails",
			errs: []error{errRCDown, errTGDown}, wantPrimary: true,
			wantFail:  []string{"RocketChat: " + errRCDown.Message, "Telegram: " + errTGDown.Message},
			wantCalls: []int{1, 1}, wantErr: sb.EUNAVAILABLE},
		{name: "a non-domain error shows no internals",
			errs: []error{errors.New("dial tcp 10.0.0.7:443: secret internals"), nil}, wantChannel: "Telegram", wantPrimary: true,
			wantFail: []string{"RocketChat: internal error"}, wantCalls: []int{1, 1}},
		{name: "no channels at all",
			errs: nil, wantCalls: []int{}, wantErr: sb.EUNAVAILABLE},
	}
	names := []string{"RocketChat", "Telegram", "Mail"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chans []*fakeChannel
			var list []router.Channel
			for i, err := range tt.errs {
				c := &fakeChannel{name: names[i], err: err}
				chans = append(chans, c)
				list = append(list, c)
			}
			r := router.New(list, memstore.New(), discard())
			n := router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "the report is ready"}
			d, err := r.Deliver(testCtx(t), n)

			if got := sb.ErrorCode(err); err != nil && got != tt.wantErr || err == nil && tt.wantErr != "" {
				t.Fatalf("err = %v (code %q), want code %q", err, got, tt.wantErr)
			}
			if d.Channel != tt.wantChannel {
				t.Errorf("Channel = %q, want %q", d.Channel, tt.wantChannel)
			}
			if d.PrimaryFailed != tt.wantPrimary {
				t.Errorf("PrimaryFailed = %v, want %v", d.PrimaryFailed, tt.wantPrimary)
			}
			if len(d.Failures) != len(tt.wantFail) {
				t.Fatalf("Failures = %q, want %d entries starting %q", d.Failures, len(tt.wantFail), tt.wantFail)
			}
			for i, f := range d.Failures {
				if !strings.HasPrefix(f, tt.wantFail[i]) {
					t.Errorf("Failures[%d] = %q, want prefix %q", i, f, tt.wantFail[i])
				}
				if strings.Contains(f, "secret internals") {
					t.Errorf("Failures[%d] = %q leaks the internal error", i, f)
				}
			}
			for i, c := range chans {
				got := c.sent()
				if len(got) != tt.wantCalls[i] {
					t.Errorf("%s got %d notices, want %d", c.name, len(got), tt.wantCalls[i])
				}
				for _, g := range got {
					if !reflect.DeepEqual(g, n) {
						t.Errorf("%s got %+v, want the notice unchanged %+v", c.name, g, n)
					}
				}
			}
			if tt.wantErr != "" {
				msg := sb.ErrorMessage(err)
				if !strings.Contains(msg, "not delivered") {
					t.Errorf("message %q does not say the message was not delivered", msg)
				}
				for _, c := range chans {
					if !strings.Contains(msg, c.name) {
						t.Errorf("message %q does not name channel %s", msg, c.name)
					}
				}
				for _, c := range chans {
					if !errors.Is(err, c.err) {
						t.Errorf("errors.Is(err, %s's error) = false; the causes must stay in the chain", c.name)
					}
				}
			}
		})
	}
}

func TestDeliverAudits(t *testing.T) {
	start := time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		notice      router.Notice
		errs        []error
		wantAgent   string
		wantOutcome string
		wantArgs    auditArgs
		wantErrText string
	}{
		{name: "primary delivers",
			notice:    router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "Grüße"},
			errs:      []error{nil, nil},
			wantAgent: "hermes", wantOutcome: sb.OutcomeOK,
			wantArgs: auditArgs{Kind: router.KindAgent, Channel: "RocketChat", Chars: 5}},
		{name: "fallback records that the primary failed",
			notice:    router.Notice{Kind: router.KindApproval, AgentID: "hermes", Text: "approve?"},
			errs:      []error{errRCDown, nil},
			wantAgent: "hermes", wantOutcome: sb.OutcomeOK,
			wantArgs: auditArgs{Kind: router.KindApproval, Channel: "Telegram", PrimaryFailed: true,
				Failures: []string{"RocketChat: " + errRCDown.Message}, Chars: 8}},
		{name: "system notice is audited as system",
			notice:    router.Notice{Kind: router.KindOutage, Text: "down"},
			errs:      []error{errRCDown, nil},
			wantAgent: "system", wantOutcome: sb.OutcomeOK,
			wantArgs: auditArgs{Kind: router.KindOutage, Channel: "Telegram", PrimaryFailed: true,
				Failures: []string{"RocketChat: " + errRCDown.Message}, Chars: 4}},
		{name: "nothing delivered is an error entry",
			notice:    router.Notice{Kind: router.KindBudget, Text: "over budget"},
			errs:      []error{errRCDown, errTGDown},
			wantAgent: "system", wantOutcome: sb.OutcomeError,
			wantArgs: auditArgs{Kind: router.KindBudget, PrimaryFailed: true,
				Failures: []string{"RocketChat: " + errRCDown.Message, "Telegram: " + errTGDown.Message}, Chars: 11},
			wantErrText: "no channel could reach the human"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memstore.New()
			list := []router.Channel{&fakeChannel{name: "RocketChat", err: tt.errs[0]}, &fakeChannel{name: "Telegram", err: tt.errs[1]}}
			r := router.New(list, store, discard())
			n := tt.notice
			n.Run = sb.NewRun("hermes", nil, start)
			_, _ = r.Deliver(testCtx(t), n)

			entries := auditEntries(t, store, n.Run.RootRunID)
			if len(entries) != 1 {
				t.Fatalf("%d audit entries, want exactly 1: %+v", len(entries), entries)
			}
			e := entries[0]
			if e.Tool != "router" || e.Action != "deliver" {
				t.Errorf("Tool.Action = %s.%s, want router.deliver", e.Tool, e.Action)
			}
			if e.AgentID != tt.wantAgent {
				t.Errorf("AgentID = %q, want %q", e.AgentID, tt.wantAgent)
			}
			if e.Run != n.Run {
				t.Errorf("Run = %+v, want %+v", e.Run, n.Run)
			}
			if e.Decision != sb.DecisionAuto {
				t.Errorf("Decision = %q, want auto (system delivery needs no approval)", e.Decision)
			}
			if e.Outcome != tt.wantOutcome {
				t.Errorf("Outcome = %q, want %q", e.Outcome, tt.wantOutcome)
			}
			if tt.wantErrText == "" && e.Error != "" {
				t.Errorf("Error = %q, want none", e.Error)
			}
			if tt.wantErrText != "" && !strings.Contains(e.Error, tt.wantErrText) {
				t.Errorf("Error = %q, want it to contain %q", e.Error, tt.wantErrText)
			}
			if e.ID == "" || e.At.IsZero() || e.At.Location() != time.UTC {
				t.Errorf("ID %q, At %v: want an id and a UTC time", e.ID, e.At)
			}
			// Strict decoding: the args hold the length, never the text.
			if got := decodeArgs(t, e.Args); !reflect.DeepEqual(got, tt.wantArgs) {
				t.Errorf("args = %+v, want %+v", got, tt.wantArgs)
			}
		})
	}
}

// failingAudit refuses every entry.
type failingAudit struct{ sb.AuditStore }

func (failingAudit) Append(context.Context, sb.AuditEntry) error {
	return sb.E("audit.append", sb.EUNAVAILABLE, "DynamoDB is throttling")
}

func TestDeliverSurvivesAuditFailure(t *testing.T) {
	tg := &fakeChannel{name: "Telegram"}
	r := router.New([]router.Channel{tg}, failingAudit{}, discard())
	d, err := r.Deliver(testCtx(t), router.Notice{Kind: router.KindWatchdog, Text: "stuck run"})
	if err != nil {
		t.Fatalf("Deliver: %v; a failed audit write must not turn a delivered message into a failure", err)
	}
	if d.Channel != "Telegram" || len(tg.sent()) != 1 {
		t.Errorf("delivery %+v, %d sends; want one via Telegram", d, len(tg.sent()))
	}
}

func TestDeliverAuditsEveryDelivery(t *testing.T) {
	store := memstore.New()
	r := router.New([]router.Channel{&fakeChannel{name: "RocketChat"}}, store, discard())
	run := sb.NewRun("hermes", nil, time.Now())
	for range 3 {
		if _, err := r.Deliver(testCtx(t), router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "x", Run: run}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(auditEntries(t, store, run.RootRunID)); n != 3 {
		t.Errorf("%d audit entries for 3 deliveries, want 3", n)
	}
}

func TestWithout(t *testing.T) {
	rc := &fakeChannel{name: "RocketChat"}
	tg := &fakeChannel{name: "Telegram"}
	mail := &fakeChannel{name: "Mail"}
	r := router.New([]router.Channel{rc, tg, mail}, memstore.New(), discard())

	tests := []struct {
		name    string
		without string
		want    []string
	}{
		{"drops the primary", "RocketChat", []string{"Telegram", "Mail"}},
		{"drops one in the middle, keeps the order", "Telegram", []string{"RocketChat", "Mail"}},
		{"unknown name keeps everything", "Fax", []string{"RocketChat", "Telegram", "Mail"}},
		{"names are exact", "rocketchat", []string{"RocketChat", "Telegram", "Mail"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Without(tt.without).Channels(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Without(%q).Channels() = %v, want %v", tt.without, got, tt.want)
			}
		})
	}
	if got, want := r.Channels(), []string{"RocketChat", "Telegram", "Mail"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the original router changed: %v, want %v", got, want)
	}
	if got := r.Without("RocketChat").Without("Telegram").Channels(); !reflect.DeepEqual(got, []string{"Mail"}) {
		t.Errorf("chained Without = %v, want [Mail]", got)
	}
}

func TestWithoutSkipsTheChannelWhenDelivering(t *testing.T) {
	store := memstore.New()
	rc := &fakeChannel{name: "RocketChat"}
	tg := &fakeChannel{name: "Telegram"}
	r := router.New([]router.Channel{rc, tg}, store, discard()).Without("RocketChat")
	run := sb.NewRun("hermes", nil, time.Now())
	d, err := r.Deliver(testCtx(t), router.Notice{Kind: router.KindOutage, Text: "Rocket.Chat unreachable", Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.sent()) != 0 {
		t.Errorf("Rocket.Chat was tried %d times; Without must skip it", len(rc.sent()))
	}
	// Telegram is now the first channel: its success is no primary failure.
	if d.Channel != "Telegram" || d.PrimaryFailed || len(d.Failures) != 0 {
		t.Errorf("delivery = %+v, want Telegram, primary not failed", d)
	}
	if entries := auditEntries(t, store, run.RootRunID); len(entries) != 1 {
		t.Errorf("%d audit entries, want 1: Without keeps the audit store", len(entries))
	}
}

func TestWithoutEveryChannelIsUnavailable(t *testing.T) {
	r := router.New([]router.Channel{&fakeChannel{name: "RocketChat"}}, memstore.New(), discard()).Without("RocketChat")
	d, err := r.Deliver(testCtx(t), router.Notice{Kind: router.KindOutage, Text: "x"})
	if sb.ErrorCode(err) != sb.EUNAVAILABLE || d.Channel != "" {
		t.Errorf("Deliver = %+v, %v; want EUNAVAILABLE and no channel", d, err)
	}
}

func TestDeliveryJSON(t *testing.T) {
	tests := []struct {
		name string
		d    router.Delivery
		want string
	}{
		{"delivered", router.Delivery{Channel: "RocketChat"}, `{"channel":"RocketChat","primaryFailed":false}`},
		{"fallback", router.Delivery{Channel: "Telegram", PrimaryFailed: true, Failures: []string{"RocketChat: down"}},
			`{"channel":"Telegram","primaryFailed":true,"failures":["RocketChat: down"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.d)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
}
