package wake_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/recordtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// leases counts calls and can play a holder that crashed: with crash set,
// Release does nothing, so the lease stays until it expires. Every release
// leaves a token in freed (one at most), for a waiter to wake on.
type leases struct {
	sb.Leases
	acquired, released atomic.Int64
	crash              atomic.Bool
	freed              chan struct{}
}

func (l *leases) Acquire(ctx context.Context, key, holder string, until time.Time) (bool, error) {
	ok, err := l.Leases.Acquire(ctx, key, holder, until)
	if ok {
		l.acquired.Add(1)
	}
	return ok, err
}

func (l *leases) Release(ctx context.Context, key, holder string) error {
	if l.crash.Load() {
		return nil
	}
	l.released.Add(1)
	err := l.Leases.Release(ctx, key, holder)
	select {
	case l.freed <- struct{}{}:
	default: // a token is there already
	}
	return err
}

// untilFreed is a worker's wait for a busy agent's lease: it ends at the
// next release (or one since the last wait) or with ctx, never on a timer.
// A wake that comes early only tries the lease again.
func (l *leases) untilFreed(ctx context.Context, _ time.Duration) error {
	select {
	case <-l.freed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// replies records what Worker.Reply was asked to post.
type replies struct {
	sent recordtest.List[reply]
	err  error
}

type reply struct {
	Job  sb.WakeJob
	Run  sb.RunContext
	Text string
}

func (r *replies) Reply(_ context.Context, job sb.WakeJob, run sb.RunContext, text string) error {
	if r.err != nil {
		return r.err
	}
	r.sent.Add(reply{job, run, text})
	return nil
}

func (r *replies) all() []reply { return r.sent.All() }

func answered(agent, text string, calls ...agentrun.Call) agentrun.Result {
	return agentrun.Result{Run: sb.RunContext{RunID: "run-" + agent, RootRunID: "run-" + agent, AgentID: agent},
		Answer: text, Outcome: "answered", Calls: calls}
}

func rcCall(action, status, roomID string) agentrun.Call {
	env := sb.Envelope{Status: status, Data: map[string]any{"roomId": roomID}}
	if status == "error" {
		env.Error = "Rocket.Chat said no"
	}
	return agentrun.Call{Tool: "RocketChat", Action: action, Envelope: env}
}

// newWorker is a worker on a memstore whose waits (a retry's backoff, a
// busy agent's lease) end at once; tests replace what they need.
func newWorker(store *memstore.Store, run func(context.Context, sb.WakeJob) (agentrun.Result, error)) (*wake.Worker, *leases, *replies) {
	l := &leases{Leases: store, freed: make(chan struct{}, 1)}
	r := &replies{}
	w := &wake.Worker{
		Leases: l,
		Preparer: prepareFunc(func(ctx context.Context, j sb.WakeJob) (sb.WakeJob, bool, error) {
			panic("Prepare called for a job without Pending")
		}),
		Runner:  runFunc(run),
		Replies: r,
		RunFor:  time.Minute,
		WaitFor: 5 * time.Second,
		Sleep:   func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
	}
	return w, l, r
}

func job(agent string) sb.WakeJob {
	return sb.WakeJob{AgentID: agent, Source: "rocketchat-poll", Text: "wake",
		ReplyTo: &wake.ReplyTo{RoomID: "rFinanz", RoomName: "finanz-team"}}
}

// two wakes of one agent at once: the second waits for the first run
// to end, then runs.
func TestWorkerRunsOfOneAgentNeverOverlap(t *testing.T) {
	var active, maxActive atomic.Int64
	var mu sync.Mutex
	var order []string
	gate := make(chan struct{})
	firstIn := make(chan struct{})
	var calls atomic.Int64
	w, l, _ := newWorker(memstore.New(), func(ctx context.Context, j sb.WakeJob) (agentrun.Result, error) {
		n := active.Add(1)
		defer active.Add(-1)
		for {
			m := maxActive.Load()
			if n <= m || maxActive.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		order = append(order, "start "+j.Text)
		mu.Unlock()
		if calls.Add(1) == 1 {
			close(firstIn)
			<-gate
		}
		mu.Lock()
		order = append(order, "end "+j.Text)
		mu.Unlock()
		return answered(j.AgentID, ""), nil
	})
	waiting := make(chan struct{}) // closed when a Handle first pauses for the lease
	var once sync.Once
	w.Sleep = func(ctx context.Context, d time.Duration) error {
		once.Do(func() { close(waiting) })
		return l.untilFreed(ctx, d)
	}
	errs := make(chan error, 2)
	first, second := job("hermes"), job("hermes")
	first.Text, second.Text = "1", "2"
	go func() { errs <- w.Handle(context.Background(), first) }()
	within(t, 5*time.Second, firstIn, "first run starting")
	go func() { errs <- w.Handle(context.Background(), second) }()
	within(t, 5*time.Second, waiting, "the second wake waiting for the lease")
	if got := calls.Load(); got != 1 {
		t.Fatalf("%d runs started while the first holds the lease, want 1", got)
	}
	close(gate)
	for range 2 {
		if err := within(t, 5*time.Second, errs, "Handle returning"); err != nil {
			t.Errorf("Handle: %v", err)
		}
	}
	if maxActive.Load() != 1 {
		t.Errorf("at most %d runs of one agent at once, want 1", maxActive.Load())
	}
	if got, want := strings.Join(order, ","), "start 1,end 1,start 2,end 2"; got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
	if l.acquired.Load() != 2 || l.released.Load() != 2 {
		t.Errorf("leases acquired %d, released %d; want 2 and 2", l.acquired.Load(), l.released.Load())
	}
}

func TestWorkerDifferentAgentsRunInParallel(t *testing.T) {
	var in sync.WaitGroup
	in.Add(2)
	both := make(chan struct{})
	go func() { in.Wait(); close(both) }()
	w, _, _ := newWorker(memstore.New(), func(ctx context.Context, j sb.WakeJob) (agentrun.Result, error) {
		in.Done()
		select {
		case <-both: // the other agent is running at the same time
			return answered(j.AgentID, ""), nil
		case <-time.After(3 * time.Second):
			return agentrun.Result{}, errors.New(j.AgentID + " ran alone: the runs were serialised")
		}
	})
	w.WaitFor = 0 // neither may wait for the other
	errs := make(chan error, 2)
	for _, a := range []string{"hermes", "atlas"} {
		go func() { errs <- w.Handle(context.Background(), job(a)) }()
	}
	for range 2 {
		if err := within(t, 5*time.Second, errs, "Handle returning"); err != nil {
			t.Error(err)
		}
	}
}

// A busy agent past WaitFor: EUNAVAILABLE (the wake comes again), the run
// never starts, and the wait backs off 200 ms, doubling up to 2 s.
func TestWorkerBusyAgentPastWaitFor(t *testing.T) {
	clk := newClock(t0)
	store := &memstore.Store{Now: clk.Now}
	holder, hl, _ := newWorker(store, func(ctx context.Context, j sb.WakeJob) (agentrun.Result, error) {
		return answered(j.AgentID, ""), nil
	})
	holder.Now = clk.Now
	holder.RunFor = time.Hour
	hl.crash.Store(true) // keeps its lease: the agent stays busy
	if err := holder.Handle(context.Background(), job("hermes")); err != nil {
		t.Fatal(err)
	}

	var ran atomic.Bool
	w, _, _ := newWorker(store, func(ctx context.Context, j sb.WakeJob) (agentrun.Result, error) {
		ran.Store(true)
		return answered(j.AgentID, ""), nil
	})
	w.Now, w.WaitFor = clk.Now, 10*time.Second
	var slept []time.Duration
	w.Sleep = func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		clk.Add(d)
		return nil
	}
	err := w.Handle(context.Background(), job("hermes"))
	if sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Fatalf("Handle on a busy agent: %v, want EUNAVAILABLE", err)
	}
	if !strings.Contains(sb.ErrorMessage(err), "hermes") {
		t.Errorf("message %q does not name the agent", sb.ErrorMessage(err))
	}
	if ran.Load() {
		t.Error("the run started although the agent was busy")
	}
	var total time.Duration
	for _, d := range slept {
		total += d
	}
	if total < 10*time.Second || total > 12*time.Second {
		t.Errorf("waited %v in total, want about WaitFor (10s)", total)
	}
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 2 * time.Second}
	for i, d := range want {
		if i >= len(slept) || slept[i] != d {
			t.Fatalf("backoff = %v, want it to start %v", slept, want)
		}
	}
	for _, d := range slept[len(want):] {
		if d != 2*time.Second {
			t.Errorf("backoff step %v beyond the 2 s cap in %v", d, slept)
		}
	}
}

// A cancelled context ends the wait at once.
func TestWorkerWaitEndsWithContext(t *testing.T) {
	store := memstore.New()
	holder, hl, _ := newWorker(store, func(ctx context.Context, j sb.WakeJob) (agentrun.Result, error) {
		return answered(j.AgentID, ""), nil
	})
	hl.crash.Store(true)
	if err := holder.Handle(context.Background(), job("hermes")); err != nil {
		t.Fatal(err)
	}
	w, _, _ := newWorker(store, nil)
	w.WaitFor = time.Hour
	w.Sleep = nil // the real sleep, which must honour ctx
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err := w.Handle(ctx, job("hermes"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Handle = %v, want the context's error", err)
	}
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("the wait took %v after the context ended", took)
	}
}

// The lease is given back after a run, after a failing run and after a
// failing reply: the next wake runs without waiting.
func TestWorkerReleasesLease(t *testing.T) {
	tests := []struct {
		name     string
		run      func(context.Context, sb.WakeJob) (agentrun.Result, error)
		replyErr error
		wantErr  bool
	}{
		{"run answered", func(_ context.Context, j sb.WakeJob) (agentrun.Result, error) { return answered(j.AgentID, "ok"), nil }, nil, false},
		{"run failed", func(context.Context, sb.WakeJob) (agentrun.Result, error) {
			return agentrun.Result{}, errors.New("model down")
		}, nil, true},
		{"reply failed", func(_ context.Context, j sb.WakeJob) (agentrun.Result, error) { return answered(j.AgentID, "ok"), nil },
			sb.E("app.reply", sb.EUNAVAILABLE, "Rocket.Chat down"), true},
		{"run cancelled", func(ctx context.Context, j sb.WakeJob) (agentrun.Result, error) {
			return agentrun.Result{}, context.Canceled
		}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memstore.New()
			w, l, r := newWorker(store, tt.run)
			r.err = tt.replyErr
			err := w.Handle(context.Background(), job("hermes"))
			if (err != nil) != tt.wantErr {
				t.Fatalf("Handle = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "hermes") {
				t.Errorf("error %q does not say which agent", err)
			}
			if l.released.Load() != 1 {
				t.Errorf("released %d leases, want 1", l.released.Load())
			}
			next, _, _ := newWorker(store, func(_ context.Context, j sb.WakeJob) (agentrun.Result, error) { return answered(j.AgentID, ""), nil })
			next.WaitFor = 0
			if err := next.Handle(context.Background(), job("hermes")); err != nil {
				t.Errorf("the next wake could not run at once: %v", err)
			}
		})
	}
}

// A holder that crashed never releases; its lease expires at its run's
// deadline plus the slack (9 minutes here) and the agent runs again (nobody waits forever).
func TestWorkerCrashedHolderLeaseExpires(t *testing.T) {
	clk := newClock(t0)
	store := &memstore.Store{Now: clk.Now}
	crashed, cl, _ := newWorker(store, func(_ context.Context, j sb.WakeJob) (agentrun.Result, error) { return answered(j.AgentID, ""), nil })
	crashed.Now, crashed.RunFor, crashed.Slack = clk.Now, 8*time.Minute+45*time.Second, 15*time.Second
	cl.crash.Store(true)
	if err := crashed.Handle(context.Background(), job("hermes")); err != nil {
		t.Fatal(err)
	}

	var runs atomic.Int64
	w, _, _ := newWorker(store, func(_ context.Context, j sb.WakeJob) (agentrun.Result, error) {
		runs.Add(1)
		return answered(j.AgentID, ""), nil
	})
	w.Now, w.WaitFor = clk.Now, 0
	clk.Add(9*time.Minute - time.Second)
	if err := w.Handle(context.Background(), job("hermes")); sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Fatalf("before the lease ends: %v, want EUNAVAILABLE", err)
	}
	clk.Add(2 * time.Second)
	if err := w.Handle(context.Background(), job("hermes")); err != nil {
		t.Fatalf("after the crashed holder's lease ended: %v", err)
	}
	if runs.Load() != 1 {
		t.Errorf("%d runs, want 1", runs.Load())
	}

	// A waiter whose WaitFor outlasts the lease gets it by waiting.
	cl2 := *crashed
	cl2.Now = clk.Now
	if err := cl2.Handle(context.Background(), job("atlas")); err != nil {
		t.Fatal(err)
	}
	w.WaitFor = 10 * time.Minute
	w.Sleep = func(_ context.Context, d time.Duration) error { clk.Add(d); return nil }
	if err := w.Handle(context.Background(), job("atlas")); err != nil {
		t.Fatalf("a waiter with WaitFor > the lease: %v", err)
	}
	if runs.Load() != 2 {
		t.Errorf("%d runs, want 2", runs.Load())
	}
}

// the final answer goes to ReplyTo unless the run already posted there.
func TestWorkerReply(t *testing.T) {
	thread := job("hermes")
	thread.ReplyTo.ThreadID = "tParent"
	noReplyTo := job("hermes")
	noReplyTo.ReplyTo = nil
	tests := []struct {
		name string
		job  sb.WakeJob
		res  agentrun.Result
		want bool
	}{
		{"answered", job("hermes"), answered("hermes", "Die Zahlen stimmen."), true},
		{"answered in a thread", thread, answered("hermes", "Die Zahlen stimmen."), true},
		{"already posted with send_message", job("hermes"),
			answered("hermes", "Erledigt.", rcCall("send_message", "ok", "rFinanz")), false},
		{"already posted with reply", thread,
			answered("hermes", "Erledigt.", rcCall("reply", "ok", "rFinanz")), false},
		{"already posted a file", job("hermes"),
			answered("hermes", "Erledigt.", rcCall("send_file", "ok", "rFinanz")), false},
		{"posted to another room only", job("hermes"),
			answered("hermes", "Erledigt.", rcCall("send_message", "ok", "GENERAL")), true},
		{"post to the room failed", job("hermes"),
			answered("hermes", "Erledigt.", rcCall("send_message", "error", "rFinanz")), true},
		{"post is pending approval", job("hermes"),
			answered("hermes", "Erledigt.", rcCall("send_message", "pending_approval", "rFinanz")), true},
		{"only read the room", job("hermes"),
			answered("hermes", "Gelesen.", rcCall("read_room", "ok", "rFinanz")), true},
		{"another tool names the room", job("hermes"),
			answered("hermes", "Hochgeladen.", agentrun.Call{Tool: "Nextcloud", Action: "upload",
				Envelope: sb.OK(map[string]any{"roomId": "rFinanz"})}), true},
		{"empty answer", job("hermes"), answered("hermes", ""), false},
		{"no ReplyTo", noReplyTo, answered("hermes", "Die Zahlen stimmen."), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, _, r := newWorker(memstore.New(), func(context.Context, sb.WakeJob) (agentrun.Result, error) { return tt.res, nil })
			if err := w.Handle(context.Background(), tt.job); err != nil {
				t.Fatal(err)
			}
			got := r.all()
			if (len(got) == 1) != tt.want || len(got) > 1 {
				t.Fatalf("%d replies posted, want posted=%v", len(got), tt.want)
			}
			if !tt.want {
				return
			}
			if got[0].Text != tt.res.Answer {
				t.Errorf("reply text %q, want %q", got[0].Text, tt.res.Answer)
			}
			if got[0].Run != tt.res.Run {
				t.Errorf("reply within run %+v, want %+v", got[0].Run, tt.res.Run)
			}
			if *got[0].Job.ReplyTo != *tt.job.ReplyTo {
				t.Errorf("reply to %+v, want %+v", *got[0].Job.ReplyTo, *tt.job.ReplyTo)
			}
		})
	}
}

func TestAlreadyAnswered(t *testing.T) {
	to := &wake.ReplyTo{RoomID: "rFinanz"}
	tests := []struct {
		name  string
		calls []agentrun.Call
		want  bool
	}{
		{"no calls", nil, false},
		{"send_message ok same room", []agentrun.Call{rcCall("send_message", "ok", "rFinanz")}, true},
		{"send_message ok other room", []agentrun.Call{rcCall("send_message", "ok", "GENERAL")}, false},
		{"other room, then same room", []agentrun.Call{rcCall("send_message", "ok", "GENERAL"), rcCall("reply", "ok", "rFinanz")}, true},
		{"failed, then ok", []agentrun.Call{rcCall("send_message", "error", "rFinanz"), rcCall("send_message", "ok", "rFinanz")}, true},
		{"room id missing", []agentrun.Call{{Tool: "RocketChat", Action: "send_message", Envelope: sb.OK(nil)}}, false},
		{"room id not a string", []agentrun.Call{{Tool: "RocketChat", Action: "send_message", Envelope: sb.OK(map[string]any{"roomId": 42})}}, false},
		{"react is no answer", []agentrun.Call{rcCall("react", "ok", "rFinanz")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wake.AlreadyAnswered(agentrun.Result{Calls: tt.calls}, to); got != tt.want {
				t.Errorf("AlreadyAnswered = %v, want %v", got, tt.want)
			}
		})
	}
}

// A webhook job (Pending) is prepared first; "no wake" skips the run and
// takes no lease; a prepare error fails the job.
func TestWorkerPrepare(t *testing.T) {
	pending := sb.WakeJob{AgentID: "hermes", Source: "rocketchat-webhook",
		Pending: &sb.PendingMessage{RoomID: "rFinanz", MessageID: "m1"}}
	prepared := sb.WakeJob{AgentID: "hermes", Source: "rocketchat-webhook", Text: "framed wake",
		ReplyTo: &wake.ReplyTo{RoomID: "rFinanz"}, MessageIDs: []string{"m1"}}
	tests := []struct {
		name     string
		ok       bool
		err      error
		wantRun  bool
		wantErr  bool
		wantSent int
	}{
		{"wakes", true, nil, true, false, 1},
		{"no wake", false, nil, false, false, 0},
		{"prepare failed", false, sb.E("rocketchat.chat.getMessage", sb.EUNAVAILABLE, "Rocket.Chat down"), false, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []sb.WakeJob
			w, l, r := newWorker(memstore.New(), func(_ context.Context, j sb.WakeJob) (agentrun.Result, error) {
				ran = append(ran, j)
				return answered(j.AgentID, "Antwort"), nil
			})
			var asked []sb.WakeJob
			w.Preparer = prepareFunc(func(_ context.Context, j sb.WakeJob) (sb.WakeJob, bool, error) {
				asked = append(asked, j)
				if !tt.ok {
					return j, false, tt.err
				}
				return prepared, true, nil
			})
			err := w.Handle(context.Background(), pending)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Handle = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr && sb.ErrorCode(err) != sb.EUNAVAILABLE {
				t.Errorf("error code %q, want the prepare error's %q kept", sb.ErrorCode(err), sb.EUNAVAILABLE)
			}
			if len(asked) != 1 || asked[0].Pending == nil || asked[0].Pending.MessageID != "m1" {
				t.Fatalf("Prepare asked with %+v, want the pending job once", asked)
			}
			if (len(ran) == 1) != tt.wantRun {
				t.Fatalf("%d runs, want run=%v", len(ran), tt.wantRun)
			}
			if tt.wantRun && (ran[0].Text != "framed wake" || ran[0].Pending != nil) {
				t.Errorf("run got %+v, want the prepared job", ran[0])
			}
			if !tt.wantRun && l.acquired.Load() != 0 {
				t.Errorf("a lease was taken for a job that does not run")
			}
			if got := len(r.all()); got != tt.wantSent {
				t.Errorf("%d replies, want %d", got, tt.wantSent)
			}
		})
	}
}

// A job that hands over an approved call runs that call (Execute) and no
// agent: no lease, no run, no reply; its error is the job's, so Lambda
// retries it; a worker without Execute refuses it.
func TestWorkerRunsApprovedCalls(t *testing.T) {
	store := memstore.New()
	runs := 0
	w, l, r := newWorker(store, func(context.Context, sb.WakeJob) (agentrun.Result, error) {
		runs++
		return answered("hermes", "hi"), nil
	})
	j := sb.WakeJob{AgentID: "hermes", Source: "approval", ApprovalID: "ap1"}
	if err := w.Handle(t.Context(), j); sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Fatalf("without Execute: %v, want EUNAVAILABLE", err)
	}
	var got []string
	down := errors.New("store down")
	w.Approvals = executeFunc(func(_ context.Context, id string) error {
		got = append(got, id)
		if len(got) == 1 {
			return down
		}
		return nil
	})
	if err := w.Handle(t.Context(), j); !errors.Is(err, down) {
		t.Fatalf("first attempt: %v, want the Execute error", err)
	}
	if err := w.Handle(t.Context(), j); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if len(got) != 2 || got[1] != "ap1" || runs != 0 || len(r.all()) != 0 || l.acquired.Load() != 0 {
		t.Fatalf("executed %v, %d runs, %d replies, %d leases; want ap1 twice and nothing else", got, runs, len(r.all()), l.acquired.Load())
	}
}
