package wake_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// A run that dies (its process killed) leaves its claim in progress; the
// next tick holds the room, and once the claim's window has passed the
// poll takes it over and queues the wake again, exactly once.
func TestPollRecoversAWakeWhoseRunDied(t *testing.T) {
	e := newPollEnv(t)
	e.poller.ClaimFor = 5 * time.Minute
	e.disp.Complete = beginClaims(e.wakes(), e.clk.Now().Add(5*time.Minute)) // the worker began, then was killed
	m := e.post(t, "richard", e.general, "@agent-hermes bist du da?", rcfake.PostOptions{})
	if st := e.tick(t); st.Wakes != 1 {
		t.Fatalf("first tick: %+v, want one wake", st)
	}
	first := e.disp.All()[0]
	if first.Claim == nil || !slices.Equal(first.Claim.Keys, []string{wake.ClaimKey("hermes", m.ID)}) {
		t.Fatalf("job claim %+v, want the message's claim", first.Claim)
	}
	if s := e.sub(t, e.general); !s.Alert {
		t.Error("the room was marked read while its wake is in progress")
	}
	// While the claim's window lasts the wake is someone's work: no new job.
	for range 3 {
		e.tick(t)
	}
	if e.disp.Len() != 1 {
		t.Fatalf("%d jobs while the first run's claim was live, want 1", e.disp.Len())
	}
	// The window passes: one tick takes it over, with a new owner.
	e.clk.Add(5 * time.Minute)
	e.tick(t)
	if e.disp.Len() != 2 {
		t.Fatalf("%d jobs after the claim expired, want 2 (the take-over)", e.disp.Len())
	}
	again := e.disp.All()[1]
	checkJob(t, again, "hermes", wake.ReplyTo{RoomID: e.general, RoomName: "general"}, m)
	if again.Claim.Owner == first.Claim.Owner {
		t.Error("the take-over kept the dead run's owner")
	}
	// The take-over finishes: the room is read and nothing comes again.
	finishClaims(e.wakes())(again)
	e.tick(t)
	e.clk.Add(time.Hour)
	e.tick(t)
	if e.disp.Len() != 2 {
		t.Errorf("%d jobs after the take-over finished, want 2", e.disp.Len())
	}
	if s := e.sub(t, e.general); s.Alert {
		t.Error("the room stays unread after its wake was done")
	}
}

// A throttled wake is deliberately not answered: a room that has used up
// its hour is turned away before any claim, the room is read, its marker
// moves past the message, and the next hour does not bring it back.
func TestPollThrottledRoomIsTurnedAwayUnclaimed(t *testing.T) {
	e := newPollEnv(t)
	e.hermes.MaxWakesPerHour = 1
	e.post(t, "richard", e.general, "@agent-hermes eins", rcfake.PostOptions{})
	e.tick(t)
	b := e.post(t, "richard", e.general, "@agent-hermes zwei", rcfake.PostOptions{})
	if st := e.tick(t); st.Throttled != 1 || st.Wakes != 0 {
		t.Fatalf("stats %+v, want one throttled room and no wake", st)
	}
	if c, found, err := e.wakes().Get(t.Context(), wake.ClaimKey("hermes", b.ID)); err != nil || found {
		t.Fatalf("throttled message's claim %+v found=%v (%v), want none", c, found, err)
	}
	if s := e.sub(t, e.general); s.Alert {
		t.Error("a throttled room stays unread")
	}
	e.clk.Add(time.Hour)
	e.tick(t)
	if n := e.disp.Len(); n != 1 {
		t.Errorf("%d jobs after the next hour's tick, want only the first wake's 1", n)
	}
}

// In a room over its hour, a message a run still has keeps the poll's
// marker: if that run dies, a later tick takes it over.
func TestPollThrottledRoomStillHoldsALiveClaim(t *testing.T) {
	e := newPollEnv(t)
	e.hermes.MaxWakesPerHour = 1
	e.poller.ClaimFor = 5 * time.Minute
	e.disp.Complete = beginClaims(e.wakes(), e.clk.Now().Add(5*time.Minute)) // the worker began, then was killed
	a := e.post(t, "richard", e.general, "@agent-hermes eins", rcfake.PostOptions{})
	e.tick(t)
	// Used up by another wake (the webhook's) before the run of a ends.
	if _, _, err := e.store.Incr(t.Context(), wake.ThrottleKey("hermes", e.general, e.clk.Now()), 0, e.clk.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	e.tick(t)
	if s := e.sub(t, e.general); !s.Alert {
		t.Error("the room was read while a run still had its message")
	}
	e.clk.Add(time.Hour)
	e.tick(t)
	jobs := e.disp.All()
	if len(jobs) != 2 || !slices.Contains(jobs[1].MessageIDs, a.ID) {
		t.Fatalf("jobs %+v, want the dead run's message taken over in the next hour", jobs)
	}
}

// Rocket.Chat's retry of a delivery whose run died takes the claim over;
// while the run's window lasts, retries are duplicates.
func TestReceiverRetryTakesOverADeadRun(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, nil, nil)
	log, _ := newLog()
	e.store.Now = e.clk.Now
	claims := &sb.WakeClaims{KV: e.store.KV(), Now: e.clk.Now}
	recv := wake.NewReceiver([]string{hookToken}, []wake.WebhookAgent{hermesHook(e.ids)}, claims, e.disp, log)
	wake.SetReceiverClock(recv, e.clk.Now)
	recv.ClaimFor = 200 * time.Millisecond
	srv := httptest.NewServer(httpapi.RocketChatWebhook(recv))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	m := e.post(t, "richard", e.general, "@agent-hermes hallo", rcfake.PostOptions{})
	body := e.payload(t, m, nil)
	checkOK(t, e.deliver(t, body))
	checkOK(t, e.deliver(t, body))
	if e.disp.Len() != 1 {
		t.Fatalf("%d jobs while the first run is live, want 1", e.disp.Len())
	}
	e.clk.Add(300 * time.Millisecond) // the window passes: the run is gone
	checkOK(t, e.deliver(t, body))
	checkOK(t, e.deliver(t, body))
	if e.disp.Len() != 2 {
		t.Fatalf("%d jobs after the window passed, want 2 (one take-over)", e.disp.Len())
	}
	jobs := e.disp.All()
	if jobs[0].Claim.Owner == jobs[1].Claim.Owner || jobs[1].Claim.Keys[0] != wake.ClaimKey("hermes", m.ID) {
		t.Errorf("take-over claim %+v after %+v", jobs[1].Claim, jobs[0].Claim)
	}
	// Done is done: no retry wakes it again.
	finishClaims(claims)(jobs[1])
	e.clk.Add(300 * time.Millisecond)
	checkOK(t, e.deliver(t, body))
	if e.disp.Len() != 2 {
		t.Errorf("%d jobs after the claim was done, want 2", e.disp.Len())
	}
}

// untilLeases records the end of every lease taken.
type untilLeases struct {
	sb.Leases
	mu     sync.Mutex
	untils []time.Time
}

func (l *untilLeases) Acquire(ctx context.Context, key, holder string, until time.Time) (bool, error) {
	ok, err := l.Leases.Acquire(ctx, key, holder, until)
	if ok {
		l.mu.Lock()
		l.untils = append(l.untils, until)
		l.mu.Unlock()
	}
	return ok, err
}

// claimedJob is a poll job whose claim the dispatcher took, on store.
func claimedJob(t *testing.T, w *sb.WakeClaims, agent, msgID string, until time.Time) sb.WakeJob {
	t.Helper()
	key := wake.ClaimKey(agent, msgID)
	if _, ok, err := w.Take(t.Context(), key, "job-"+msgID, until); err != nil || !ok {
		t.Fatalf("Take: %v %v", ok, err)
	}
	j := job(agent)
	j.MessageIDs = []string{msgID}
	j.Claim = &sb.WakeJobClaim{Keys: []string{key}, Owner: "job-" + msgID}
	return j
}

// The run has its own deadline (RunFor, capped by the invoker's), the lease
// ends at that deadline plus the slack, and the claim is done once the
// answer was posted.
func TestWorkerBoundsLeaseAndFinishesClaim(t *testing.T) {
	clk := newClock(t0)
	store := &memstore.Store{Now: clk.Now}
	wakes := &sb.WakeClaims{KV: store.KV(), Now: clk.Now}
	var runLeft time.Duration // the run's context: time left at its start
	w, _, r := newWorker(store, func(ctx context.Context, j sb.WakeJob) (agentrun.Result, error) {
		d, _ := ctx.Deadline()
		runLeft = time.Until(d)
		return answered(j.AgentID, "Hier."), nil
	})
	ul := &untilLeases{Leases: w.Leases}
	w.Leases, w.Claims, w.Now = ul, wakes, clk.Now
	w.RunFor, w.Slack = 3*time.Minute, 10*time.Second

	j := claimedJob(t, wakes, "hermes", "m1", t0.Add(time.Hour))
	if err := w.Handle(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if runLeft > 3*time.Minute || runLeft < 3*time.Minute-5*time.Second {
		t.Errorf("the run had %v, want RunFor (3m)", runLeft)
	}
	if len(ul.untils) != 1 || !ul.untils[0].Equal(t0.Add(3*time.Minute+10*time.Second)) {
		t.Errorf("lease until %v, want the run deadline plus the slack", ul.untils)
	}
	if len(r.all()) != 1 {
		t.Fatalf("%d replies, want 1", len(r.all()))
	}
	c, _, _ := wakes.Get(t.Context(), j.Claim.Keys[0])
	if c.State != sb.ClaimDone || c.Outcome != wake.OutcomeAnswered || c.Attempt != 1 {
		t.Errorf("claim after the answer %+v, want done/answered after attempt 1", c)
	}
	// A late retry of the same job finds it done and does nothing.
	if err := w.Handle(context.Background(), j); err != nil || len(r.all()) != 1 {
		t.Errorf("retry of a done job: %v, %d replies; want nil and still 1", err, len(r.all()))
	}

	// The invoker's deadline (a Lambda's) caps the run's and the lease's.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	j2 := claimedJob(t, wakes, "hermes", "m2", t0.Add(time.Hour))
	if err := w.Handle(ctx, j2); err != nil {
		t.Fatal(err)
	}
	if runLeft > 50*time.Second || runLeft < 45*time.Second {
		t.Errorf("under a one-minute Lambda deadline the run had %v, want the deadline less the slack (50s)", runLeft)
	}
	if got := ul.untils[1].Sub(t0); got > time.Minute || got < 55*time.Second {
		t.Errorf("lease under a one-minute Lambda deadline ends after %v, want about 1m", got)
	}
}

// A job whose claim another run took over does not run.
func TestWorkerSkipsAClaimTakenOver(t *testing.T) {
	clk := newClock(t0)
	store := &memstore.Store{Now: clk.Now}
	wakes := &sb.WakeClaims{KV: store.KV(), Now: clk.Now}
	runs := 0
	w, _, _ := newWorker(store, func(_ context.Context, j sb.WakeJob) (agentrun.Result, error) {
		runs++
		return answered(j.AgentID, "x"), nil
	})
	w.Claims, w.Now = wakes, clk.Now
	j := claimedJob(t, wakes, "hermes", "m1", t0.Add(time.Minute))
	clk.Add(2 * time.Minute)
	if _, ok, _ := wakes.Take(t.Context(), j.Claim.Keys[0], "poll-takeover", t0.Add(time.Hour)); !ok {
		t.Fatal("take-over refused")
	}
	if err := w.Handle(context.Background(), j); err != nil || runs != 0 {
		t.Errorf("Handle of a job taken over: %v, %d runs; want nil and 0", err, runs)
	}
}

// The local pool retries a failed job twice, like Lambda's async invoke,
// after the retry delays; its log says so only while a retry will come.
func TestPoolRetriesLikeLambda(t *testing.T) {
	tests := []struct {
		name      string
		failFirst int
		wantRuns  int
		retried   int
		gaveUp    int
	}{
		{"succeeds on the second try", 1, 2, 1, 0},
		{"succeeds on the last try", 2, 3, 2, 0},
		{"fails every time", 99, 3, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, logs := newLog()
			var mu sync.Mutex
			runs := 0
			done := make(chan struct{}, 8)
			p := wake.NewPool(1, 4, func(context.Context, sb.WakeJob) error {
				mu.Lock()
				defer mu.Unlock()
				runs++
				defer func() { done <- struct{}{} }()
				if runs <= tt.failFirst {
					return errors.New("model down")
				}
				return nil
			}, log)
			p.SetRetryDelays([]time.Duration{10 * time.Millisecond, 20 * time.Millisecond})
			if err := p.Dispatch(context.Background(), sb.WakeJob{AgentID: "hermes", Source: "rocketchat-poll"}); err != nil {
				t.Fatal(err)
			}
			for range tt.wantRuns {
				within(t, 5*time.Second, done, "a run")
			}
			if err := p.Idle(t.Context()); err != nil { // no further retry is queued, running or due
				t.Fatal(err)
			}
			p.Close(context.Background())
			mu.Lock()
			defer mu.Unlock()
			if runs != tt.wantRuns {
				t.Errorf("%d runs, want %d", runs, tt.wantRuns)
			}
			if got := logs.Count("wake job failed; the wake will be retried"); got != tt.retried {
				t.Errorf("%d 'will be retried' logs, want %d", got, tt.retried)
			}
			if got := logs.Count("wake job failed; no retries left"); got != tt.gaveUp {
				t.Errorf("%d 'no retries left' logs, want %d", got, tt.gaveUp)
			}
		})
	}
}

// flakyFinish is a WakeStore whose next Finish calls fail as a throttled
// or unreachable DynamoDB write does (EUNAVAILABLE, nothing written).
type flakyFinish struct {
	wake.WakeStore
	mu   sync.Mutex
	fail int
}

func (f *flakyFinish) Finish(ctx context.Context, key, outcome string) error {
	f.mu.Lock()
	fail := f.fail > 0
	if fail {
		f.fail--
	}
	f.mu.Unlock()
	if fail {
		return sb.E("kv.putIf", sb.EUNAVAILABLE, "the database is busy or unreachable; try again in a moment")
	}
	return f.WakeStore.Finish(ctx, key, outcome)
}

// An answer that was posted stays answered once: when marking its claim
// done is refused for a moment (DynamoDB throttling), the worker tries the
// write again rather than fail the job, whose retry would run the agent and
// post the answer a second time.
func TestWorkerFinishAfterTheAnswerSurvivesAThrottledWrite(t *testing.T) {
	clk := newClock(t0)
	store := &memstore.Store{Now: clk.Now}
	wakes := &sb.WakeClaims{KV: store.KV(), Now: clk.Now}
	runs := 0
	w, _, r := newWorker(store, func(_ context.Context, j sb.WakeJob) (agentrun.Result, error) {
		runs++
		return answered(j.AgentID, "Hier."), nil
	})
	flaky := &flakyFinish{WakeStore: wakes, fail: 3}
	var waits []time.Duration
	w.Claims, w.Now = flaky, clk.Now
	w.Sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	j := claimedJob(t, wakes, "hermes", "m1", t0.Add(time.Hour))
	err := w.Handle(context.Background(), j)
	if err != nil {
		// What the pool (or Lambda) does with a failed job: run it again.
		_ = w.Handle(context.Background(), j)
	}
	if err != nil || runs != 1 || len(r.all()) != 1 {
		t.Fatalf("Handle = %v; %d runs, %d replies; want nil, one run, one reply", err, runs, len(r.all()))
	}
	c, _, _ := wakes.Get(t.Context(), j.Claim.Keys[0])
	if c.State != sb.ClaimDone || c.Outcome != wake.OutcomeAnswered {
		t.Errorf("claim %+v, want done/answered", c)
	}
	if len(waits) != 3 {
		t.Errorf("waits %v, want one before each of the 3 further tries", waits)
	}

	// Refused past every try: the job fails (a retry or the poll recovers
	// it), and the log says the answer may come twice.
	log, logs := newLog()
	w.Log = log
	flaky.fail = 99
	j2 := claimedJob(t, wakes, "hermes", "m2", t0.Add(time.Hour))
	if err := w.Handle(context.Background(), j2); sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Errorf("Handle with the claim write refused throughout = %v, want EUNAVAILABLE", err)
	}
	if logs.Count("wake claim could not be marked done; a retry may run the wake again") != 1 {
		t.Error("the log does not say that the answer may come twice")
	}
}

// lostAnswerKV applies the next create (PutIf on an absent key) and then
// answers as DynamoDB does to the SDK's retry of a write whose first answer
// was lost on the way (an attempt that timed out client-side but was
// applied): the condition fails, ECONFLICT.
type lostAnswerKV struct {
	sb.KV
	mu   sync.Mutex
	lose int
}

func (k *lostAnswerKV) PutIf(ctx context.Context, key, old, value string, expires time.Time) error {
	k.mu.Lock()
	lose := old == "" && k.lose > 0
	if lose {
		k.lose--
	}
	k.mu.Unlock()
	err := k.KV.PutIf(ctx, key, old, value, expires)
	if lose && err == nil {
		return sb.E("kv.putIf", sb.ECONFLICT, "the conditional write failed")
	}
	return err
}

// A claim write that was applied although its first answer was lost (the
// SDK's retry then fails its condition) is the taker's own claim, not a
// duplicate: the delivery queues its wake instead of leaving an orphaned
// claim that nothing runs until its window ends.
func TestReceiverClaimWhoseAnswerWasLostIsItsOwn(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, nil, nil)
	log, _ := newLog()
	kv := &lostAnswerKV{KV: e.store.KV(), lose: 1}
	wakes := &sb.WakeClaims{KV: kv}
	srv := httptest.NewServer(httpapi.RocketChatWebhook(wake.NewReceiver([]string{hookToken}, []wake.WebhookAgent{hermesHook(e.ids)}, wakes, e.disp, log)))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	m := e.post(t, "richard", e.general, "@agent-hermes hallo", rcfake.PostOptions{})
	body := e.payload(t, m, nil)
	checkOK(t, e.deliver(t, body))
	if e.disp.Len() != 1 {
		t.Fatalf("%d jobs, want 1: the claim this delivery wrote is its own", e.disp.Len())
	}
	c, _, _ := wakes.Get(t.Context(), wake.ClaimKey("hermes", m.ID))
	if job := e.disp.All()[0]; c.Owner != job.Claim.Owner || c.State != sb.ClaimInProgress {
		t.Errorf("claim %+v, want in progress and owned by the queued job (%s)", c, job.Claim.Owner)
	}
	// A real duplicate delivery still finds the claim live and queues nothing.
	checkOK(t, e.deliver(t, body))
	if e.disp.Len() != 1 {
		t.Errorf("%d jobs after a duplicate delivery, want 1", e.disp.Len())
	}
}
