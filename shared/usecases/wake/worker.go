package wake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/clock"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/textsplit"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// WakeStore is the claim state machine of (agent, message) wakes
// (switchboard.WakeClaims over DynamoDB): in progress with an expiry while
// a run owns the message, done once it is answered or deliberately not.
type WakeStore interface {
	// Take claims key for owner until the given time unless it is done or
	// another owner's claim is still live; a claim whose owner is gone is
	// taken over (exactly one of concurrent takers wins).
	Take(ctx context.Context, key, owner string, until time.Time) (sb.WakeClaim, bool, error)
	// Begin counts one attempt of owner's run and moves until to its
	// deadline; false when the claim is done or another live owner has it.
	Begin(ctx context.Context, key, owner string, until time.Time) (sb.WakeClaim, bool, error)
	// Get returns key's claim; found is false when there is none.
	Get(ctx context.Context, key string) (sb.WakeClaim, bool, error)
	// Finish marks key done with outcome.
	Finish(ctx context.Context, key, outcome string) error
	// Release gives owner's claim back at once (its job was not queued).
	Release(ctx context.Context, key, owner string) error
}

var _ WakeStore = (*sb.WakeClaims)(nil)

// ClaimKey is the wake claim of agent for one Rocket.Chat message, shared by
// the webhook and the poll so that a message wakes an agent once.
func ClaimKey(agent, messageID string) string { return "rc#" + agent + "#" + messageID }

// Attempts is how often a job is tried: Lambda's async invoke tries an event
// once and retries it twice, and the local pool does the same.
const Attempts = 3

// Worker runs one wake job: it begins the job's claim (counting the
// attempt), takes the agent's lease (runs of one agent never overlap),
// runs the agent under its own deadline, sends the final answer back to the
// room/thread of the wake unless the agent already answered there,
// and marks the claim done. A run that ends without an answer says so in
// the person's thread, once: on the last attempt, or at once when retrying
// cannot help.
type Worker struct {
	Leases sb.Leases
	// Claims holds the wake claims; jobs without a Claim (approval
	// follow-ups, Telegram) run without them.
	Claims WakeStore
	// Notes are once-only markers for notices (a message the daily budget
	// refused is told once per message).
	Notes    Claims
	Preparer JobPreparer
	Runner   JobRunner
	// Approvals runs the approved call a job hands over (ApprovalID) in
	// place of an agent run. Nil: such jobs fail EUNAVAILABLE.
	Approvals ApprovedCalls
	// Replies posts as the agent where it was woken; the worker's notices
	// go the same way. Files (nil: every answer goes as messages) posts a
	// long answer as a file; Fallback (may be nil) hands an answer that
	// could not be posted to the human by another channel.
	Replies  ReplyPoster
	Files    FilePoster
	Fallback FallbackNotifier
	// MaxMessage is the longest Rocket.Chat message in UTF-16 code units
	// (Message_MaxAllowedSize, default 5,000); a longer answer goes in
	// parts, or as a file (Files) beyond MaxParts parts (default 4).
	MaxMessage int
	MaxParts   int
	// Scrubber masks secrets in a Rocket.Chat answer as a whole, before
	// it is cut: a cut inside a secret leaves two halves no pattern
	// recognises. Nil masks the well-known patterns only.
	Scrubber Scrubber
	// RunFor is the run's deadline from when it has the lease, capped by
	// the invoker's; the lease lasts until it plus Slack (default 15 s,
	// also the time for the reply). WaitFor bounds the wait for a busy
	// agent: then the job fails EUNAVAILABLE and comes again, or on the
	// last attempt the person is told (a bounded wait cannot deadlock).
	RunFor   time.Duration
	WaitFor  time.Duration
	Slack    time.Duration
	Attempts int // default Attempts
	// Telemetry records a span per woken run (nil: none).
	Telemetry sb.Telemetry
	// Pauses holds the wakes of an agent the operator paused until it is
	// resumed (control.Control); nil: no agent is ever paused.
	Pauses Pauses
	Log    *slog.Logger
	Now    func() time.Time
	Sleep  func(ctx context.Context, d time.Duration) error
}

// Pauses says whether an agent is paused and keeps a wake for it until it
// is resumed (then the wake is queued again).
type Pauses interface {
	Paused(ctx context.Context, agentID string) (bool, error)
	Hold(ctx context.Context, job sb.WakeJob) error
}

// JobPreparer fetches and judges the message a webhook job names
// (Pending): the runnable job, or false when it must not wake the agent.
type JobPreparer interface {
	PrepareJob(ctx context.Context, job sb.WakeJob) (sb.WakeJob, bool, error)
}

// JobRunner runs the woken agent on a job (agentrun.Runner).
type JobRunner interface {
	RunJob(ctx context.Context, job sb.WakeJob) (agentrun.Result, error)
}

// ApprovedCalls runs an approved call once, however often its job comes
// (the approvals service).
type ApprovedCalls interface {
	Execute(ctx context.Context, approvalID string) error
}

// ReplyPoster posts text to the job's ReplyTo as the agent, within run.
type ReplyPoster interface {
	Reply(ctx context.Context, job sb.WakeJob, run sb.RunContext, text string) error
}

// FilePoster posts text as a Markdown file into the job's room or thread,
// with caption as its message.
type FilePoster interface {
	Attach(ctx context.Context, job sb.WakeJob, run sb.RunContext, text, caption string) error
}

// FallbackNotifier hands an answer that could not be posted to the human
// by another channel (the router), with a link to the room.
type FallbackNotifier interface {
	Fallback(ctx context.Context, job sb.WakeJob, text string) error
}

// Scrubber masks secrets in text (scrub.Scrubber); StringContext keeps the
// values ctx allows.
type Scrubber interface {
	String(text string) string
	StringContext(ctx context.Context, text string) string
}

// ClaimWindow is how long a freshly dispatched wake stays in progress before
// the webhook retry or the poll takes it for lost: the wait for the agent,
// the run and the slack, plus slack again for the queue.
func ClaimWindow(waitFor, runFor, slack time.Duration) time.Duration {
	return waitFor + runFor + 2*slack
}

// Outcomes recorded on a done claim.
const (
	OutcomeAnswered    = "answered"
	OutcomeNoWake      = "no_wake"   // the rules say this message does not wake the agent
	OutcomeThrottled   = "throttled" // the room's hourly wake limit was reached
	OutcomeSilent      = "silent"    // the run ended without anything to post
	OutcomeViaRouter   = "answered_via_router"
	OutcomeUndelivered = "undelivered"
	OutcomeGaveUp      = "gave_up" // every attempt died
)

// Handle implements the worker for one job.
func (w *Worker) Handle(ctx context.Context, job sb.WakeJob) error {
	if job.ApprovalID != "" {
		if w.Approvals == nil {
			return sb.E("wake.worker", sb.EUNAVAILABLE, "approvals are not set up here, so approved call "+job.ApprovalID+" cannot run")
		}
		return w.Approvals.Execute(ctx, job.ApprovalID)
	}
	h := &handling{w: w, job: job, now: w.Now, sleep: w.Sleep, log: w.Log}
	if h.now == nil {
		h.now = time.Now
	}
	if h.sleep == nil {
		h.sleep = clock.Sleep
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if held, err := h.hold(ctx); err != nil || held {
		return err
	}
	return h.handle(ctx)
}

// hold keeps the job of a paused agent for its resume, before it begins
// its claims: the resumed job begins them as if it came now.
func (h *handling) hold(ctx context.Context) (bool, error) {
	if h.w.Pauses == nil {
		return false, nil
	}
	paused, err := h.w.Pauses.Paused(ctx, h.job.AgentID)
	if err != nil || !paused {
		return false, err
	}
	if err := h.w.Pauses.Hold(ctx, h.job); err != nil {
		return false, err
	}
	return true, nil
}

// handling is the state of one Handle call.
type handling struct {
	w       *Worker
	job     sb.WakeJob
	keys    []string // the claims this attempt owns
	attempt int      // 0 when the job has no claim
	wake    *wakeSpan
	outcome string // what finish marked the claims with
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error
	log     *slog.Logger
}

func (w *Worker) slack() time.Duration {
	if w.Slack > 0 {
		return w.Slack
	}
	return 15 * time.Second
}

func (w *Worker) scrub(ctx context.Context, text string) string {
	if w.Scrubber != nil {
		return w.Scrubber.StringContext(ctx, text)
	}
	return (*scrub.Scrubber)(nil).StringContext(ctx, text)
}

func (w *Worker) attempts() int {
	if w.Attempts > 0 {
		return w.Attempts
	}
	return Attempts
}

// last reports whether a failure now is final: no retry will come.
func (h *handling) last() bool { return h.attempt >= h.w.attempts() }

func (h *handling) handle(ctx context.Context) error {
	w, job := h.w, h.job
	start := h.now()
	claimUntil := start.Add(ClaimWindow(w.WaitFor, w.RunFor, w.slack()))
	// An edit's claim is known only once the message was fetched.
	edit := job.Pending != nil && job.Pending.Edited
	if !edit {
		if ok, err := h.begin(ctx, job.Claim, claimUntil); err != nil || !ok {
			return err
		}
		if h.abandoned(ctx) {
			return h.finish(ctx, OutcomeGaveUp)
		}
	}
	if job.Pending != nil {
		prepared, ok, err := w.Preparer.PrepareJob(ctx, job)
		if err != nil {
			return h.fail(ctx, sb.RunContext{}, fmt.Errorf("wake %s: prepare message %s: %w", job.AgentID, job.Pending.MessageID, err))
		}
		if !ok {
			return h.finish(ctx, OutcomeNoWake)
		}
		h.job, job = prepared, prepared
	}
	if edit {
		if ok, err := h.begin(ctx, job.Claim, claimUntil); err != nil || !ok {
			return err
		}
		if h.abandoned(ctx) {
			return h.finish(ctx, OutcomeGaveUp)
		}
	}

	key, holder := sb.AgentLease(job.AgentID), sb.NewID(start)
	var waited time.Duration // idle: the agent was busy with another run
	err := sb.WaitForLease(ctx, w.Leases, key, holder, sb.LeaseWait{
		Until:  func() time.Time { return h.runDeadline(ctx).Add(w.slack()) },
		GiveUp: start.Add(w.WaitFor),
		First:  200 * time.Millisecond, Max: 2 * time.Second,
		Now: h.now, Sleep: func(ctx context.Context, d time.Duration) error { waited += d; return h.sleep(ctx, d) },
	})
	if waited > 0 {
		h.log.InfoContext(ctx, "wake waited for the agent's lease", "agent", job.AgentID, "waitedMs", waited.Milliseconds())
	}
	switch {
	case errors.Is(err, sb.ErrLeaseBusy):
		err := sb.E(busyOp, sb.EUNAVAILABLE, fmt.Sprintf("agent %s is busy with another run; the wake will be retried", job.AgentID))
		if h.last() {
			err.Message = fmt.Sprintf("agent %s stayed busy with other runs through every attempt", job.AgentID)
		}
		return h.fail(ctx, sb.RunContext{}, err)
	case err != nil && ctx.Err() != nil:
		return err
	case err != nil:
		return h.fail(ctx, sb.RunContext{}, fmt.Errorf("wake %s: lease: %w", job.AgentID, err))
	}
	// Released on every way out; a killed process's lease ends at the run's
	// deadline plus the slack.
	defer func() {
		if err := w.Leases.Release(context.WithoutCancel(ctx), key, holder); err != nil {
			h.log.WarnContext(ctx, "wake could not give the agent's lease back; it ends at the run's deadline plus the slack",
				"agent", job.AgentID, "err", err)
		}
	}()

	// A timeout, not a deadline: h.now may be a test's clock.
	runCtx, cancel := context.WithTimeout(ctx, h.runDeadline(ctx).Sub(h.now()))
	defer cancel()
	res, err := h.run(h.startWake(runCtx), job)
	defer func() { h.endWake(ctx, res.Run, err) }()
	if err != nil {
		return h.fail(ctx, res.Run, fmt.Errorf("wake %s: run: %w", job.AgentID, err))
	}
	if res.Outcome == OutcomeBudget {
		h.budgetNotice(ctx, res.Run)
		return h.finish(ctx, OutcomeBudget)
	}
	if res.Answer == "" && (res.Outcome == agentrun.OutcomeChainStopped || res.Outcome == agentrun.OutcomeChainBudget) {
		h.log.InfoContext(ctx, "wake dropped: its chain was stopped or is over its budget", "agent", job.AgentID,
			"root", res.Run.RootRunID, "reason", res.Outcome)
		return h.finish(ctx, res.Outcome)
	}
	if job.ReplyTo == nil || res.Answer == "" || AlreadyAnswered(res, job.ReplyTo) {
		outcome := OutcomeAnswered
		if res.Answer == "" && !AlreadyAnswered(res, job.ReplyTo) {
			outcome = OutcomeSilent
		}
		return h.finish(ctx, outcome)
	}
	if err := h.postAnswer(ctx, res.Run, res.Answer); err != nil {
		return h.undeliverable(ctx, res, err)
	}
	return h.finish(ctx, OutcomeAnswered)
}

// postAnswer posts the run's answer where the agent was woken. Telegram
// chats get it whole (the Telegram client cuts at its own limit). In
// Rocket.Chat an answer longer than one message goes in parts, each with its
// own retries, so a refusal halfway never repeats the parts already posted;
// an answer of more than MaxParts parts goes as a Markdown file. A
// Rocket.Chat answer is scrubbed whole before any of that (see Scrub).
func (h *handling) postAnswer(ctx context.Context, run sb.RunContext, text string) error {
	if h.job.ReplyTo.TelegramChatID != "" {
		return h.post(ctx, run, text)
	}
	limit, maxParts := h.w.MaxMessage, h.w.MaxParts
	if limit <= 0 {
		limit = textsplit.RocketChatLimit
	}
	if maxParts <= 0 {
		maxParts = textsplit.DefaultMaxParts
	}
	// Scrubbed whole first, then cut: every part, the caption and the file
	// come from the scrubbed text (Telegram's client does the same itself).
	text = h.w.scrub(ctx, text)
	parts := textsplit.Split(text, limit)
	if h.w.Files != nil && textsplit.ShouldAttach(parts, maxParts) {
		caption := textsplit.FirstParagraph(text, limit)
		return h.retry(ctx, func(pctx context.Context) error {
			return h.w.Files.Attach(pctx, h.job, run, text, caption)
		})
	}
	for _, p := range parts {
		if err := h.post(ctx, run, p); err != nil {
			return err
		}
	}
	return nil
}

// replyWaits are the waits before the second and third try of a post that
// Rocket.Chat refused for the moment (rate limited, unavailable): the
// client itself never retries.
var replyWaits = []time.Duration{time.Second, 3 * time.Second}

// postBudget is the least time a post (with its retries) gets.
const postBudget = 10 * time.Second

// post sends text to the job's ReplyTo through Replies, within the slack
// after the run, trying again on a temporary refusal (honouring a 429's
// reset when it is known and fits).
func (h *handling) post(ctx context.Context, run sb.RunContext, text string) error {
	return h.retry(ctx, func(pctx context.Context) error { return h.w.Replies.Reply(pctx, h.job, run, text) })
}

// retry runs one post with the retries described at post.
func (h *handling) retry(ctx context.Context, post func(context.Context) error) error {
	// The post outlives the run's context, but not the invoker's deadline.
	budget := max(2*h.w.slack(), postBudget)
	if d, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(d))
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	for i := 0; ; i++ {
		err := post(pctx)
		code := sb.ErrorCode(err)
		if err == nil || i == len(replyWaits) || (code != sb.EUNAVAILABLE && code != sb.ERATELIMITED) {
			return err
		}
		wait := replyWaits[i]
		var e *sb.Error
		if errors.As(err, &e) && e.RetryAfter > wait {
			wait = e.RetryAfter
		}
		h.log.WarnContext(ctx, "wake reply refused for now; trying again", "agent", h.job.AgentID, "try", i+1, "wait", wait.String(), "err", err)
		if serr := h.sleep(pctx, wait); serr != nil {
			return errors.Join(err, serr)
		}
	}
}

// abandoned reports (and says) that every attempt so far died without
// ending (a crash or a timeout each time): the wake stops here rather than
// loop on the poll's take-overs.
func (h *handling) abandoned(ctx context.Context) bool {
	if h.attempt <= h.w.attempts() {
		return false
	}
	h.log.ErrorContext(ctx, "wake abandoned: every attempt died before it ended", "agent", h.job.AgentID, "attempt", h.attempt, "messages", h.job.MessageIDs)
	h.notify(ctx, sb.RunContext{}, reasonCrashed)
	return true
}

// runDeadline is now plus RunFor, capped by ctx's deadline (the Lambda's)
// less the slack the reply needs.
func (h *handling) runDeadline(ctx context.Context) time.Time {
	now := h.now()
	d := now.Add(h.w.RunFor)
	if cd, ok := ctx.Deadline(); ok {
		if capped := now.Add(time.Until(cd) - h.w.slack()); capped.Before(d) {
			d = capped
		}
	}
	return d
}

// run runs the agent and turns a panic (a tool or adapter crashing) into an
// error, so that the person hears about it and the lease is released.
func (h *handling) run(ctx context.Context, job sb.WakeJob) (res agentrun.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("wake %s: the run crashed: %v", job.AgentID, p)
		}
	}()
	return h.w.Runner.RunJob(ctx, job)
}

// begin starts this attempt on the job's claims. It reports false when
// none of them is this job's any more (done, or taken over by another run):
// then there is nothing to do.
func (h *handling) begin(ctx context.Context, c *sb.WakeJobClaim, until time.Time) (bool, error) {
	if c == nil || h.w.Claims == nil {
		return true, nil
	}
	for _, key := range c.Keys {
		cl, ok, err := h.w.Claims.Begin(ctx, key, c.Owner, until)
		if err != nil {
			return false, fmt.Errorf("wake %s: claim %s: %w", h.job.AgentID, key, err)
		}
		if ok {
			h.keys = append(h.keys, key)
			h.attempt = max(h.attempt, cl.Attempt)
		}
	}
	if len(h.keys) == 0 {
		h.log.InfoContext(ctx, "wake skipped: its messages are answered or another run has them", "agent", h.job.AgentID, "keys", c.Keys)
		return false, nil
	}
	return true, nil
}

// finishWaits are the waits before the further tries of marking a claim
// done that the store refused for the moment (a throttled or unreachable
// DynamoDB write): about the slack in all.
var finishWaits = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}

// finish marks the claims done. By now the wake has had its effect (the
// answer or a notice is posted), and a job that fails here is run again by
// its retry, or by the poll once the claim ends: so a write refused for the
// moment is tried again, within the invoker's deadline.
func (h *handling) finish(ctx context.Context, outcome string) error {
	h.outcome = outcome
	var errs []error
	for _, key := range h.keys {
		err := h.w.Claims.Finish(context.WithoutCancel(ctx), key, outcome)
		for i := 0; i < len(finishWaits) && sb.ErrorCode(err) == sb.EUNAVAILABLE; i++ {
			if h.sleep(ctx, finishWaits[i]) != nil {
				break
			}
			err = h.w.Claims.Finish(context.WithoutCancel(ctx), key, outcome)
		}
		if err != nil {
			h.log.ErrorContext(ctx, "wake claim could not be marked done; a retry may run the wake again",
				"agent", h.job.AgentID, "key", key, "outcome", outcome, "err", err)
			errs = append(errs, fmt.Errorf("wake %s: finish claim %s: %w", h.job.AgentID, key, err))
		}
	}
	return errors.Join(errs...)
}

// fail ends an attempt that went wrong. While a retry will come (and
// retrying can help) the error goes back to the invoker and the claim stays
// in progress. Otherwise the person is told once and the claim is done.
func (h *handling) fail(ctx context.Context, run sb.RunContext, err error) error {
	reason := Classify(err)
	if run.RunID == "" && reason == reasonModelUnavailable {
		reason = reasonUnavailable // no model was asked: Rocket.Chat or the store failed
	}
	if h.attempt == 0 || (!h.last() && reason.Retry) {
		// The model is down and a whole-run retry will come in a minute or
		// two: the person hears so now, once per message (the first
		// attempt), not only after the last retry.
		if reason.Code == reasonModelUnavailable.Code && h.attempt == 1 {
			h.notify(ctx, run, reasonModelRetrying)
		}
		return err
	}
	h.log.ErrorContext(ctx, "wake failed; telling the person", "agent", h.job.AgentID, "attempt", h.attempt, "reason", reason.Code, "err", err)
	h.notify(ctx, run, reason)
	if ferr := h.finish(ctx, "failed:"+reason.Code); ferr != nil {
		return errors.Join(err, ferr)
	}
	return nil
}

// undeliverable hands an answer that Rocket.Chat refused (after the
// client's own retries) to the human through the router.
func (h *handling) undeliverable(ctx context.Context, res agentrun.Result, err error) error {
	job := h.job
	h.log.ErrorContext(ctx, "wake reply could not be posted; handing it to the human through the router",
		"agent", job.AgentID, "room", job.ReplyTo.RoomID, "run", res.Run.RunID, "err", err)
	if h.w.Fallback != nil {
		if ferr := h.w.Fallback.Fallback(context.WithoutCancel(ctx), job, res.Answer); ferr == nil {
			h.log.WarnContext(ctx, "wake answer delivered through the router instead of the room",
				"agent", job.AgentID, "room", job.ReplyTo.RoomID, "run", res.Run.RunID)
			return h.finish(ctx, OutcomeViaRouter)
		} else {
			err = errors.Join(err, fmt.Errorf("router: %w", ferr))
		}
	}
	err = fmt.Errorf("wake %s: reply to %s: %w", job.AgentID, job.ReplyTo.RoomID, err)
	if h.attempt == 0 || !h.last() {
		return err
	}
	h.log.ErrorContext(ctx, "wake answer lost: neither the room nor the router took it", "agent", job.AgentID, "run", res.Run.RunID, "err", err)
	if ferr := h.finish(ctx, OutcomeUndelivered); ferr != nil {
		return errors.Join(err, ferr)
	}
	return nil
}

// AlreadyAnswered reports whether the run itself posted successfully into
// the reply room (send_message, reply or send_file: sb.ChatPostedFrom):
// then the automatic reply would say the same thing twice.
func AlreadyAnswered(res agentrun.Result, to *ReplyTo) bool {
	if to == nil {
		return false
	}
	for _, c := range res.Calls {
		if p, ok := sb.ChatPostedFrom(c.Tool, c.Action, c.Envelope); ok && p.RoomID == to.RoomID {
			return true
		}
	}
	return false
}
