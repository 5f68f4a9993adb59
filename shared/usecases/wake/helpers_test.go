package wake_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/platform/logtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake/waketest"
)

// t0 is a Monday morning in the seed's test month.
var t0 = time.Date(2026, 8, 3, 10, 0, 0, 0, time.UTC)

type clock = clocktest.Clock

func newClock(t time.Time) *clock { return clocktest.New(t) }

// logs captures what a *slog.Logger writes.
type logs = logtest.Records

func newLog() (*slog.Logger, *logs) { return logtest.New() }

// dispatcher records jobs (waketest.Dispatcher).
type dispatcher = waketest.Dispatcher

// finishClaims is a dispatcher's complete hook that marks a job's wake
// claims done, as the worker does once it answered.
func finishClaims(w wake.WakeStore) func(sb.WakeJob) {
	return func(j sb.WakeJob) {
		if j.Claim == nil {
			return
		}
		for _, k := range j.Claim.Keys {
			if err := w.Finish(context.Background(), k, wake.OutcomeAnswered); err != nil {
				panic(err)
			}
		}
	}
}

// beginClaims is a dispatcher's complete hook that begins a job's claims
// and never finishes them: a worker that started the run and then died.
func beginClaims(w wake.WakeStore, until time.Time) func(sb.WakeJob) {
	return func(j sb.WakeJob) {
		if j.Claim == nil {
			return
		}
		for _, k := range j.Claim.Keys {
			if _, _, err := w.Begin(context.Background(), k, j.Claim.Owner, until); err != nil {
				panic(err)
			}
		}
	}
}

// unavailable is the error a full queue or a throttled Lambda gives.
func unavailable() error { return sb.E("test.dispatch", sb.EUNAVAILABLE, "queue full; try again") }

// Store wrappers that count every call, to prove a quiet tick touches no
// store at all.

type countKV struct {
	sb.KV
	n *atomic.Int64
}

func (c countKV) Get(ctx context.Context, key string) (string, bool, error) {
	c.n.Add(1)
	return c.KV.Get(ctx, key)
}

func (c countKV) Put(ctx context.Context, key, value string, expires time.Time) error {
	c.n.Add(1)
	return c.KV.Put(ctx, key, value, expires)
}

func (c countKV) PutIf(ctx context.Context, key, old, value string, expires time.Time) error {
	c.n.Add(1)
	return c.KV.PutIf(ctx, key, old, value, expires)
}

type countCounters struct {
	sb.Counters
	n *atomic.Int64
}

func (c countCounters) Incr(ctx context.Context, key string, limit int, expires time.Time) (int, bool, error) {
	c.n.Add(1)
	return c.Counters.Incr(ctx, key, limit, expires)
}

func (c countCounters) Reset(ctx context.Context, key string) error {
	c.n.Add(1)
	return c.Counters.Reset(ctx, key)
}

type countClaims struct {
	wake.Claims
	n *atomic.Int64
}

func (c countClaims) Claim(ctx context.Context, key string, expires time.Time) (bool, error) {
	c.n.Add(1)
	return c.Claims.Claim(ctx, key, expires)
}

func (c countClaims) Unclaim(ctx context.Context, key string) error {
	c.n.Add(1)
	return c.Claims.Unclaim(ctx, key)
}

// withoutType drops got's room type when want names none: most tests do
// not care about the kind of room, only that it is known (for links).
func withoutType(got, want wake.ReplyTo) wake.ReplyTo {
	if want.RoomType == "" && got.RoomType != "" {
		got.RoomType = ""
	}
	return got
}

func (c countCounters) Peek(ctx context.Context, key string) (int, error) {
	c.n.Add(1)
	return c.Counters.Peek(ctx, key)
}
