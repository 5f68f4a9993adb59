package wake_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// gateChat is a Rocket.Chat whose subscriptions call waits until `want`
// calls are in flight at once (or every expected call has started), so a
// poll that asks agents one after another never gets past the first.
type gateChat struct {
	mu                  sync.Mutex
	cond                *sync.Cond
	want, total         int
	inFlight, maxFlight int
	started             int
	failFor             map[int]bool // call numbers that fail
}

func newGateChat(want, total int) *gateChat {
	g := &gateChat{want: want, total: total}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *gateChat) Subscriptions(ctx context.Context, _ time.Time) ([]sb.ChatSubscription, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.started++
	n := g.started
	g.inFlight++
	g.maxFlight = max(g.maxFlight, g.inFlight)
	g.cond.Broadcast()
	stop := context.AfterFunc(ctx, func() { g.mu.Lock(); g.cond.Broadcast(); g.mu.Unlock() })
	defer stop()
	for g.inFlight < g.want && g.started < g.total && ctx.Err() == nil {
		g.cond.Wait()
	}
	g.inFlight--
	if ctx.Err() != nil {
		return nil, fmt.Errorf("call %d waited for the others in vain: %w", n, ctx.Err())
	}
	if g.failFor[n] {
		return nil, errors.New("subscriptions.get: 503")
	}
	return nil, nil
}

func (g *gateChat) History(context.Context, sb.RoomType, string, time.Time, int, bool) ([]sb.ChatMessage, error) {
	return nil, nil
}
func (g *gateChat) MarkRead(context.Context, string) error { return nil }

// A tick polls its agents at the same time, never more than the bound, and
// sums what each did.
func TestPollAsksAgentsInParallelWithABound(t *testing.T) {
	tests := []struct {
		name     string
		parallel int
		agents   int
		wantMax  int
	}{
		{name: "default bound", parallel: 0, agents: 10, wantMax: wake.DefaultPollParallel},
		{name: "bound 2", parallel: 2, agents: 5, wantMax: 2},
		{name: "fewer agents than the bound", parallel: 4, agents: 3, wantMax: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gate := newGateChat(tc.wantMax, tc.agents)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			store := &memstore.Store{}
			p := &wake.Poller{KV: store.KV(), Counters: store, Claims: store, Wakes: &sb.WakeClaims{KV: store.KV()},
				Dispatch: &dispatcher{}, Log: slog.New(slog.DiscardHandler), Loc: time.UTC, Now: time.Now, Parallel: tc.parallel}
			var agents []wake.PollAgent
			for i := range tc.agents {
				agents = append(agents, wake.PollAgent{ID: fmt.Sprintf("agent%d", i), Chat: gate, MaxMessages: 20})
			}
			st, err := p.Tick(ctx, agents)
			if err != nil {
				t.Fatal(err)
			}
			if st.Agents != tc.agents {
				t.Errorf("polled %d agents, want %d", st.Agents, tc.agents)
			}
			if gate.maxFlight != tc.wantMax {
				t.Errorf("at most %d agents at once, want %d", gate.maxFlight, tc.wantMax)
			}
		})
	}
}

// One agent's failure is reported by name and does not stop the others.
func TestParallelPollReportsEachFailingAgent(t *testing.T) {
	gate := newGateChat(4, 6)
	gate.failFor = map[int]bool{1: true}
	store := &memstore.Store{}
	p := &wake.Poller{KV: store.KV(), Counters: store, Claims: store, Wakes: &sb.WakeClaims{KV: store.KV()},
		Dispatch: &dispatcher{}, Log: slog.New(slog.DiscardHandler), Loc: time.UTC, Now: time.Now}
	var agents []wake.PollAgent
	for i := range 6 {
		agents = append(agents, wake.PollAgent{ID: fmt.Sprintf("agent%d", i), Chat: gate})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := p.Tick(ctx, agents)
	if err == nil || gate.started != 6 {
		t.Fatalf("err = %v after %d calls, want one failure and all 6 agents asked", err, gate.started)
	}
	if got := err.Error(); !strings.Contains(got, "rocketchat-poll agent") || !strings.Contains(got, "503") {
		t.Errorf("error %q does not name the agent and the failure", got)
	}
	if st.Agents != 6 {
		t.Errorf("polled %d agents, want 6", st.Agents)
	}
}
