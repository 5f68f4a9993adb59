package agentrun_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

func TestBudgetOver(t *testing.T) {
	// The store keeps claims against the wall clock, so the test runs on it.
	now := time.Now().UTC()
	day := now.Truncate(24 * time.Hour)
	spend := func(t *testing.T, s *memstore.Store, agent string, usd float64, at time.Time) {
		t.Helper()
		run := sb.NewRun(agent, nil, at)
		if err := s.Put(context.Background(), sb.Receipt{Run: run, AgentID: agent, StartedAt: at, CostUSD: usd, Outcome: "answered"}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name      string
		limit     float64
		spent     float64
		yesterday float64
		notifyErr error
		wantOver  bool
		wantSaid  int // notices over two checks
	}{
		{name: "no budget", limit: 0, spent: 100},
		{name: "under", limit: 5, spent: 4.99},
		{name: "yesterday does not count", limit: 5, yesterday: 50, spent: 1},
		{name: "reached: told once", limit: 5, spent: 5, wantOver: true, wantSaid: 1},
		{name: "notice lost: told again next time", limit: 5, spent: 6, notifyErr: errors.New("telegram down"), wantOver: true, wantSaid: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := memstore.New()
			if tt.spent > 0 {
				spend(t, s, "hermes", tt.spent, day)
			}
			if tt.yesterday > 0 {
				spend(t, s, "hermes", tt.yesterday, day.Add(-time.Hour))
			}
			var said []string
			b := &agentrun.Budget{
				Store:  s,
				Limits: oneLimit{usd: tt.limit, name: "Hermes"},
				Notifier: noticeFunc(func(_ context.Context, text string) error {
					said = append(said, text)
					return tt.notifyErr
				}),
				Now: func() time.Time { return now },
			}
			for i := 0; i < 2; i++ {
				over, err := b.Over(context.Background(), "hermes")
				if err != nil || over != tt.wantOver {
					t.Fatalf("check %d: Over = %v, %v; want %v, nil", i+1, over, err, tt.wantOver)
				}
			}
			if len(said) != tt.wantSaid {
				t.Fatalf("notices = %q, want %d", said, tt.wantSaid)
			}
			if len(said) > 0 && !strings.Contains(said[0], "Hermes reached its daily budget of $5.00") {
				t.Errorf("notice = %q, want the name and the limit", said[0])
			}
		})
	}
}

// oneLimit gives every agent the same budget and name.
type oneLimit struct {
	usd  float64
	name string
}

func (l oneLimit) DailyBudget(string) (float64, string) { return l.usd, l.name }

// noticeFunc is a BudgetNotifier made of a function.
type noticeFunc func(ctx context.Context, text string) error

func (f noticeFunc) NotifyBudget(ctx context.Context, text string) error { return f(ctx, text) }
