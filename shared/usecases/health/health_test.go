package health_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/health"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

const key = "health#rocketchat"

// cest renders HH:MM; a fixed zone keeps the test independent of tzdata.
var cest = time.FixedZone("CEST", 2*60*60)

// t0 is 09:00 in cest; ticks come every 5 minutes from there.
var t0 = time.Date(2026, 8, 3, 7, 0, 0, 0, time.UTC)

const (
	outageAt0900 = "Rocket.Chat unreachable since 09:00, I'm here now."
	back         = "Rocket.Chat is back. We can talk there again."
)

var errDown = sb.E("rocketchat.info", sb.EUNAVAILABLE, "Rocket.Chat GET /api/info: 503 Service Unavailable")

// channel is a fake next channel: it fails while failing is set and
// remembers what it delivered.
type channel struct {
	name string

	mu        sync.Mutex
	failing   bool
	delivered []router.Notice
	attempts  int
}

func (c *channel) Name() string { return c.name }

func (c *channel) Send(_ context.Context, n router.Notice) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts++
	if c.failing {
		return sb.E("telegram.sendMessage", sb.EUNAVAILABLE, "Telegram sendMessage: 502")
	}
	c.delivered = append(c.delivered, n)
	return nil
}

func (c *channel) setFailing(on bool) { c.mu.Lock(); c.failing = on; c.mu.Unlock() }

func (c *channel) notices() []router.Notice {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]router.Notice(nil), c.delivered...)
}

func (c *channel) texts() []string {
	var out []string
	for _, n := range c.notices() {
		out = append(out, n.Text)
	}
	return out
}

// server is Rocket.Chat's /api/info as the checker sees it.
type server struct {
	mu    sync.Mutex
	up    bool
	calls int
}

func (s *server) info(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if !s.up {
		return "", errDown
	}
	return "8.7.0", nil
}

func (s *server) set(up bool) { s.mu.Lock(); s.up = up; s.mu.Unlock() }

type clock = clocktest.Clock

func hhmm(t time.Time) string { return t.In(cest).Format("15:04") }
func outageSince(t time.Time) string {
	return "Rocket.Chat unreachable since " + hhmm(t) + ", I'm here now."
}
func discard() *slog.Logger            { return slog.New(slog.DiscardHandler) }
func ctx(t *testing.T) context.Context { return t.Context() }

// world is a checker over a memstore KV with a router whose channels are
// RocketChat (never to be used: the checker gets the router without it)
// and Telegram.
type world struct {
	c     *health.Checker
	rc    *channel
	tg    *channel
	srv   *server
	clock *clock
	store *memstore.Store
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{rc: &channel{name: "RocketChat"}, tg: &channel{name: "Telegram"}, srv: &server{up: true},
		clock: clocktest.New(t0), store: memstore.New()}
	r := router.New([]router.Channel{w.rc, w.tg}, w.store, discard())
	w.c = &health.Checker{Info: w.srv.info, KV: w.store.KV(), Key: key, Notify: r.Without("RocketChat"),
		Loc: cest, Now: w.clock.Now, Log: discard()}
	t.Cleanup(func() {
		if n := len(w.rc.notices()); n != 0 {
			t.Errorf("Rocket.Chat got %d notices; the health notices must not use it", n)
		}
	})
	return w
}

func (w *world) state(t *testing.T) (health.State, bool) {
	t.Helper()
	raw, found, err := w.store.KV().Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var st health.State
	if found {
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			t.Fatalf("state %q: %v", raw, err)
		}
	}
	return st, found
}

// step is one tick: Rocket.Chat up or down, the next channel failing or
// not, and the notice that must arrive during it ("" for none).
type step struct {
	up, sendFails bool
	want          string
	wantErr       bool
}

var (
	down     = step{}
	up       = step{up: true}
	downLost = step{sendFails: true, wantErr: true} // down, and the notice cannot be delivered
)

func with(s step, want string) step { s.want = want; return s }

func TestTickSequences(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"two failures say nothing", []step{down, down}},
		{"three failures notify once, with the time of the first",
			[]step{down, down, with(down, outageAt0900), down, down, down, down}},
		{"recovery says so once and resets", []step{down, down, with(down, outageAt0900), with(up, back), up, up}},
		{"recovery before the third failure says nothing", []step{down, down, up, up}},
		{"flapping never notifies", []step{down, up, down, down, up, down, down, up, down}},
		{"flapping, then three in a row: since the first of those",
			[]step{down, up, down, down, with(down, outageSince(t0.Add(10*time.Minute))), down}},
		{"a lost notice is sent on the next tick, with the original time",
			[]step{down, down, downLost, with(down, outageAt0900), down}},
		{"a notice lost twice is still sent once",
			[]step{down, down, downLost, downLost, with(down, outageAt0900), down}},
		{"a lost 'back' is sent on the next tick",
			[]step{down, down, with(down, outageAt0900), {up: true, sendFails: true, wantErr: true}, with(up, back), up}},
		{"a new outage after recovery is a new notice",
			[]step{down, down, with(down, outageAt0900), with(up, back), down, down,
				with(down, outageSince(t0.Add(20*time.Minute))), down}},
		{"recovery before a lost notice was delivered: nothing to take back",
			[]step{down, down, downLost, up, up}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			for i, s := range tt.steps {
				w.clock.Set(t0.Add(time.Duration(i) * 5 * time.Minute))
				w.srv.set(s.up)
				w.tg.setFailing(s.sendFails)
				before := len(w.tg.notices())
				detail, err := w.c.Tick(ctx(t))
				if (err != nil) != s.wantErr {
					t.Fatalf("tick %d: Tick = %q, %v; want error %v", i+1, detail, err, s.wantErr)
				}
				got := w.tg.texts()[before:]
				switch {
				case s.want == "" && len(got) != 0:
					t.Errorf("tick %d: sent %q, want nothing", i+1, got)
				case s.want != "" && (len(got) != 1 || got[0] != s.want):
					t.Errorf("tick %d: sent %q, want exactly [%q]", i+1, got, s.want)
				}
			}
		})
	}
}

func TestTickNoticeShape(t *testing.T) {
	w := newWorld(t)
	w.srv.set(false)
	for range 3 {
		if _, err := w.c.Tick(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	w.srv.set(true)
	if _, err := w.c.Tick(ctx(t)); err != nil {
		t.Fatal(err)
	}
	got := w.tg.notices()
	if len(got) != 2 {
		t.Fatalf("%d notices, want 2", len(got))
	}
	for i, want := range []string{router.KindOutage, router.KindRecovery} {
		if got[i].Kind != want || got[i].AgentID != "" {
			t.Errorf("notice %d: kind %q, agent %q; want kind %q as a system notice", i, got[i].Kind, got[i].AgentID, want)
		}
	}
}

func TestTickDetails(t *testing.T) {
	w := newWorld(t)
	tick := func(up bool) string {
		t.Helper()
		w.srv.set(up)
		d, err := w.c.Tick(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for i, tt := range []struct {
		up   bool
		want string
	}{
		{true, "Rocket.Chat 8.7.0 answers"},
		{false, "Rocket.Chat unreachable (1 in a row)"},
		{false, "Rocket.Chat unreachable (2 in a row)"},
		{false, "outage notice sent via Telegram"},
		{false, "Rocket.Chat unreachable (4 in a row)"},
		{true, "recovery notice sent via Telegram"},
		{true, "Rocket.Chat 8.7.0 answers"},
	} {
		if got := tick(tt.up); got != tt.want {
			t.Errorf("tick %d = %q, want %q", i+1, got, tt.want)
		}
	}
}

func TestTickState(t *testing.T) {
	w := newWorld(t)
	if _, found := w.state(t); found {
		t.Fatal("state exists before the first tick")
	}
	first := t0.Add(3 * time.Minute)

	w.srv.set(true)
	mustTick(t, w)
	if st, _ := w.state(t); st != (health.State{Version: "8.7.0"}) {
		t.Errorf("after a good tick: %+v", st)
	}

	w.srv.set(false)
	w.clock.Set(first)
	mustTick(t, w)
	w.clock.Add(5 * time.Minute)
	mustTick(t, w)
	if st, _ := w.state(t); st.Failures != 2 || !st.Since.Equal(first) || st.Notified {
		t.Errorf("after 2 failures: %+v, want 2 failures since %v, not notified", st, first)
	}
	w.clock.Add(5 * time.Minute)
	mustTick(t, w)
	if st, _ := w.state(t); st.Failures != 3 || !st.Since.Equal(first) || !st.Notified {
		t.Errorf("after 3 failures: %+v, want notified, since %v", st, first)
	}
	if got := w.tg.texts(); len(got) != 1 || got[0] != outageSince(first) {
		t.Errorf("notices %q, want [%q]", got, outageSince(first))
	}

	w.srv.set(true)
	mustTick(t, w)
	if st, _ := w.state(t); st != (health.State{Version: "8.7.0"}) {
		t.Errorf("after recovery: %+v, want the state reset to {Version: 8.7.0}", st)
	}
}

func mustTick(t *testing.T, w *world) string {
	t.Helper()
	d, err := w.c.Tick(ctx(t))
	if err != nil {
		t.Fatalf("Tick: %v", err)
	}
	return d
}

func TestTickRendersTheLocation(t *testing.T) {
	tests := []struct {
		name string
		loc  *time.Location
		want string
	}{
		{"UTC", time.UTC, "Rocket.Chat unreachable since 07:00, I'm here now."},
		{"CEST", cest, outageAt0900},
		{"half-hour zone", time.FixedZone("IST", 5*60*60+30*60), "Rocket.Chat unreachable since 12:30, I'm here now."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.c.Loc = tt.loc
			w.srv.set(false)
			for i := range 3 {
				w.clock.Set(t0.Add(time.Duration(i) * 7 * time.Minute))
				mustTick(t, w)
			}
			if got := w.tg.texts(); len(got) != 1 || got[0] != tt.want {
				t.Errorf("notices %q, want [%q]", got, tt.want)
			}
		})
	}
}

// kv wraps the memstore KV with injected errors.
type kv struct {
	sb.KV
	getErr, putErr error
}

func (k *kv) Get(ctx context.Context, key string) (string, bool, error) {
	if k.getErr != nil {
		return "", false, k.getErr
	}
	return k.KV.Get(ctx, key)
}

func (k *kv) PutIf(ctx context.Context, key, old, value string, expires time.Time) error {
	if k.putErr != nil {
		return k.putErr
	}
	return k.KV.PutIf(ctx, key, old, value, expires)
}

func TestTickStoreErrors(t *testing.T) {
	errStore := sb.E("kv", sb.EUNAVAILABLE, "DynamoDB is throttling")
	tests := []struct {
		name    string
		getErr  error
		putErr  error
		stored  string
		wantErr string
	}{
		{name: "read fails", getErr: errStore, wantErr: "throttling"},
		{name: "write fails", putErr: errStore, wantErr: "throttling"},
		{name: "corrupt state", stored: "{not json", wantErr: "{not json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.srv.set(false)
			// Two failures stored: the third tick would notify.
			mustTick(t, w)
			mustTick(t, w)
			if tt.stored != "" {
				if err := w.store.KV().Put(context.Background(), key, tt.stored, time.Time{}); err != nil {
					t.Fatal(err)
				}
			}
			w.c.KV = &kv{KV: w.store.KV(), getErr: tt.getErr, putErr: tt.putErr}
			_, err := w.c.Tick(ctx(t))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Tick = %v, want an error containing %q", err, tt.wantErr)
			}
			if n := len(w.tg.notices()); n != 0 {
				t.Errorf("%d notices although the state could not be kept", n)
			}
			if tt.stored == "" {
				if st, _ := w.state(t); st.Failures != 2 || st.Notified {
					t.Errorf("state = %+v, want it unchanged", st)
				}
			}
		})
	}
}

// Overlapping ticks that all read the same state: only one may write it,
// so only one notice goes out.
func TestTickConcurrentTicksSendOneNotice(t *testing.T) {
	tests := []struct {
		name      string
		prepare   []bool // up/down of the sequential ticks before
		up        bool   // of the concurrent ticks
		want      string
		wantState health.State
	}{
		{name: "outage", prepare: []bool{false, false}, up: false, want: outageAt0900,
			wantState: health.State{Failures: 3, Since: t0, Notified: true}},
		{name: "recovery", prepare: []bool{false, false, false}, up: true, want: back,
			wantState: health.State{Version: "8.7.0"}},
	}
	const n = 8
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			for _, up := range tt.prepare {
				w.srv.set(up)
				mustTick(t, w)
			}
			before := len(w.tg.notices())
			w.srv.set(tt.up)

			// Every tick has read the state before any asks /api/info.
			var arrived sync.WaitGroup
			arrived.Add(n)
			inner := w.c.Info
			c := *w.c
			c.Info = func(ctx context.Context) (string, error) {
				arrived.Done()
				arrived.Wait()
				return inner(ctx)
			}
			var wg sync.WaitGroup
			var mu sync.Mutex
			var skipped int
			for range n {
				wg.Go(func() {
					d, err := c.Tick(ctx(t))
					if err != nil {
						t.Errorf("Tick: %v", err)
					}
					if strings.Contains(d, "skipped") {
						mu.Lock()
						skipped++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			got := w.tg.texts()[before:]
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("%d concurrent ticks sent %q, want exactly [%q]", n, got, tt.want)
			}
			if skipped != n-1 {
				t.Errorf("%d ticks skipped, want %d", skipped, n-1)
			}
			if st, _ := w.state(t); !st.Since.Equal(tt.wantState.Since) || st.Failures != tt.wantState.Failures ||
				st.Notified != tt.wantState.Notified || st.Version != tt.wantState.Version {
				t.Errorf("state = %+v, want %+v", st, tt.wantState)
			}
		})
	}
}

// Waves of ticks without any synchronisation: whatever the interleaving,
// one outage notice and one "back".
func TestTickConcurrentWaves(t *testing.T) {
	w := newWorld(t)
	run := func(up bool) {
		w.srv.set(up)
		for range 20 {
			var wg sync.WaitGroup
			for range 5 {
				wg.Go(func() {
					if _, err := w.c.Tick(ctx(t)); err != nil {
						t.Errorf("Tick: %v", err)
					}
				})
			}
			wg.Wait()
		}
	}
	run(false)
	run(true)
	if got := w.tg.texts(); len(got) != 2 || got[0] != outageAt0900 || got[1] != back {
		t.Errorf("notices %q, want one outage and one back", got)
	}
}

// A tick that finds the notice already given (the state moved on while it
// read) must not send it again.
func TestTickDoesNotRepeatAfterConflict(t *testing.T) {
	w := newWorld(t)
	w.srv.set(false)
	mustTick(t, w)
	mustTick(t, w)
	// Another writer moves the state between this tick's read and write.
	c := *w.c
	c.KV = &raceKV{KV: w.store.KV(), before: func() {
		st := health.State{Failures: 3, Since: t0, Notified: true}
		b, _ := json.Marshal(st)
		raw, _, _ := w.store.KV().Get(context.Background(), key)
		if err := w.store.KV().PutIf(context.Background(), key, raw, string(b), time.Time{}); err != nil {
			t.Error(err)
		}
	}}
	d, err := c.Tick(ctx(t))
	if err != nil || !strings.Contains(d, "skipped") {
		t.Errorf("Tick = %q, %v; want skipped", d, err)
	}
	if n := len(w.tg.notices()); n != 0 {
		t.Errorf("%d notices from the losing tick", n)
	}
}

// raceKV runs before once, just before the first PutIf.
type raceKV struct {
	sb.KV
	once   sync.Once
	before func()
}

func (k *raceKV) PutIf(ctx context.Context, key, old, value string, expires time.Time) error {
	k.once.Do(k.before)
	return k.KV.PutIf(ctx, key, old, value, expires)
}

func TestTickInfoIsAskedOncePerTick(t *testing.T) {
	w := newWorld(t)
	w.srv.set(false)
	for range 4 {
		_, _ = w.c.Tick(ctx(t))
	}
	if w.srv.calls != 4 {
		t.Errorf("%d /api/info calls for 4 ticks, want 4", w.srv.calls)
	}
}
