package wake_test

// Tests that expose issues in shared/usecases/wake/poll.go. They use the helpers of
// the committed poll_test.go / helpers_test.go. Kept out of the commit.

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// poll.go wake(): Throttle counts the wake BEFORE Dispatch; when Dispatch
// fails the claims are released (so "the next tick tries again") but the
// count is kept. The retry is then counted a second time and, at the limit,
// throttled: the marker moves past the message and the wake is lost for
// good. With maxWakesPerRoomPerHour 1 a single transient queue error drops
// the mention.
func TestPollDispatchFailureDoesNotBurnThrottle(t *testing.T) {
	e := newPollEnv(t)
	e.hermes.MaxWakesPerHour = 1
	m := e.post(t, "richard", e.general, "@agent-hermes bitte", rcfake.PostOptions{})
	e.disp.FailNext(unavailable())
	e.clk.Add(10 * time.Second)
	if _, err := e.poller.Tick(context.Background(), []wake.PollAgent{e.hermes}); err == nil {
		t.Fatal("precondition: the first tick should fail")
	}
	st := e.tick(t)
	if st.Wakes != 1 || e.disp.Len() != 1 || e.disp.All()[0].MessageIDs[0] != m.ID {
		t.Errorf("the retry after a failed dispatch did not wake: %+v (throttled %d)", e.disp.All(), st.Throttled)
	}
}

// livechatChat is a fake sb.ChatReader with one omnichannel (livechat)
// subscription that has news. rocketchat.Client.History answers EINVALID
// for room type "l" ("has no history endpoint"); poll.go room() returns
// that error before MarkRead, so the room stays "new" forever: every tick
// fails with the same error and costs a history attempt. Suggested fix:
// skip (or just mark read) subscriptions whose type has no history
// endpoint in the agent() pre-filter.
type livechatChat struct{ reads int }

func (c *livechatChat) Subscriptions(context.Context, time.Time) ([]sb.ChatSubscription, error) {
	return []sb.ChatSubscription{{RoomID: "lc1", Type: sb.RoomLivechat, Name: "visitor", Alert: true, Unread: 1}}, nil
}

func (c *livechatChat) History(context.Context, sb.RoomType, string, time.Time, int, bool) ([]sb.ChatMessage, error) {
	return nil, sb.E("rocketchat.history", sb.EINVALID, `Rocket.Chat history of room lc1: room type "l" has no history endpoint`)
}

func (c *livechatChat) MarkRead(context.Context, string) error { c.reads++; return nil }

func TestPollLivechatRoomDoesNotFailEveryTick(t *testing.T) {
	e := newPollEnv(t)
	chat := &livechatChat{}
	a := e.hermes
	a.Chat = chat
	for i := range 3 {
		if _, err := e.poller.Tick(context.Background(), []wake.PollAgent{a}); err != nil {
			t.Errorf("tick %d: %v", i+1, err)
		}
	}
}

// Poller.Loc is used as is: a Poller (or Preparer) without Loc panics in
// FormatMessages (time.Time.In(nil)) on the first wake. app.go sets
// time.UTC, so this only bites other callers; defaulting nil to UTC in
// FormatMessages would make the zero value safe.
func TestPollNilLocDoesNotPanic(t *testing.T) {
	e := newPollEnv(t)
	e.poller.Loc = nil
	e.post(t, "richard", e.dmRich, "hallo", rcfake.PostOptions{})
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("Tick panicked with a nil Loc: %v", r)
		}
	}()
	e.tick(t)
}
