package agentrun

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// BudgetStore is what the daily budget reads and claims: the sum of an
// agent's receipts since a time, and a once-only marker (Claim answers
// false when the key is claimed already; Unclaim gives it back).
type BudgetStore interface {
	AgentCostSince(ctx context.Context, agentID string, since time.Time) (float64, error)
	Claim(ctx context.Context, key string, expires time.Time) (bool, error)
	Unclaim(ctx context.Context, key string) error
}

// BudgetLimits gives an agent's daily budget in USD (0: none) and the name
// the human knows the agent by.
type BudgetLimits interface {
	DailyBudget(agentID string) (usd float64, name string)
}

// BudgetNotifier tells the human that an agent used up its budget. An
// error gives the day's claim back, so that the next wake tries again.
type BudgetNotifier interface {
	NotifyBudget(ctx context.Context, text string) error
}

// Budget applies an agent's daily budget: when the agent's receipts of
// today (UTC) reach its limit it takes no wakes until 00:00 UTC, and the
// human is told once per agent and day.
type Budget struct {
	Store    BudgetStore
	Limits   BudgetLimits
	Notifier BudgetNotifier
	Now      func() time.Time // time.Now when nil
	Log      *slog.Logger
}

// Over reports whether agentID has used up today's budget, telling the
// human the first time it is found so on a day.
func (b *Budget) Over(ctx context.Context, agentID string) (bool, error) {
	limit, name := b.Limits.DailyBudget(agentID)
	if limit <= 0 {
		return false, nil
	}
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	day := now().UTC().Truncate(24 * time.Hour)
	spent, err := b.Store.AgentCostSince(ctx, agentID, day)
	if err != nil || spent < limit {
		return false, err
	}
	key := "budget#" + agentID + "#" + day.Format("2006-01-02")
	first, err := b.Store.Claim(ctx, key, day.Add(48*time.Hour))
	if err != nil || !first {
		return true, err
	}
	text := fmt.Sprintf("%s reached its daily budget of $%.2f ($%.2f spent today) and takes no new requests until 00:00 UTC.",
		name, limit, spent)
	if err := b.Notifier.NotifyBudget(ctx, text); err != nil {
		// The human must hear about it once, not never.
		b.log().ErrorContext(ctx, "budget notice not delivered; will retry on the next wake", "agent", agentID, "err", err)
		if uerr := b.Store.Unclaim(context.WithoutCancel(ctx), key); uerr != nil {
			b.log().ErrorContext(ctx, "budget notice claim could not be given back", "agent", agentID, "err", uerr)
		}
	}
	return true, nil
}

func (b *Budget) log() *slog.Logger {
	if b.Log != nil {
		return b.Log
	}
	return slog.Default()
}
