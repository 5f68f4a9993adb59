package switchboard

import (
	"context"
	"encoding/json"
	"time"
)

// Counters are bounded counters: the per-room hourly wake throttle,
// consecutive health-check failures.
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
	// Peek reads key's count without counting: 0 when it is missing or
	// expired. One read, so a caller can turn work away before it writes.
	Peek(ctx context.Context, key string) (int, error)
}

// KV holds small state values: poll markers, health state.
type KV interface {
	// Get returns the value of key; found is false when it is absent or expired.
	Get(ctx context.Context, key string) (value string, found bool, err error)
	// Put writes key unconditionally. expires zero = never.
	Put(ctx context.Context, key, value string, expires time.Time) error
	// PutIf writes key only when its current value equals old ("" = absent
	// or expired); ECONFLICT otherwise. Used for compare-and-swap updates.
	PutIf(ctx context.Context, key, old, value string, expires time.Time) error
}

// Leases keep runs of one agent from overlapping.
type Leases interface {
	// Acquire takes key for holder until the given time. It reports false
	// when another holder has an unexpired lease; the same holder may
	// re-acquire (extend) its own lease. An expired lease can be taken by
	// anyone, so a crashed holder never blocks forever.
	Acquire(ctx context.Context, key, holder string, until time.Time) (bool, error)
	// Release gives key up if holder still has it; otherwise it does nothing.
	Release(ctx context.Context, key, holder string) error
}

// Claim states of a wake claim.
const (
	ClaimInProgress = "in_progress" // a run owns the work until Until
	ClaimDone       = "done"        // answered, or deliberately not answered
)

// WakeClaim is the state of one (agent, message) wake: in progress while a
// run owns it, done once the message was answered or deliberately left
// unanswered. Attempt counts the runs that began on it, across retries and
// take-overs, so that a worker knows its last attempt without help from the
// invoker (Lambda's async retry says nothing about attempts).
type WakeClaim struct {
	State   string    `json:"state"`
	Owner   string    `json:"owner"`
	Attempt int       `json:"attempt"`
	Until   time.Time `json:"until"`             // in progress: when the owner counts as gone
	Outcome string    `json:"outcome,omitempty"` // done: why (answered, no_wake, throttled, …)
	// Since is when the claim was taken: a claim no run has begun
	// (Attempt 0) for OrphanAfter was taken by a delivery that gave up
	// before queueing its job (its write landed late), and may be taken
	// over at once instead of after Until.
	Since time.Time `json:"since,omitzero"`
}

// DefaultOrphanAfter is how long a taken claim may wait for its run to
// begin before a redelivery or the poll takes it over. A queued job begins
// within a second or two; a wrongly taken-over claim costs nothing but a
// dropped job, since Begin lets exactly one owner run.
const DefaultOrphanAfter = 10 * time.Second

// orphaned reports whether c was taken and no run began on it within after.
func (c WakeClaim) orphaned(now time.Time, after time.Duration) bool {
	return c.State == ClaimInProgress && c.Attempt == 0 && !c.Since.IsZero() && now.Sub(c.Since) >= after
}

// Live reports whether an owner is (still) working on the claim at now.
func (c WakeClaim) Live(now time.Time) bool { return c.State == ClaimInProgress && !now.After(c.Until) }

// WakeClaims is the claim state machine over a KV's compare-and-swap:
//
//	(none) ──Take──▶ in_progress(owner, until) ──Finish──▶ done
//	in_progress past until ──Take/Begin by anyone──▶ in_progress(new owner)
//
// Every transition is one conditional write on the exact old value, so of
// concurrent takers exactly one wins. Records live Keep (the once-only
// window); an in-progress record whose until passed is work whose run is
// gone, and the next taker (a poll tick, a Rocket.Chat retry) takes it over.
type WakeClaims struct {
	KV   KV
	Keep time.Duration // how long a claim is remembered; 0 = 7 days
	// OrphanAfter: a claim no run began on this long after it was taken
	// is taken over by the next Take; 0 = DefaultOrphanAfter.
	OrphanAfter time.Duration
	Now         func() time.Time
}

func (w *WakeClaims) orphanAfter() time.Duration {
	if w.OrphanAfter > 0 {
		return w.OrphanAfter
	}
	return DefaultOrphanAfter
}

func (w *WakeClaims) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *WakeClaims) keep() time.Duration {
	if w.Keep > 0 {
		return w.Keep
	}
	return 7 * 24 * time.Hour
}

// Get returns key's claim; found is false when there is none.
func (w *WakeClaims) Get(ctx context.Context, key string) (WakeClaim, bool, error) {
	c, _, found, err := w.get(ctx, key)
	return c, found, err
}

func (w *WakeClaims) get(ctx context.Context, key string) (WakeClaim, string, bool, error) {
	raw, found, err := w.KV.Get(ctx, key)
	if err != nil || !found {
		return WakeClaim{}, "", false, err
	}
	var c WakeClaim
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return WakeClaim{}, raw, true, Wrap("claims.get", EINTERNAL, "a wake claim could not be read", err)
	}
	return c, raw, true, nil
}

// update applies change to key's claim (zero and found=false when absent)
// with one compare-and-swap; false when change declines or another writer
// got there first (the caller lost the race: the claim is someone else's).
func (w *WakeClaims) update(ctx context.Context, key string, change func(c WakeClaim, found bool) (WakeClaim, bool)) (WakeClaim, bool, error) {
	cur, raw, found, err := w.get(ctx, key)
	if err != nil {
		return cur, false, err
	}
	next, ok := change(cur, found)
	if !ok {
		return cur, false, nil
	}
	b, err := json.Marshal(next)
	if err != nil {
		return cur, false, Wrap("claims.update", EINTERNAL, "a wake claim could not be encoded", err)
	}
	err = w.KV.PutIf(ctx, key, raw, string(b), w.now().Add(w.keep()))
	if ErrorCode(err) == ECONFLICT {
		c, _, _ := w.Get(ctx, key)
		return c, false, nil
	}
	if err != nil {
		return cur, false, err
	}
	return next, true, nil
}

// Take claims key for owner until the given time when nobody has it or its
// in-progress owner is gone (until passed); the attempt count carries over.
// It reports false with the current claim when the claim is done or
// another owner's claim is live. owner must be new for each take.
func (w *WakeClaims) Take(ctx context.Context, key, owner string, until time.Time) (WakeClaim, bool, error) {
	now := w.now()
	// Most keys are new: one conditional create answers those (the webhook
	// acknowledges within a second), and only a conflict costs a read.
	fresh := WakeClaim{State: ClaimInProgress, Owner: owner, Until: until.UTC(), Since: now.UTC()}
	b, err := json.Marshal(fresh)
	if err != nil {
		return WakeClaim{}, false, Wrap("claims.take", EINTERNAL, "a wake claim could not be encoded", err)
	}
	switch err := w.KV.PutIf(ctx, key, "", string(b), now.Add(w.keep())); ErrorCode(err) {
	case "":
		return fresh, true, nil
	case ECONFLICT:
	default:
		return WakeClaim{}, false, err
	}
	// A live claim of this very owner is this call's own create: DynamoDB
	// applied an attempt whose answer was lost (a client-side timeout),
	// and the SDK's retry of it failed its condition. Owners are unique
	// per take, so it is ours and not a duplicate's.
	// A live claim no run has begun on long after it was taken is a
	// delivery's that gave up before queueing (the store answered after the
	// webhook's deadline, and the write landed anyway): taken over now, not
	// after the whole in-progress window.
	orphanAfter := w.orphanAfter()
	return w.update(ctx, key, func(c WakeClaim, found bool) (WakeClaim, bool) {
		if found && (c.State == ClaimDone || (c.Live(now) && c.Owner != owner && !c.orphaned(now, orphanAfter))) {
			return c, false
		}
		return WakeClaim{State: ClaimInProgress, Owner: owner, Attempt: c.Attempt, Until: until.UTC(), Since: now.UTC()}, true
	})
}

// Begin starts one attempt of owner's run on key: it counts the attempt
// and moves until to the run's own deadline. owner may begin its own claim
// again (a retry of the same job) and, like Take, a claim whose owner is
// gone or which nobody has. False when the claim is done or another live
// owner has it.
func (w *WakeClaims) Begin(ctx context.Context, key, owner string, until time.Time) (WakeClaim, bool, error) {
	now := w.now()
	return w.update(ctx, key, func(c WakeClaim, found bool) (WakeClaim, bool) {
		if found && (c.State == ClaimDone || (c.Owner != owner && c.Live(now))) {
			return c, false
		}
		return WakeClaim{State: ClaimInProgress, Owner: owner, Attempt: c.Attempt + 1, Until: until.UTC()}, true
	})
}

// Finish marks key done with outcome, whoever holds it now: the message
// was answered (or deliberately not), and that must stick. Finishing a done
// claim changes nothing.
func (w *WakeClaims) Finish(ctx context.Context, key, outcome string) error {
	for range 5 {
		c, ok, err := w.update(ctx, key, func(c WakeClaim, _ bool) (WakeClaim, bool) {
			if c.State == ClaimDone {
				return c, false
			}
			c.State, c.Outcome, c.Until = ClaimDone, outcome, time.Time{}
			return c, true
		})
		if err != nil || ok || c.State == ClaimDone {
			return err
		}
	}
	return E("claims.finish", EUNAVAILABLE, "the wake claim kept changing; try again")
}

// Release gives owner's in-progress claim back at once (its work could not
// be queued), so that the next delivery or poll takes it without waiting
// for until. The attempt count stays. Others' claims are left alone.
func (w *WakeClaims) Release(ctx context.Context, key, owner string) error {
	_, _, err := w.update(ctx, key, func(c WakeClaim, found bool) (WakeClaim, bool) {
		if !found || c.State != ClaimInProgress || c.Owner != owner {
			return c, false
		}
		c.Until = time.Unix(0, 0).UTC()
		return c, true
	})
	return err
}

// The state stores take marker, counter, KV and lease keys and lease
// holders of 1 to MaxStateKey bytes and KV values of 1 to MaxStateValue
// bytes: state is small (a KV write costs a few WCU at most), and a key with
// its store's prefix stays well under DynamoDB's 2,048-byte partition-key
// limit. Every store checks with the
// functions below, so that they refuse the same calls with the same words.
const (
	MaxStateKey   = 1024
	MaxStateValue = 64 << 10
)

// CheckStateKey is EINVALID for an empty key or one longer than
// MaxStateKey; kind names the key in the message ("marker", "counter",
// "KV", "lease").
func CheckStateKey(op, kind, key string) error {
	if key == "" || len(key) > MaxStateKey {
		return E(op, EINVALID, "a "+kind+" key must be 1 to 1024 bytes long")
	}
	return nil
}

// CheckKVValue checks a KV key and the value to store under it.
func CheckKVValue(op, key, value string) error {
	if err := CheckStateKey(op, "KV", key); err != nil {
		return err
	}
	if value == "" || len(value) > MaxStateValue {
		return E(op, EINVALID, "a value must be 1 to 65536 bytes long")
	}
	return nil
}

// CheckLease checks a lease key and its holder.
func CheckLease(op, key, holder string) error {
	if err := CheckStateKey(op, "lease", key); err != nil {
		return err
	}
	if holder == "" || len(holder) > MaxStateKey {
		return E(op, EINVALID, "a lease holder must be 1 to 1024 bytes long")
	}
	return nil
}
