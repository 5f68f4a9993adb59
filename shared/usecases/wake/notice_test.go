package wake_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// noticeEnv is a worker that posts into a fake Rocket.Chat as the agent,
// with wake claims on a memstore, like the app wires it.
type noticeEnv struct {
	*pollEnv
	w        *wake.Worker
	wakes    *sb.WakeClaims
	fallback []string // what went to the human through the router
	mu       sync.Mutex
}

const secretDetail = "POST http://model.internal/v1: HTTP 503: key sk-live-0123456789"

func newNoticeEnv(t *testing.T, run func(context.Context, sb.WakeJob) (agentrun.Result, error)) *noticeEnv {
	t.Helper()
	e := &noticeEnv{pollEnv: newPollEnv(t)}
	e.wakes = e.pollEnv.wakes()
	log, _ := newLog()
	e.w = &wake.Worker{
		Leases: e.store, Claims: e.wakes, Notes: e.store, Runner: runFunc(run),
		Replies: replyFunc(func(ctx context.Context, j sb.WakeJob, _ sb.RunContext, text string) error {
			_, err := e.hermesChat.PostMessage(ctx, j.ReplyTo.RoomID, text, j.ReplyTo.ThreadID)
			return err
		}),
		Fallback: fallbackFunc(func(_ context.Context, j sb.WakeJob, text string) error {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.fallback = append(e.fallback, text)
			return nil
		}),
		RunFor: time.Minute, WaitFor: time.Second, Log: log, Now: e.clk.Now,
		Sleep: func(_ context.Context, d time.Duration) error { e.clk.Add(d); return nil },
	}
	return e
}

// job is a poll wake of hermes for a fresh message in room (thread parent
// when set), with its claim taken like the poll does.
func (e *noticeEnv) job(t *testing.T, room, parent string) (sb.WakeJob, rcfake.Message) {
	t.Helper()
	m := e.post(t, "richard", room, "@agent-hermes bitte", rcfake.PostOptions{Tmid: parent})
	key := wake.ClaimKey("hermes", m.ID)
	if _, ok, err := e.wakes.Take(t.Context(), key, "poll-"+m.ID, e.clk.Now().Add(time.Hour)); err != nil || !ok {
		t.Fatalf("Take: %v %v", ok, err)
	}
	return sb.WakeJob{AgentID: "hermes", Source: "rocketchat-poll", Text: "wake", MessageIDs: []string{m.ID},
		ReplyTo: &wake.ReplyTo{RoomID: room, ThreadID: parent},
		Claim:   &sb.WakeJobClaim{Keys: []string{key}, Owner: "poll-" + m.ID}}, m
}

// agentPosts are hermes' messages in room.
func (e *noticeEnv) agentPosts(room string) []rcfake.Message {
	var out []rcfake.Message
	for _, m := range e.rc.Messages(room) {
		if m.Username == "agent-hermes" {
			out = append(out, m)
		}
	}
	return out
}

func (e *noticeEnv) claim(t *testing.T, j sb.WakeJob) sb.WakeClaim {
	t.Helper()
	c, _, err := e.wakes.Get(t.Context(), j.Claim.Keys[0])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every run that ends without an answer says so in the person's thread,
// once, in plain words, and only when no retry will come.
func TestWorkerNoticeForEveryEnding(t *testing.T) {
	tests := []struct {
		name string
		run  func(context.Context, sb.WakeJob) (agentrun.Result, error)
		busy bool // another run holds the agent's lease throughout
		// noticeAt is the attempt (1-based) whose end posts the notice.
		noticeAt int
		want     string // in the notice
		outcome  string // of the claim
		// interim, when set, is said after the first attempt (a retry
		// follows), before the final notice.
		interim string
	}{
		{"model unavailable after every retry", func(context.Context, sb.WakeJob) (agentrun.Result, error) {
			return agentrun.Result{Run: sb.RunContext{RunID: "r1"}, Outcome: "error"},
				sb.E("openai.complete", sb.EUNAVAILABLE, secretDetail)
		}, false, 3, "language model is not reachable", "failed:model_unavailable", "I will try again"},
		{"model refuses (no retry helps)", func(context.Context, sb.WakeJob) (agentrun.Result, error) {
			return agentrun.Result{Run: sb.RunContext{RunID: "r1"}, Outcome: "error"},
				sb.E("openai.complete", sb.EUNAUTHORIZED, secretDetail)
		}, false, 1, "tell the operator", "failed:model_refused", ""},
		{"a tool crashed", func(context.Context, sb.WakeJob) (agentrun.Result, error) {
			panic("nil map in " + secretDetail)
		}, false, 1, "Something broke", "failed:crashed", ""},
		{"agent busy through every attempt", func(context.Context, sb.WakeJob) (agentrun.Result, error) {
			return answered("hermes", "never"), nil
		}, true, 3, "still busy", "failed:busy", ""},
		{"step budget", func(context.Context, sb.WakeJob) (agentrun.Result, error) {
			return agentrun.Result{Run: sb.RunContext{RunID: "r1"}, Outcome: "step_budget",
				Answer: "I stopped after 8 steps without finishing; please narrow the request."}, nil
		}, false, 1, "I stopped after 8 steps", wake.OutcomeAnswered, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newNoticeEnv(t, tt.run)
			parent := e.post(t, "richard", e.general, "Thema", rcfake.PostOptions{})
			j, _ := e.job(t, e.general, parent.ID)
			if tt.busy {
				if ok, _ := e.store.Acquire(t.Context(), "agent#hermes", "other-run", e.clk.Now().Add(time.Hour)); !ok {
					t.Fatal("could not hold the lease")
				}
			}
			for attempt := 1; attempt <= 3; attempt++ {
				err := e.w.Handle(context.Background(), j) // Lambda's retries: the same event again
				posts := e.agentPosts(e.general)
				interims := 0
				if tt.interim != "" {
					interims = 1
				}
				if attempt < tt.noticeAt {
					if err == nil || len(posts) != interims {
						t.Fatalf("attempt %d: err %v, %d posts %+v; want an error for the retry and %d notices yet", attempt, err, len(posts), posts, interims)
					}
					if interims == 1 && (!strings.Contains(posts[0].Text, tt.interim) || posts[0].ThreadID != parent.ID) {
						t.Fatalf("attempt %d: interim notice %+v, want %q in the thread", attempt, posts[0], tt.interim)
					}
					continue
				}
				if err != nil {
					t.Fatalf("attempt %d: %v, want the ending handled", attempt, err)
				}
				if len(posts) != 1+interims {
					t.Fatalf("attempt %d: %d posts %+v, want exactly one notice (after %d interim)", attempt, len(posts), posts, interims)
				}
				p := posts[interims]
				if !strings.Contains(p.Text, tt.want) || p.ThreadID != parent.ID {
					t.Errorf("notice %q in thread %q, want %q in thread %s", p.Text, p.ThreadID, tt.want, parent.ID)
				}
				if strings.Contains(p.Text, "sk-live") || strings.Contains(p.Text, "model.internal") || strings.Contains(p.Text, "nil map") {
					t.Errorf("notice leaks internal error text: %q", p.Text)
				}
				if c := e.claim(t, j); c.State != sb.ClaimDone || c.Outcome != tt.outcome {
					t.Errorf("claim %+v, want done/%s", c, tt.outcome)
				}
				break
			}
			// Another delivery of the same job changes nothing.
			_ = e.w.Handle(context.Background(), j)
			want := 1
			if tt.interim != "" {
				want = 2
			}
			if n := len(e.agentPosts(e.general)); n != want {
				t.Errorf("%d posts after a late retry, want %d", n, want)
			}
		})
	}
}

// Every message the daily budget refused gets its answer in the person's
// thread: per message, not once per room and day (after a storm of task
// wakes, a person's DM must still hear why nothing comes). A retry of the
// same message's job says nothing twice. (The human hears it once per
// agent and day through the router, elsewhere.)
func TestWorkerBudgetNoticeForEveryRefusedMessage(t *testing.T) {
	e := newNoticeEnv(t, func(context.Context, sb.WakeJob) (agentrun.Result, error) {
		return agentrun.Result{Outcome: wake.OutcomeBudget}, nil
	})
	for range 2 {
		for _, room := range []string{e.general, e.finanz} {
			j, _ := e.job(t, room, "")
			for range 2 { // the job comes twice (a retry)
				if err := e.w.Handle(context.Background(), j); err != nil {
					t.Fatal(err)
				}
			}
			if c := e.claim(t, j); c.State != sb.ClaimDone || c.Outcome != wake.OutcomeBudget {
				t.Errorf("claim %+v, want done/%s", c, wake.OutcomeBudget)
			}
		}
	}
	for _, room := range []string{e.general, e.finanz} {
		posts := e.agentPosts(room)
		if len(posts) != 2 || !strings.Contains(posts[0].Text, "budget") || !strings.Contains(posts[1].Text, "budget") {
			t.Errorf("room %s: %+v, want one budget notice per refused message (2)", room, posts)
		}
	}
	// A job without message ids (a Telegram message) is one message too.
	var told []string
	e.w.Replies = replyFunc(func(_ context.Context, j sb.WakeJob, _ sb.RunContext, text string) error {
		told = append(told, j.ReplyTo.TelegramChatID+": "+text)
		return nil
	})
	for range 2 {
		if err := e.w.Handle(context.Background(), sb.WakeJob{AgentID: "hermes", Source: "telegram", Text: "wake",
			ReplyTo: &wake.ReplyTo{TelegramChatID: "42"}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(told) != 2 || !strings.Contains(told[1], "budget") {
		t.Errorf("telegram got %q, want a budget notice for each message", told)
	}
}

// A reply Rocket.Chat refuses for the moment is tried again; one it keeps
// refusing goes to the human through the router, and the claim says so.
func TestWorkerReplyRetriedThenHandedToTheRouter(t *testing.T) {
	answer := func(context.Context, sb.WakeJob) (agentrun.Result, error) {
		return answered("hermes", "Die Zahlen stimmen."), nil
	}
	const down = `<html><body><h1>502 Bad Gateway</h1></body></html>`

	e := newNoticeEnv(t, answer)
	j, _ := e.job(t, e.general, "")
	e.rc.FailNext("chat.postMessage", http.StatusBadGateway, down)
	if err := e.w.Handle(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if posts := e.agentPosts(e.general); len(posts) != 1 || len(e.fallback) != 0 {
		t.Fatalf("after one refusal: %d posts, %d router deliveries; want the retry to post", len(posts), len(e.fallback))
	}

	e = newNoticeEnv(t, answer)
	j, _ = e.job(t, e.general, "")
	for range 3 {
		e.rc.FailNext("chat.postMessage", http.StatusBadGateway, down)
	}
	if err := e.w.Handle(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if n := e.rc.Calls("chat.postMessage"); n != 3 {
		t.Errorf("%d posts tried, want 3", n)
	}
	if len(e.fallback) != 1 || !strings.Contains(e.fallback[0], "Die Zahlen stimmen.") {
		t.Fatalf("router got %q, want the answer once", e.fallback)
	}
	if c := e.claim(t, j); c.State != sb.ClaimDone || c.Outcome != wake.OutcomeViaRouter {
		t.Errorf("claim %+v, want done/%s", c, wake.OutcomeViaRouter)
	}

	// Neither the room nor the router: the error goes back for a retry.
	e = newNoticeEnv(t, answer)
	e.w.Fallback = fallbackFunc(func(context.Context, sb.WakeJob, string) error { return errors.New("no channel") })
	j, _ = e.job(t, e.general, "")
	for range 3 {
		e.rc.FailNext("chat.postMessage", http.StatusBadGateway, down)
	}
	if err := e.w.Handle(context.Background(), j); err == nil {
		t.Error("an answer nobody took was reported handled on the first attempt")
	}
}
