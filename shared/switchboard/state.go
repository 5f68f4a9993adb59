package switchboard

import (
	"context"
	"time"
)

// Counters are bounded counters: the per-room hourly wake throttle (RC6),
// consecutive health-check failures (RC12).
type Counters interface {
	// Incr adds one to key unless it has reached limit (limit <= 0 means no
	// limit) and reports the count after the call and whether the increment
	// happened. It is one conditional write, safe under concurrent callers.
	// expires bounds the counter's life (zero = never); an expired counter
	// starts again from zero.
	Incr(ctx context.Context, key string, limit int, expires time.Time) (count int, allowed bool, err error)
	// Decr takes one increment back (the work it counted did not happen);
	// it never goes below zero, and a missing or expired key is fine.
	Decr(ctx context.Context, key string) error
	// Reset sets key back to zero (deleting it); resetting a missing key is fine.
	Reset(ctx context.Context, key string) error
}

// KV holds small state values: poll markers (RC5), health state (RC12).
type KV interface {
	// Get returns the value of key; found is false when it is absent or expired.
	Get(ctx context.Context, key string) (value string, found bool, err error)
	// Put writes key unconditionally. expires zero = never.
	Put(ctx context.Context, key, value string, expires time.Time) error
	// PutIf writes key only when its current value equals old ("" = absent
	// or expired); ECONFLICT otherwise. Used for compare-and-swap updates.
	PutIf(ctx context.Context, key, old, value string, expires time.Time) error
}

// Leases keep runs of one agent from overlapping (AG2).
type Leases interface {
	// Acquire takes key for holder until the given time. It reports false
	// when another holder has an unexpired lease; the same holder may
	// re-acquire (extend) its own lease. An expired lease can be taken by
	// anyone, so a crashed holder never blocks forever.
	Acquire(ctx context.Context, key, holder string, until time.Time) (bool, error)
	// Release gives key up if holder still has it; otherwise it does nothing.
	Release(ctx context.Context, key, holder string) error
}
