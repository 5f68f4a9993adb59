package health_test

// BUG (shared/usecases/health/health.go:92-104): the "give the notice back" undo is a
// single PutIf against the state this tick wrote. When another tick wrote in
// between (ticks overlap while the slow delivery runs), the undo fails with
// ECONFLICT, is only logged, and the state keeps Notified=true although no
// notice ever arrived: the outage notice is lost for good.
//
// Copy into shared/usecases/health/ to run: go test -race -run TestTickNoticeNotLostWhenTicksOverlap ./shared/usecases/health

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/platform/logtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/health"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// gatedChannel blocks its first Send until released, then fails it; later
// sends succeed.
type gatedChannel struct {
	entered, release chan struct{}
	mu               sync.Mutex
	calls            int
	delivered        []string
}

func (c *gatedChannel) Name() string { return "Telegram" }

func (c *gatedChannel) Send(_ context.Context, n router.Notice) error {
	c.mu.Lock()
	c.calls++
	first := c.calls == 1
	c.mu.Unlock()
	if first {
		close(c.entered)
		<-c.release
		return sb.E("telegram.sendMessage", sb.EUNAVAILABLE, "Telegram sendMessage: timeout")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delivered = append(c.delivered, n.Text)
	return nil
}

func TestTickNoticeNotLostWhenTicksOverlap(t *testing.T) {
	store := memstore.New()
	ch := &gatedChannel{entered: make(chan struct{}), release: make(chan struct{})}
	var logs logtest.Buffer
	srv := &server{}
	clk := clocktest.New(t0)
	c := &health.Checker{Info: srv.info, KV: store.KV(), Key: key,
		Notify: router.New([]router.Channel{ch}, store, discard()), Loc: cest, Now: clk.Now,
		Log: slog.New(slog.NewTextHandler(&logs, nil))}

	for range 2 { // failures 1 and 2
		if _, err := c.Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// Tick A: third failure, writes Notified=true, delivery hangs…
	errA := make(chan error, 1)
	go func() { _, err := c.Tick(t.Context()); errA <- err }()
	<-ch.entered
	// …meanwhile tick B (the next scheduled one, or a retry) runs.
	if _, err := c.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	// A's delivery fails; it tries to give the notice back.
	close(ch.release)
	if err := <-errA; err == nil {
		t.Fatal("tick A: want the delivery error")
	}
	// Rocket.Chat stays down; the next ticks must deliver the owed notice.
	for range 3 {
		_, _ = c.Tick(t.Context())
	}
	st, _, _ := store.KV().Get(context.Background(), key)
	if len(ch.delivered) != 1 || ch.delivered[0] != outageAt0900 {
		t.Errorf("delivered %q, want exactly [%q]: the outage notice was lost (state %s; log: %s)",
			ch.delivered, outageAt0900, st, strings.TrimSpace(logs.String()))
	}
}
