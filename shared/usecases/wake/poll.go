package wake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// PollAgent is one agent the poll looks after.
type PollAgent struct {
	ID              string
	Rules           Rules
	Chat            sb.ChatReader
	MaxMessages     int           // history per room and tick (maxMessagesPerRoom)
	Lookback        time.Duration // first fetch of a room (initialLookbackMinutes)
	MaxWakesPerHour int           // per room (maxWakesPerRoomPerHour)
}

// Poller is the rocketchat-poll job. State lives in DynamoDB: one
// marker per agent and room (KV), the hourly wake counters, and the wake
// claims shared with the webhook so that a message never wakes an agent
// twice.
//
// The poll is also what recovers a wake whose run died (a killed process,
// a Lambda timeout): the room marker never moves past a waking message
// whose claim is not done, and the room stays unread for the agent, so the
// next tick fetches that message again and takes its claim over once the
// claim's in-progress window has passed.
type Poller struct {
	KV       sb.KV
	Counters sb.Counters
	Claims   Claims    // once-only markers (the throttle's log line)
	Wakes    WakeStore // the wake claims
	// ClaimFor is the in-progress window of a dispatched wake (see
	// ClaimWindow); DefaultClaimFor when zero.
	ClaimFor time.Duration
	Dispatch sb.WakeDispatcher
	Log      *slog.Logger
	Loc      *time.Location
	Now      func() time.Time
	// Parallel bounds how many agents a tick polls at once;
	// DefaultPollParallel when zero.
	Parallel int

	mu      sync.Mutex
	limited map[string]time.Time // agent → end of its Rocket.Chat rate limit, read from KV once
}

// PollStats counts what one tick did, for the job's summary and the
// closing-note measurements.
type PollStats struct {
	Agents, Rooms, Messages, Wakes, Throttled int
	RateLimited                               int // agents skipped or stopped by a 429
}

// DefaultPollParallel is how many agents a tick polls at the same time when
// Poller.Parallel is zero. Each agent is one Rocket.Chat round trip on a
// quiet tick, so ten agents take three round trips instead of ten, while a
// Rocket.Chat server sees at most four of our requests at once.
const DefaultPollParallel = 4

// Tick polls every agent once, at most Parallel (DefaultPollParallel) at
// the same time. One agent's failure does not stop the others; all failures
// come back joined, in the order of agents.
func (p *Poller) Tick(ctx context.Context, agents []PollAgent) (PollStats, error) {
	limit := p.Parallel
	if limit <= 0 {
		limit = DefaultPollParallel
	}
	stats := make([]PollStats, len(agents))
	errs := make([]error, len(agents))
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, a := range agents {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			stats[i].Agents = 1
			if err := p.agent(ctx, a, &stats[i]); err != nil {
				errs[i] = fmt.Errorf("rocketchat-poll %s: %w", a.ID, err)
			}
		})
	}
	wg.Wait()
	var st PollStats
	for _, s := range stats {
		st.add(s)
	}
	return st, errors.Join(errs...)
}

func (st *PollStats) add(o PollStats) {
	st.Agents += o.Agents
	st.Rooms += o.Rooms
	st.Messages += o.Messages
	st.Wakes += o.Wakes
	st.Throttled += o.Throttled
	st.RateLimited += o.RateLimited
}

// agent costs one subscriptions.get when nothing happened (a quiet tick: one
// Rocket.Chat call, no DynamoDB access, no model call).
func (p *Poller) agent(ctx context.Context, a PollAgent, st *PollStats) error {
	until, err := p.limitedUntil(ctx, a.ID)
	if err != nil {
		return err
	}
	if p.Now().Before(until) {
		st.RateLimited++ // Rocket.Chat said wait: not one call until then
		return nil
	}
	subs, err := a.Chat.Subscriptions(ctx, time.Time{})
	if err != nil {
		if p.rateLimited(ctx, a, err) {
			st.RateLimited++
			return nil
		}
		return err
	}
	var errs []error
	for _, s := range subs {
		// Cheap pre-filter only: a plain message sets just `alert` in 8.x;
		// the per-message mention check decides.
		if !s.Alert && s.Unread == 0 && s.UserMentions == 0 && s.GroupMentions == 0 {
			continue
		}
		if s.Type != sb.RoomChannel && s.Type != sb.RoomGroup && s.Type != sb.RoomDirect {
			continue // livechat and other kinds have no history endpoint here
		}
		st.Rooms++
		if err := p.room(ctx, a, s, st); err != nil {
			if p.rateLimited(ctx, a, err) {
				// Stop this agent's tick at the first 429: the other rooms
				// would only be refused too. This room's marker and read
				// state stay, so the next tick after the reset takes it up.
				st.RateLimited++
				break
			}
			errs = append(errs, fmt.Errorf("room %s: %w", s.RoomID, err))
		}
	}
	return errors.Join(errs...)
}

func (p *Poller) room(ctx context.Context, a PollAgent, s sb.ChatSubscription, st *PollStats) error {
	room := Room{ID: s.RoomID, Name: s.Name, Type: s.Type}
	markerKey := "poll#" + a.ID + "#" + s.RoomID
	raw, found, err := p.KV.Get(ctx, markerKey)
	if err != nil {
		return err
	}
	marker := p.Now().Add(-a.Lookback) // first fetch: look back, never replay older history
	if found {
		if marker, err = time.Parse(time.RFC3339Nano, raw); err != nil {
			return fmt.Errorf("marker %q: %w", raw, err)
		}
	}
	msgs, err := a.Chat.History(ctx, s.Type, s.RoomID, marker, a.MaxMessages, true)
	if err != nil {
		return err
	}
	if a.MaxMessages > 0 && len(msgs) >= a.MaxMessages {
		// History answers the newest count messages of the range: older
		// ones of this burst are not seen (maxMessagesPerRoom bounds what
		// one wake may carry). Say so rather than lose them silently.
		p.Log.WarnContext(ctx, "rocketchat-poll: more new messages than maxMessagesPerRoom; older ones of this burst are skipped",
			"agent", a.ID, "room", s.RoomID, "maxMessagesPerRoom", a.MaxMessages)
	}
	newest := marker
	var waking []sb.ChatMessage
	for _, m := range msgs {
		if !m.At.After(marker) {
			continue
		}
		st.Messages++
		if m.At.After(newest) {
			newest = m.At // the marker moves past filtered messages too
		}
		if v := a.Rules.Decide(room, m); v.Wake {
			waking = append(waking, m)
		}
	}
	pending, err := p.wake(ctx, a, room, waking, st)
	if err != nil {
		return err // marker and read state stay: the next tick tries again
	}
	if !pending.IsZero() {
		// A waking message is still in progress (ours just queued, or
		// another run's): keep the marker just before it and the room
		// unread, so that the next tick sees it again and takes it over if
		// its run is gone. Rocket.Chat timestamps have milliseconds.
		if hold := pending.Add(-time.Millisecond); hold.After(marker) {
			return p.KV.Put(ctx, markerKey, hold.UTC().Format(time.RFC3339Nano), time.Time{})
		}
		return nil
	}
	// Read only after the messages were collected and queued.
	if err := a.Chat.MarkRead(ctx, s.RoomID); err != nil {
		return err
	}
	if newest.After(marker) {
		return p.KV.Put(ctx, markerKey, newest.UTC().Format(time.RFC3339Nano), time.Time{})
	}
	return nil
}

// wake claims the messages (shared with the webhook), applies the hourly
// throttle and queues one job for the room. It returns the time of the
// oldest waking message whose claim is not done (zero when all are).
func (p *Poller) wake(ctx context.Context, a PollAgent, room Room, msgs []sb.ChatMessage, st *PollStats) (time.Time, error) {
	var keys []string
	var fresh []sb.ChatMessage
	var pending time.Time
	hold := func(at time.Time) {
		if pending.IsZero() || at.Before(pending) {
			pending = at
		}
	}
	claimFor := p.ClaimFor
	if claimFor <= 0 {
		claimFor = DefaultClaimFor
	}
	if len(msgs) > 0 && a.MaxWakesPerHour > 0 {
		// A room that has used up its hour is turned away before any
		// claim: its messages are only looked at, so that one a live (or
		// dead) run still has keeps the marker for the next tick.
		n, err := p.Counters.Peek(ctx, ThrottleKey(a.ID, room.ID, p.Now()))
		if err != nil {
			return time.Time{}, err
		}
		if n >= a.MaxWakesPerHour {
			st.Throttled++
			logThrottleOnce(ctx, p.Claims, p.Log, a.ID, room.ID, a.MaxWakesPerHour, p.Now())
			for _, m := range msgs {
				c, found, err := p.Wakes.Get(ctx, ClaimKey(a.ID, m.ID))
				if err != nil {
					return time.Time{}, err
				}
				if found && c.State != sb.ClaimDone {
					hold(m.At)
				}
			}
			return pending, nil
		}
	}
	owner := sb.NewID(p.Now())
	for _, m := range msgs {
		key := ClaimKey(a.ID, m.ID)
		c, ok, err := p.Wakes.Take(ctx, key, owner, p.Now().Add(claimFor))
		if err != nil {
			p.release(ctx, keys, owner)
			return time.Time{}, err
		}
		switch {
		case ok:
			keys, fresh = append(keys, key), append(fresh, m)
		case c.State != sb.ClaimDone:
			hold(m.At) // a live run has it; if that run dies, a later tick takes over
		}
	}
	if len(fresh) == 0 {
		return pending, nil
	}
	allowed, err := Throttle(ctx, p.Counters, p.Claims, p.Log, a.ID, room.ID, a.MaxWakesPerHour, p.Now())
	unthrottle := func() {
		if derr := p.Counters.Decr(context.WithoutCancel(ctx), ThrottleKey(a.ID, room.ID, p.Now())); derr != nil {
			p.Log.ErrorContext(ctx, "rocketchat-poll: could not give the wake count back", "err", derr)
		}
	}
	if err != nil {
		p.release(ctx, keys, owner)
		return time.Time{}, err
	}
	if !allowed {
		st.Throttled++
		for _, k := range keys {
			if err := p.Wakes.Finish(ctx, k, OutcomeThrottled); err != nil {
				return time.Time{}, err
			}
		}
		return pending, nil
	}
	thread := commonThread(fresh)
	job := sb.WakeJob{AgentID: a.ID, Source: "rocketchat-poll", Text: FormatMessages(room, thread, fresh, p.Loc),
		ReplyTo: &ReplyTo{RoomID: room.ID, RoomName: room.Name, RoomType: string(room.Type), ThreadID: thread},
		Claim:   &sb.WakeJobClaim{Keys: keys, Owner: owner}}
	for _, m := range fresh {
		job.MessageIDs = append(job.MessageIDs, m.ID)
	}
	if err := p.Dispatch.Dispatch(ctx, job); err != nil {
		p.release(ctx, keys, owner)
		unthrottle() // the wake did not happen: do not let it use up the hour
		return time.Time{}, err
	}
	st.Wakes++
	for i, m := range fresh {
		// A fast worker may be done already; otherwise the wake is in
		// progress and the room is held for it.
		if c, found, err := p.Wakes.Get(ctx, keys[i]); err != nil || !found || c.State != sb.ClaimDone {
			hold(m.At)
		}
	}
	return pending, nil
}

func (p *Poller) release(ctx context.Context, keys []string, owner string) {
	for _, k := range keys {
		if err := p.Wakes.Release(context.WithoutCancel(ctx), k, owner); err != nil {
			p.Log.ErrorContext(ctx, "rocketchat-poll: could not release claim", "key", k, "err", err)
		}
	}
}

// rateLimitKey holds the end of an agent's Rocket.Chat rate limit.
func rateLimitKey(agent string) string { return "poll-ratelimit#" + agent }

// defaultRateLimitWait is Rocket.Chat's default limiter window, used when a
// 429 says nothing about its reset.
const defaultRateLimitWait = time.Minute

// limitedUntil is the end of agent's rate limit (zero when none). It is read
// from the KV once per process; after that the poller, the only writer,
// knows it, so a quiet tick stays free of store reads.
func (p *Poller) limitedUntil(ctx context.Context, agent string) (time.Time, error) {
	p.mu.Lock()
	until, known := p.limited[agent]
	p.mu.Unlock()
	if known {
		return until, nil
	}
	raw, found, err := p.KV.Get(ctx, rateLimitKey(agent))
	if err != nil {
		return time.Time{}, err
	}
	if found {
		if until, err = time.Parse(time.RFC3339Nano, raw); err != nil {
			return time.Time{}, fmt.Errorf("rate limit of %s %q: %w", agent, raw, err)
		}
	}
	p.remember(agent, until)
	return until, nil
}

func (p *Poller) remember(agent string, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.limited == nil {
		p.limited = map[string]time.Time{}
	}
	p.limited[agent] = until
}

// rateLimited reports whether err is Rocket.Chat's 429, and if so keeps
// the agent out of the poll until the limiter's reset (X-RateLimit-Reset),
// in the KV so that a cold start honours it too.
func (p *Poller) rateLimited(ctx context.Context, a PollAgent, err error) bool {
	var e *sb.Error
	if !errors.As(err, &e) || e.Code != sb.ERATELIMITED {
		return false
	}
	wait := e.RetryAfter
	if wait <= 0 {
		wait = defaultRateLimitWait
	}
	until := p.Now().Add(wait)
	p.remember(a.ID, until)
	p.Log.WarnContext(ctx, "rocketchat-poll: rate limited by Rocket.Chat; this agent is not polled until the reset",
		"agent", a.ID, "until", until.UTC().Format(time.RFC3339))
	if perr := p.KV.Put(ctx, rateLimitKey(a.ID), until.UTC().Format(time.RFC3339Nano), until.Add(time.Hour)); perr != nil {
		p.Log.ErrorContext(ctx, "rocketchat-poll: could not store the rate limit; only this process honours it", "agent", a.ID, "err", perr)
	}
	return true
}

// commonThread is the thread all messages belong to, or "" (the room).
func commonThread(msgs []sb.ChatMessage) string {
	t := msgs[0].ThreadID
	for _, m := range msgs[1:] {
		if m.ThreadID != t {
			return ""
		}
	}
	return t
}

// ThrottleKey is the hourly wake counter of agent in room.
func ThrottleKey(agent, room string, now time.Time) string {
	return fmt.Sprintf("wakes#%s#%s#%s", agent, room, now.UTC().Truncate(time.Hour).Format("2006010215"))
}

// Throttle counts one wake of agent in room for the current hour and
// reports whether it may happen. Past the limit the agent stays silent in
// that room until the next hour, and that is logged once per room and hour.
func Throttle(ctx context.Context, c sb.Counters, claims Claims, log *slog.Logger, agent, room string, limit int, now time.Time) (bool, error) {
	hour := now.UTC().Truncate(time.Hour)
	key := ThrottleKey(agent, room, now)
	_, allowed, err := c.Incr(ctx, key, limit, hour.Add(2*time.Hour))
	if err != nil || allowed {
		return allowed, err
	}
	logThrottleOnce(ctx, claims, log, agent, room, limit, now)
	return false, nil
}

// logThrottleOnce logs, once per room and hour, that agent stays silent in
// room until the next hour.
func logThrottleOnce(ctx context.Context, claims Claims, log *slog.Logger, agent, room string, limit int, now time.Time) {
	hour := now.UTC().Truncate(time.Hour)
	key := ThrottleKey(agent, room, now)
	if first, err := claims.Claim(ctx, "throttle-logged#"+key, hour.Add(2*time.Hour)); err == nil && first {
		log.WarnContext(ctx, "wake throttle reached; silent in this room until the next hour",
			"agent", agent, "room", room, "limit", limit, "until", hour.Add(time.Hour).Format(time.RFC3339))
	}
}
