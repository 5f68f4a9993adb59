package notices_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals/notices"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// channel records the notices it was given; a named one answers a
// Telegram reference to message 42.
type channel struct {
	name string
	fail error
	got  []router.Notice
}

func (c *channel) Name() string { return c.name }

func (c *channel) Send(ctx context.Context, n router.Notice) error {
	_, err := c.SendRef(ctx, n)
	return err
}

func (c *channel) SendRef(_ context.Context, n router.Notice) (json.RawMessage, error) {
	if c.fail != nil {
		return nil, c.fail
	}
	c.got = append(c.got, n)
	if c.name != "Telegram" {
		return nil, nil
	}
	return json.Marshal(router.TelegramRef{ChatID: "7", MessageID: 42})
}

// editor records the edits of Telegram messages.
type editor struct {
	err   error
	edits []string // "chat/message: text"
}

func (e *editor) EditMessageText(_ context.Context, chatID string, messageID int64, text string, markup *sb.TelegramKeyboard) error {
	if markup != nil {
		return errors.New("an outcome keeps no buttons")
	}
	e.edits = append(e.edits, fmt.Sprintf("%s/%d: %s", chatID, messageID, text))
	return e.err
}

func notifier(rc, tg *channel, ed *editor) *notices.Notifier {
	channels := []router.Channel{rc}
	n := &notices.Notifier{Names: func(id string) string { return "Agent " + id }}
	if tg != nil {
		channels = append(channels, tg)
		n.Telegram = tg
	}
	n.Router = router.New(channels, memstore.New(), slog.New(slog.DiscardHandler))
	if ed != nil {
		n.Edits = ed
	}
	return n
}

func request() approvals.Request {
	return approvals.Request{Approval: approvals.Approval{ID: "ap1", AgentID: "hermes", Tool: "Nextcloud", Action: "delete",
		Args: json.RawMessage(`{"path":"/a.txt"}`), Status: approvals.StatusPending},
		ApproveURL: "https://x.test/a?token=1", DenyURL: "https://x.test/d?token=2"}
}

// A request goes to Telegram first, with both links and the two buttons,
// and names the Telegram message for the outcome.
func TestNoticesRequestPrefersTelegram(t *testing.T) {
	rc, tg := &channel{name: "RocketChat"}, &channel{name: "Telegram"}
	ref, err := notifier(rc, tg, nil).RequestApproval(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.got) != 0 || len(tg.got) != 1 {
		t.Fatalf("Rocket.Chat got %d, Telegram %d notices; want only Telegram's one", len(rc.got), len(tg.got))
	}
	n := tg.got[0]
	for _, want := range []string{"Agent hermes", "Approve: https://x.test/a?token=1", "Deny: https://x.test/d?token=2"} {
		if !strings.Contains(n.Text, want) {
			t.Errorf("text %q lacks %q", n.Text, want)
		}
	}
	if n.Kind != router.KindApproval || n.Buttons == nil || len(n.Buttons.Rows) != 1 || len(n.Buttons.Rows[0]) != 2 {
		t.Fatalf("notice %+v, want an approval with one row of two buttons", n)
	}
	if got, want := n.Buttons.Rows[0][0].CallbackData, approvals.CallbackData(approvals.Approve, "ap1"); got != want {
		t.Errorf("approve button %q, want %q", got, want)
	}
	if got, want := n.Buttons.Rows[0][1].CallbackData, approvals.CallbackData(approvals.Deny, "ap1"); got != want {
		t.Errorf("deny button %q, want %q", got, want)
	}
	if string(ref) != `{"chatId":"7","messageId":42}` {
		t.Errorf("reference %s, want the Telegram message", ref)
	}
}

// When Telegram cannot take a request it reaches the human over the
// next channel, and there is no message to edit later.
func TestNoticesRequestFallsBackWithoutTelegram(t *testing.T) {
	rc, tg := &channel{name: "RocketChat"}, &channel{name: "Telegram", fail: sb.E("tg", sb.ERATELIMITED, "flood")}
	ref, err := notifier(rc, tg, nil).RequestApproval(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.got) != 1 || ref != nil {
		t.Errorf("Rocket.Chat got %d notices, reference %s; want one and none", len(rc.got), ref)
	}
}

func TestNoticesDecided(t *testing.T) {
	telegramRef := json.RawMessage(`{"chatId":"7","messageId":42}`)
	tests := []struct {
		name      string
		status    approvals.Status
		notice    json.RawMessage
		editErr   error
		wantEdits int
		wantSent  int
		wantErr   bool
	}{
		{name: "edits the Telegram message", status: approvals.StatusDenied, notice: telegramRef, wantEdits: 1},
		{name: "not modified is done", status: approvals.StatusDenied, notice: telegramRef, editErr: sb.E("tg", sb.ECONFLICT, "not modified"), wantEdits: 1},
		{name: "a failed edit is reported, not posted anew", status: approvals.StatusDenied, notice: telegramRef, editErr: sb.E("tg", sb.ERATELIMITED, "flood"), wantEdits: 1, wantErr: true},
		{name: "no message: the outcome is posted", status: approvals.StatusDenied, wantSent: 1},
		{name: "no message and approved: nothing before the result", status: approvals.StatusApproved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, ed := &channel{name: "RocketChat"}, &editor{err: tt.editErr}
			ap := request().Approval
			ap.Status, ap.Notice, ap.DecidedBy = tt.status, tt.notice, "human"
			err := notifier(rc, nil, ed).Decided(context.Background(), ap)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if len(ed.edits) != tt.wantEdits || len(rc.got) != tt.wantSent {
				t.Fatalf("edits %q, %d sent; want %d and %d", ed.edits, len(rc.got), tt.wantEdits, tt.wantSent)
			}
			if tt.wantEdits > 0 && (!strings.HasPrefix(ed.edits[0], "7/42: ") || !strings.Contains(ed.edits[0], "Outcome: ")) {
				t.Errorf("edit %q, want message 42 of chat 7 with the outcome", ed.edits[0])
			}
		})
	}
}
