package approvals

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Defaults and caps.
const (
	DefaultTTL = 24 * time.Hour
	// DefaultStuckAfter is how long an approval may stay executing before
	// ExpireDue calls its outcome unknown. It must outlast any run of the
	// action: Lambda stops every invocation after at most 15 minutes.
	DefaultStuckAfter = 20 * time.Minute
	// DefaultStartWithin is how long an approved call may wait for the
	// worker to start it before ExpireDue closes it as not run. Lambda
	// retries a failed asynchronous invocation after about one and two
	// minutes; a call that has not started after this will not start (the
	// conditional write that closes it also keeps any late job from
	// running it).
	DefaultStartWithin = 15 * time.Minute

	maxArgs   = 64 << 10 // staged args; an approval item stays far below DynamoDB's 400 KB
	maxReason = 2000
	maxResult = 32 << 10 // stored envelope JSON; larger results keep status and a preview
	// JobSource is sb.WakeJob.Source of follow-up runs.
	JobSource = "approval"
	// DecidedByLink is Approval.DecidedBy for a decision through a link.
	DecidedByLink = "link"
	// DecidedByExpiry is Approval.DecidedBy when nobody decided in time.
	DecidedByExpiry = "expiry"
)

// Executor runs an approved call through the same path as every tool call
// (tools.Executor: schema, policy — Approved turns approve into auto but
// never a deny —, the tool, and its audit entry).
type Executor interface {
	Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope
}

// Scrubber masks secrets (shared/platform/scrub satisfies it).
type Scrubber interface {
	JSON(raw []byte) []byte
	String(s string) string
}

// Options configure a Service. Store, Signer, Notifier, Waker and
// PublicBaseURL are required.
type Options struct {
	Store  Store
	Signer *Signer
	// Executor runs approved calls (Execute). Only the agent-worker has
	// one: the functions that decide record the decision and hand the
	// call to the worker as a job, so they do not link the tools.
	Executor Executor
	Notifier Notifier
	// Waker queues the worker's jobs: the approved call, and the
	// follow-up run that tells the agent.
	Waker sb.WakeDispatcher
	// Tokens resolve the task tokens of approvals a state machine waits
	// for (shared/adapters/sfn.TaskTokens); nil where none is wired, and
	// then such an approval is only recorded.
	Tokens TaskTokens
	// PublicBaseURL is instance.publicBaseUrl: links are
	// {PublicBaseURL}/approvals/{id}?decision=…&token=….
	PublicBaseURL string
	TTL           time.Duration // default DefaultTTL
	StuckAfter    time.Duration // default DefaultStuckAfter
	StartWithin   time.Duration // default DefaultStartWithin
	// Allowances keep "approve, and allow for N hours" grants; nil offers
	// no such choice. AllowForHours are the choices (default
	// DefaultAllowForHours; each above 0 and at most MaxAllowForHours).
	Allowances    sb.AllowanceStore
	AllowForHours []float64
	// Audit receives the flow's own entries in the asking run's chain: a
	// denial with its reason, an allowance granted. Nil: only the log.
	Audit sb.AuditStore
	// Scrub masks what the confirmation page shows; nil masks the
	// well-known secret patterns only.
	Scrub Scrubber
	// Telemetry records the wait for each decision as a span
	// (docs/telemetry.md); nil records none.
	Telemetry sb.Telemetry
	Now       func() time.Time
	Log       *slog.Logger
}

// TaskTokens resume or fail a Step Functions execution waiting on a token.
// Both return an error when the execution no longer waits (it timed out or
// ended): then nothing can be resumed.
type TaskTokens interface {
	Succeed(ctx context.Context, token, output string) error
	Fail(ctx context.Context, token, errName, cause string) error
}

// The errors a waiting execution gets when its approval is not given.
const (
	ErrNameDenied  = "ApprovalDenied"
	ErrNameExpired = "ApprovalExpired"
)

// Service stages approvals and carries out decisions.
type Service struct {
	tokens     TaskTokens
	store      Store
	signer     *Signer
	exec       Executor
	notifier   Notifier
	waker      sb.WakeDispatcher
	base       string
	ttl        time.Duration
	stuckAfter time.Duration
	startIn    time.Duration
	scrub      Scrubber
	now        func() time.Time
	log        *slog.Logger

	allowances sb.AllowanceStore
	allowHours []float64
	auditStore sb.AuditStore
	telemetry  sb.Telemetry
}

// New checks o and builds the Service (once per cold start).
func New(o Options) (*Service, error) {
	const op = "approvals.new"
	switch {
	case o.Store == nil || o.Signer == nil || o.Notifier == nil || o.Waker == nil:
		return nil, sb.E(op, sb.EINVALID, "approvals need a store, a signer, a notifier and a waker")
	case o.TTL < 0 || o.StuckAfter < 0 || o.StartWithin < 0:
		return nil, sb.E(op, sb.EINVALID, "approval TTL, stuck-after and start-within must not be negative")
	}
	if err := CheckAllowForHours(o.AllowForHours); err != nil {
		return nil, err
	}
	u, err := url.Parse(o.PublicBaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, sb.E(op, sb.EINVALID,
			"instance.publicBaseUrl must be an absolute http(s) URL without query, e.g. https://abc.lambda-url.eu-central-1.on.aws")
	}
	s := &Service{store: o.Store, signer: o.Signer, exec: o.Executor, notifier: o.Notifier, waker: o.Waker,
		base: strings.TrimRight(o.PublicBaseURL, "/"), ttl: o.TTL, stuckAfter: o.StuckAfter, startIn: o.StartWithin,
		scrub: o.Scrub, now: o.Now, log: o.Log, tokens: o.Tokens,
		allowances: o.Allowances, allowHours: o.AllowForHours, auditStore: o.Audit, telemetry: o.Telemetry}
	if len(s.allowHours) == 0 {
		s.allowHours = DefaultAllowForHours
	}
	if s.ttl == 0 {
		s.ttl = DefaultTTL
	}
	if s.stuckAfter == 0 {
		s.stuckAfter = DefaultStuckAfter
	}
	if s.startIn == 0 {
		s.startIn = DefaultStartWithin
	}
	if s.scrub == nil {
		s.scrub = (*scrub.Scrubber)(nil) // patterns only
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// SetExecutor gives the service the executor that runs approved calls
// (Execute). The executor stages through the service in turn, so one of
// the two is set after both are built, once at cold start.
func (s *Service) SetExecutor(x Executor) { s.exec = x }

// SetTelemetry makes the service record the wait for each decision
// (Options.Telemetry), for a process that starts telemetry after building
// it (the dev runtime); once at start, before any request.
func (s *Service) SetTelemetry(t sb.Telemetry) { s.telemetry = t }

// Link is the URL that shows the confirmation page for decision d. The
// token in it is a credential: hand it to the Notifier only.
func (s *Service) Link(a Approval, d Decision) string { return DecisionLink(s.base, s.signer, a, d) }

// DecisionLink is Service.Link for a reader that holds the signer but no
// Service (the console links to the same confirmation page): base is
// instance.publicBaseUrl without a trailing slash.
func DecisionLink(base string, signer *Signer, a Approval, d Decision) string {
	return base + "/approvals/" + a.ID + "?decision=" + string(d) + "&token=" +
		signer.Token(a.ID, string(d), a.ArgsHash, a.ExpiresAt)
}

// Stage stores call for a human's decision and asks the Notifier to show
// it. It answers the envelope the model gets instead of the action's result
// (status "pending_approval", approval_id, expires, human_notified,
// message); it never contains a link or token, so an agent cannot approve
// its own action. When the Notifier fails the approval stays stored (it
// expires unless decided) and the envelope says the human was not reached.
// Errors: EINVALID for a call without agent, tool, action or run, or with
// args that are not JSON or over 64 KB; the store's errors (with an error
// envelope) when it could not be stored.
func (s *Service) Stage(ctx context.Context, call sb.ToolCall, reason string) (sb.Envelope, error) {
	const op = "approvals.stage"
	if call.AgentID == "" || call.Tool == "" || call.Action == "" || call.Run.RunID == "" {
		err := sb.E(op, sb.EINVALID, "a staged call needs an agent, a tool, an action and a run")
		return sb.FailErr(err), err
	}
	args := call.Args
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	if len(args) > maxArgs {
		err := sb.E(op, sb.EINVALID, fmt.Sprintf("the args of %s.%s are larger than %d KB and cannot be staged for approval; make the call smaller",
			call.Tool, call.Action, maxArgs>>10))
		return sb.FailErr(err), err
	}
	hash, err := ArgsHash(call.Tool, call.Action, args)
	if err != nil {
		err = sb.Wrap(op, sb.EINVALID, fmt.Sprintf("the args of %s.%s are not valid JSON; send a JSON object", call.Tool, call.Action), err)
		return sb.FailErr(err), err
	}
	now := s.now().UTC()
	a := Approval{
		ID: NewID(), AgentID: call.AgentID, Tool: call.Tool, Action: call.Action,
		Args: append(json.RawMessage(nil), args...), ArgsHash: hash,
		Run: call.Run, Origin: call.Origin, Client: call.Client, Reason: scrub.Cap(reason, maxReason),
		ReplyTo:   call.ReplyTo.Clone(),
		CreatedAt: now, ExpiresAt: now.Add(s.ttl).Truncate(time.Second),
		Status: StatusPending, TaskToken: sb.TaskTokenFrom(ctx), Target: call.Target,
		StagedSpan: stagedSpan(ctx, call.Run),
	}
	if err := s.store.Create(ctx, a); err != nil {
		s.log.ErrorContext(ctx, "approval could not be stored", s.attrs(a, "err", err)...)
		env := sb.Fail(fmt.Sprintf("%s.%s needs a human's approval, but the request could not be stored; it has not run. Try again in a few minutes.",
			call.Tool, call.Action))
		return env, fmt.Errorf("approvals stage %s.%s: %w", call.Tool, call.Action, err)
	}
	notice, nerr := s.notifier.RequestApproval(ctx, Request{Approval: a, ApproveURL: s.Link(a, Approve), DenyURL: s.Link(a, Deny)})
	if nerr != nil {
		s.log.WarnContext(ctx, "approval request not delivered", s.attrs(a, "err", nerr)...)
	} else if len(notice) > 0 {
		s.recordNotice(ctx, a, notice)
	}
	expires := a.ExpiresAt.Format(time.RFC3339)
	msg := fmt.Sprintf("%s.%s has not run: it waits for a human's approval (id %s, expires %s). "+
		"Do not retry the call; tell the human briefly what you want to do and why. You will be woken with the result once someone decides.",
		a.Tool, a.Action, a.ID, expires)
	if nerr != nil {
		msg = fmt.Sprintf("%s.%s has not run: it needs a human's approval (id %s, expires %s), but the approval request could not be delivered to the human. "+
			"Do not retry the call; tell the human that approval %s waits for them and why you need it. You will be woken with the result, or when it expires.",
			a.Tool, a.Action, a.ID, expires, a.ID)
	}
	return sb.Envelope{Status: sb.OutcomePending, Data: map[string]any{
		"approval_id": a.ID, "expires": expires, "human_notified": nerr == nil, "message": msg,
	}}, nil
}

// recordNotice stores the Notifier's reference. A human may have decided
// before it was stored; then the decider could not edit the message, so do
// it here.
func (s *Service) recordNotice(ctx context.Context, a Approval, notice json.RawMessage) {
	b, err := s.store.SetNotice(ctx, a.ID, notice)
	if err != nil {
		s.log.WarnContext(ctx, "approval notice reference not stored; its message will not be updated", s.attrs(a, "err", err)...)
		return
	}
	if b.Status != StatusPending {
		if err := s.notifier.Decided(ctx, b); err != nil {
			s.log.WarnContext(ctx, "approval message not updated", s.attrs(b, "err", err)...)
		}
	}
}

// OutcomeKind says what a decision attempt did. Only KindApproved,
// KindFailed and KindDenied changed anything.
type OutcomeKind string

const (
	KindReady          OutcomeKind = "ready"           // Preview: the link may decide now
	KindApproved       OutcomeKind = "approved"        // approved; the worker runs the action and the agent reports back
	KindFailed         OutcomeKind = "failed"          // approved, but the action could not be handed to the worker: it did not run
	KindDenied         OutcomeKind = "denied"          // denied; the action did not run
	KindAlreadyDecided OutcomeKind = "already_decided" // not pending any more (replay, second click, race loser)
	KindInvalidToken   OutcomeKind = "invalid_token"   // tampered, truncated, other approval's or other decision's token
	KindNotApprover    OutcomeKind = "not_approver"    // callback from a Telegram user who is not an approver
	KindExpired        OutcomeKind = "expired"         // past ExpiresAt (or the token's expiry)
	KindUnknown        OutcomeKind = "unknown"         // no approval with this id
	KindMalformed      OutcomeKind = "malformed"       // decision not approve|deny, callback data not a:/d:<id>
)

// Refused reports whether the attempt changed nothing.
func (k OutcomeKind) Refused() bool {
	return k != KindApproved && k != KindFailed && k != KindDenied && k != KindReady
}

// Outcome is the answer to a decision attempt, for the confirmation page
// or the Telegram callback answer.
type Outcome struct {
	Kind OutcomeKind
	// Approval is the approval as it stands after the attempt; it is the
	// zero value when the caller did not prove it may see it (unknown id,
	// bad token, not an approver, malformed request).
	Approval Approval
	// Message tells the human what happened, or why nothing did.
	Message string
	// AgentInformed reports that the follow-up run was queued (on
	// approve: that the worker was handed the call; it tells the agent).
	AgentInformed bool
}

// Choice is one decision the confirmation page offers, with its token.
type Choice struct {
	Decision Decision
	Token    string
}

// Preview is what GET /approvals/{id} shows: KindReady with the approval
// and its Choices, or a refusal.
type Preview struct {
	Outcome
	Choices []Choice
}

func refusal(k OutcomeKind, a Approval, msg string) Outcome {
	return Outcome{Kind: k, Approval: a, Message: msg}
}

const nothingChanged = " Nothing was changed."

func unknown() Outcome {
	return refusal(KindUnknown, Approval{}, "There is no approval request with this id."+nothingChanged)
}

func invalidToken() Outcome {
	return refusal(KindInvalidToken, Approval{},
		"This approval link is not valid: it was altered or cut short, or it belongs to another request or to the other decision."+nothingChanged)
}

func alreadyDecided(a Approval) Outcome {
	msg := fmt.Sprintf("This request was already %s", a.Status)
	if a.DecidedBy != "" && !a.DecidedAt.IsZero() {
		msg += fmt.Sprintf(" (%s, %s)", describeDecider(a.DecidedBy), a.DecidedAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	return refusal(KindAlreadyDecided, a, msg+"."+nothingChanged)
}

func expired(a Approval) Outcome {
	return refusal(KindExpired, a, fmt.Sprintf("This approval request expired at %s; the agent is told so.",
		a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))+nothingChanged)
}

// checkLink checks a link (id, decision, token) without changing anything:
// the approval and decision when it may decide now, or a refusal. The token
// is checked against the hash of the stored args, recomputed, so an
// approval whose stored action was altered cannot be decided by any link.
func (s *Service) checkLink(ctx context.Context, id, decision, token string) (Approval, Decision, *Outcome, error) {
	if !sb.ValidApprovalID(id) {
		o := unknown()
		return Approval{}, "", &o, nil
	}
	d, ok := ParseDecision(decision)
	if !ok {
		o := refusal(KindMalformed, Approval{}, "The decision must be approve or deny."+nothingChanged)
		return Approval{}, "", &o, nil
	}
	a, err := s.store.Get(ctx, id)
	if sb.ErrorCode(err) == sb.ENOTFOUND {
		o := unknown()
		return Approval{}, "", &o, nil
	}
	if err != nil {
		return Approval{}, "", nil, fmt.Errorf("approvals check %s: %w", id, err)
	}
	now := s.now()
	hash, herr := ArgsHash(a.Tool, a.Action, a.Args)
	if herr != nil || hash != a.ArgsHash {
		s.log.ErrorContext(ctx, "stored approval does not match its args hash; refusing every link", s.attrs(a)...)
		o := invalidToken()
		return Approval{}, "", &o, nil
	}
	tokenExpired := false
	switch err := s.signer.Verify(token, id, string(d), hash, now); {
	case errors.Is(err, ErrTokenExpired):
		tokenExpired = true
	case err != nil:
		o := invalidToken()
		return Approval{}, "", &o, nil
	}
	if a.Status != StatusPending {
		o := alreadyDecided(a)
		return Approval{}, "", &o, nil
	}
	if tokenExpired || !now.Before(a.ExpiresAt) {
		o := expired(a)
		return Approval{}, "", &o, nil
	}
	return a, d, nil, nil
}

// Preview checks a link for the confirmation page and changes nothing. A
// valid approve link offers Approve and Deny (whoever may approve may also
// refuse; the deny token is signed here); a deny link offers Deny only, so
// a deny link can never be turned into an approval.
func (s *Service) Preview(ctx context.Context, id, decision, token string) (Preview, error) {
	a, d, refused, err := s.checkLink(ctx, id, decision, token)
	if err != nil {
		return Preview{}, err
	}
	if refused != nil {
		return Preview{Outcome: *refused}, nil
	}
	p := Preview{Outcome: Outcome{Kind: KindReady, Approval: a,
		Message: fmt.Sprintf("%s asks to run %s.%s. Nothing happens until you press a button.", a.AgentID, a.Tool, a.Action)}}
	p.Choices = append(p.Choices, Choice{Decision: d, Token: token})
	if d == Approve {
		p.Choices = append(p.Choices, Choice{Decision: Deny, Token: s.signer.Token(a.ID, string(Deny), a.ArgsHash, a.ExpiresAt)})
	}
	return p, nil
}

// DecideByLink decides with a link's token (POST /approvals/{id}). The
// token must be signed for this id, this decision and the hash of the
// stored args, and unexpired; the approval must be pending and unexpired.
// Any refusal changes nothing (see OutcomeKind). On approve the call is
// handed to the worker as a job (Execute runs it there, once) and the
// Notifier shows "approved; running"; on deny the Notifier and the agent
// are told. The error is non-nil only when the store failed before
// anything was decided.
func (s *Service) DecideByLink(ctx context.Context, id, decision, token string) (Outcome, error) {
	return s.DecideByLinkWith(ctx, id, decision, token, Extra{})
}

// Extra is what a human may add to a decision on the confirmation page:
// a reason with a deny, or hours to allow the same action in the same
// room or folder for with an approve (one of AllowChoices).
type Extra struct {
	DenyReason string
	AllowHours float64
}

// DecideByLinkWith is DecideByLink with the page's extras. A reason is
// kept with a deny only (scrubbed, capped); hours are taken with an
// approve only and must be one of the approval's AllowChoices, else
// nothing is decided (KindMalformed).
func (s *Service) DecideByLinkWith(ctx context.Context, id, decision, token string, x Extra) (Outcome, error) {
	a, d, refused, err := s.checkLink(ctx, id, decision, token)
	if err != nil || refused != nil {
		if refused != nil {
			s.log.InfoContext(ctx, "approval link refused", "approvalId", logID(id), "outcome", string(refused.Kind))
			return *refused, nil
		}
		return Outcome{}, err
	}
	if d == Approve && x.AllowHours != 0 && !offered(s.AllowChoices(a), x.AllowHours) {
		return refusal(KindMalformed, Approval{}, "That allowance is not one this approval offers; use the buttons on the approval page."+nothingChanged), nil
	}
	if d != Approve {
		x.AllowHours = 0
	}
	if d != Deny {
		x.DenyReason = ""
	}
	return s.decide(ctx, a, d, DecidedByLink, x)
}

func offered(choices []float64, h float64) bool {
	for _, c := range choices {
		if c == h {
			return true
		}
	}
	return false
}

// DecideByCallback decides from a Telegram inline button: data is the
// callback_data (CallbackData: "a:<id>" or "d:<id>"), userID the pressing
// user's Telegram id. Only a user in approvers may decide (compared in
// constant time); then the same exactly-once path as DecideByLink runs and
// DecidedBy is "telegram:<userID>".
func (s *Service) DecideByCallback(ctx context.Context, data, userID string, approvers []string) (Outcome, error) {
	d, id, ok := parseCallbackData(data)
	if !ok {
		return refusal(KindMalformed, Approval{}, "This button does not belong to an approval request."+nothingChanged), nil
	}
	if !isApprover(userID, approvers) {
		s.log.WarnContext(ctx, "approval button pressed by a non-approver", "approvalId", id, "telegramUser", logID(userID))
		return refusal(KindNotApprover, Approval{}, "Only the configured approvers can decide."+nothingChanged), nil
	}
	a, err := s.store.Get(ctx, id)
	if sb.ErrorCode(err) == sb.ENOTFOUND {
		return unknown(), nil
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("approvals callback %s: %w", id, err)
	}
	if a.Status != StatusPending {
		return alreadyDecided(a), nil
	}
	if !s.now().Before(a.ExpiresAt) {
		return expired(a), nil
	}
	return s.decide(ctx, a, d, "telegram:"+userID, Extra{})
}

// isApprover compares userID with every approver over SHA-256 digests in
// constant time (so neither content nor length leaks).
func isApprover(userID string, approvers []string) bool {
	if userID == "" {
		return false
	}
	got := sha256.Sum256([]byte(userID))
	match := 0
	for _, a := range approvers {
		if a == "" {
			continue
		}
		want := sha256.Sum256([]byte(a))
		match |= subtle.ConstantTimeCompare(want[:], got[:])
	}
	return match == 1
}

// decide moves a from pending to approved or denied. Exactly one of any
// number of concurrent deciders wins that write; everyone else is told it
// was already decided. An approved call does not run here: the winner
// hands it to the worker as a job carrying the approval id (Execute), so
// that the deciding functions stay small and answer at once; the worker
// runs it, records the result, updates the message and wakes the agent.
// If the job cannot be queued the approval is closed at once as failed
// (it did not run) and the agent is told; if it is queued but never
// starts, ExpireDue closes it the same way after StartWithin.
func (s *Service) decide(ctx context.Context, a Approval, d Decision, by string, extra Extra) (Outcome, error) {
	now := s.now().UTC()
	to := StatusDenied
	if d == Approve {
		to = StatusApproved
	}
	exec := sb.NewRun(a.AgentID, &a.Run, now)
	allowID := ""
	if to == StatusApproved && extra.AllowHours > 0 {
		allowID = NewID()
	}
	won, err := s.store.Transition(ctx, a.ID, StatusPending, to, func(x *Approval) {
		x.DecidedBy, x.DecidedAt = by, now
		if to == StatusApproved {
			x.ExecRun, x.AllowanceID = exec, allowID
		}
		if to == StatusDenied {
			x.DenyReason = s.cleanDenyReason(extra.DenyReason)
		}
	})
	switch sb.ErrorCode(err) {
	case "":
	case sb.ECONFLICT:
		cur, gerr := s.store.Get(ctx, a.ID)
		if gerr != nil {
			return refusal(KindAlreadyDecided, Approval{}, "This request was already decided."+nothingChanged), nil
		}
		return alreadyDecided(cur), nil
	case sb.ENOTFOUND:
		return unknown(), nil
	default:
		return Outcome{}, fmt.Errorf("approvals decide %s: %w", a.ID, err)
	}
	// From here on the decision is recorded: finish even if the caller
	// goes away.
	ctx = context.WithoutCancel(ctx)
	s.recordWait(ctx, won)
	s.log.InfoContext(ctx, "approval decided", s.attrs(won, "decision", string(d), "decidedBy", by, "denyReason", won.DenyReason)...)
	allowed := ""
	if allowID != "" {
		if s.grant(ctx, won, allowID, extra.AllowHours) {
			allowed = fmt.Sprintf(" %s may run %s.%s in %s without asking for %s (allowance %s; revoke it on the console's approvals page).",
				won.AgentID, won.Tool, won.Action, DescribeScope(ScopeOf(won.Tool, won.Args)), DescribeHours(extra.AllowHours), allowID)
		} else {
			allowed = " The allowance for later calls could not be stored; only this call was approved."
		}
	}
	if won.TaskToken != "" && to == StatusApproved {
		return s.resume(ctx, won), nil
	}
	if to == StatusDenied {
		s.audit(ctx, sb.AuditEntry{Run: won.Run, AgentID: won.AgentID, Tool: won.Tool, Action: won.Action, Args: "{}",
			Decision: sb.DecisionDeny, Outcome: sb.OutcomeDenied, ApprovalID: won.ID, DecidedBy: won.DecidedBy,
			Error: denialText(won)})
		informed := s.finish(ctx, won)
		return Outcome{Kind: KindDenied, Approval: won, AgentInformed: informed,
			Message: fmt.Sprintf("Denied. %s.%s did not run.%s", won.Tool, won.Action, informedText(won, informed))}, nil
	}
	// "Running" is shown before the worker gets the call, so that the
	// worker's result is always the last thing the message shows.
	if err := s.notifier.Decided(ctx, won); err != nil {
		s.log.WarnContext(ctx, "approval message not updated", s.attrs(won, "err", err)...)
	}
	job := sb.WakeJob{AgentID: won.AgentID, Source: JobSource, ApprovalID: won.ID}
	if err := s.waker.Dispatch(ctx, job); err != nil {
		s.log.ErrorContext(ctx, "approved call not handed to the worker; closing it as not run", s.attrs(won, "err", err)...)
		done, terr := s.notStarted(ctx, won, "it could not be handed to the worker")
		if terr != nil {
			// ExpireDue closes it after StartWithin.
			s.log.ErrorContext(ctx, "approved call not closed either; approvals-expire will", s.attrs(won, "err", terr)...)
			return Outcome{Kind: KindFailed, Approval: won, Message: fmt.Sprintf(
				"Approved, but %s.%s could not be started right now. It has not run; it will be closed as not run and %s told within %d minutes.",
				won.Tool, won.Action, won.AgentID, int((s.startIn + 15*time.Minute).Minutes()))}, nil
		}
		informed := s.finish(ctx, done)
		return Outcome{Kind: KindFailed, Approval: done, AgentInformed: informed, Message: fmt.Sprintf(
			"Approved, but %s.%s could not be started right now, so it did not run.%s", done.Tool, done.Action, informedText(done, informed))}, nil
	}
	if sb.NobodyWakes(won.Origin) { // no agent waits for it
		return Outcome{Kind: KindApproved, Approval: won, Message: fmt.Sprintf(
			"Approved. %s.%s is running now; its result will be recorded with the approval.%s", won.Tool, won.Action, allowed)}, nil
	}
	return Outcome{Kind: KindApproved, Approval: won, AgentInformed: true, Message: fmt.Sprintf(
		"Approved. %s.%s is running now; %s will report back with the result.%s", won.Tool, won.Action, won.AgentID, allowed)}, nil
}

// Execute runs the approved call of approval id, once (the agent-worker's
// job from decide). Only the caller whose conditional write moves the
// approval from approved to executing runs it, so Lambda's retries of the
// job, a duplicate delivery and concurrent workers never run it twice: any
// other caller finds it executing or done and returns nil. The call runs
// under the run context stamped at the decision (a child of the requesting
// run; the tool's audit entry carries it and the approval), its envelope
// is stored, the Notifier updates its message and the agent is woken with
// the result. The error is non-nil only when nothing has run and a retry
// may help (the store failed before the start was recorded).
func (s *Service) Execute(ctx context.Context, id string) error {
	const op = "approvals.execute"
	if s.exec == nil {
		return sb.E(op, sb.EUNAVAILABLE, "this function cannot run approved calls; the agent-worker runs them")
	}
	a, err := s.store.Get(ctx, id)
	if err != nil {
		if sb.ErrorCode(err) == sb.ENOTFOUND {
			s.log.ErrorContext(ctx, "approved call to run is unknown", "approvalId", logID(id))
			return nil // retrying cannot help
		}
		return fmt.Errorf("approvals execute %s: %w", id, err)
	}
	if a.Status != StatusApproved {
		s.log.InfoContext(ctx, "approved call already started or closed; not run again", s.attrs(a)...)
		return nil
	}
	started, err := s.store.Transition(ctx, id, StatusApproved, StatusExecuting, func(x *Approval) { x.StartedAt = s.now().UTC() })
	switch sb.ErrorCode(err) {
	case "":
	case sb.ECONFLICT:
		s.log.InfoContext(ctx, "approved call taken by another worker or closed; not run again", s.attrs(a)...)
		return nil
	default:
		return fmt.Errorf("approvals execute %s: %w", id, err)
	}
	// Started: finish even if the caller goes away, or the action would
	// run without its result being kept.
	ctx = context.WithoutCancel(ctx)
	env := s.invoke(ctx, started)
	final := StatusExecuted
	if env.Status != "ok" {
		final = StatusFailed
	}
	stored := capResult(env)
	done, err := s.recordResult(ctx, started, final, stored)
	if err != nil {
		s.log.ErrorContext(ctx, "approved action ran but its result could not be recorded; informing with the real result",
			s.attrs(started, "err", err, "resultStatus", env.Status)...)
		done = started
		done.Status, done.Result = final, stored
	}
	s.log.InfoContext(ctx, "approved call ran", s.attrs(done, "resultStatus", env.Status)...)
	s.finish(ctx, done)
	return nil
}

// notStarted closes an approved call that will not run (approved → failed,
// one conditional write: a late job then finds it closed).
func (s *Service) notStarted(ctx context.Context, a Approval, why string) (Approval, error) {
	return s.store.Transition(ctx, a.ID, StatusApproved, StatusFailed, func(x *Approval) {
		x.Result = sb.Fail(fmt.Sprintf("%s.%s was approved at %s but did not run: %s. It will not run now; "+
			"if it is still needed, ask again.", a.Tool, a.Action, a.DecidedAt.UTC().Format(time.RFC3339), why))
		x.Result.Data = map[string]any{"code": "not_started"}
	})
}

// invoke runs the approved call; a panicking executor becomes an error
// envelope (the approval must still reach a final status).
func (s *Service) invoke(ctx context.Context, a Approval) (env sb.Envelope) {
	defer func() {
		if r := recover(); r != nil {
			s.log.ErrorContext(ctx, "approved action panicked", s.attrs(a, "panic", fmt.Sprint(r))...)
			env = sb.Fail(fmt.Sprintf("%s.%s failed unexpectedly; the operator can find details in the logs", a.Tool, a.Action))
		}
	}()
	origin := a.Origin
	if origin == "" {
		origin = sb.OriginAgent
	}
	return s.exec.Invoke(ctx, sb.ToolCall{AgentID: a.AgentID, Tool: a.Tool, Action: a.Action,
		Args: a.Args, Run: a.ExecRun, Origin: origin, Client: a.Client, Approved: true, ApprovalID: a.ID, ApprovedBy: a.DecidedBy,
		Target: a.Target})
}

// recordResult writes executing → final, retrying a store that is briefly
// unavailable (the action already ran; its result should not be lost).
func (s *Service) recordResult(ctx context.Context, a Approval, final Status, res sb.Envelope) (Approval, error) {
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		}
		var done Approval
		done, err = s.store.Transition(ctx, a.ID, StatusExecuting, final, func(x *Approval) { x.Result = res })
		if err == nil {
			return done, nil
		}
		if c := sb.ErrorCode(err); c != sb.EUNAVAILABLE {
			break
		}
	}
	return Approval{}, err
}

// capResult keeps a stored envelope under maxResult bytes of JSON: a larger
// one keeps its status, error and a preview.
func capResult(env sb.Envelope) sb.Envelope {
	raw, err := json.Marshal(env)
	if err == nil && len(raw) <= maxResult {
		return env
	}
	out := sb.Envelope{Status: env.Status, Error: scrub.Cap(env.Error, 2000), HTTPStatus: env.HTTPStatus,
		Endpoint: env.Endpoint, NeedsConfirmation: env.NeedsConfirmation}
	out.Data = map[string]any{"truncated": fmt.Sprintf("the result was %d bytes; only this preview is kept", len(raw)),
		"preview": scrub.Cap(string(raw), 8000)}
	return out
}

// finish tells the Notifier and wakes the agent (unless an operator asked:
// no agent waits then). Failures are logged: the approval's state is
// already final and stays visible in the store.
func (s *Service) finish(ctx context.Context, a Approval) bool {
	if err := s.notifier.Decided(ctx, a); err != nil {
		s.log.WarnContext(ctx, "approval message not updated", s.attrs(a, "err", err)...)
	}
	if a.TaskToken != "" {
		// The waiting execution ends and tells the agent itself.
		return s.failToken(ctx, a)
	}
	if sb.NobodyWakes(a.Origin) {
		return false
	}
	parent := a.Run
	job := sb.WakeJob{AgentID: a.AgentID, Source: JobSource, Text: FollowUpText(a), Parent: &parent, ReplyTo: replyTo(a)}
	if err := s.waker.Dispatch(ctx, job); err != nil {
		s.log.ErrorContext(ctx, "follow-up run for approval not queued; the agent does not know the outcome", s.attrs(a, "err", err)...)
		return false
	}
	return true
}

// resume hands an approved call back to the execution that waits for it
// (SendTaskSuccess with the approval's id and who decided); the execution
// runs the call itself. The approval is closed as executed: its part is
// done, and the call's own audit entry carries the approval id. When the
// execution no longer waits, the approval is closed as failed: nothing ran.
func (s *Service) resume(ctx context.Context, a Approval) Outcome {
	out, _ := json.Marshal(map[string]string{"approvalId": a.ID, "decidedBy": a.DecidedBy})
	var err error
	if s.tokens == nil {
		err = errors.New("no task token client is wired into this function")
	} else {
		err = s.tokens.Succeed(ctx, a.TaskToken, string(out))
	}
	now := s.now().UTC()
	started, terr := s.store.Transition(ctx, a.ID, StatusApproved, StatusExecuting, func(x *Approval) { x.StartedAt = now })
	if terr == nil {
		res := sb.OK(map[string]any{"message": "handed to the waiting delivery, which runs it"})
		final := StatusExecuted
		if err != nil {
			res, final = sb.Fail("the delivery that asked no longer waits (it timed out or ended); nothing ran"), StatusFailed
		}
		if done, derr := s.store.Transition(ctx, a.ID, StatusExecuting, final, func(x *Approval) { x.Result = res }); derr == nil {
			a = done
		} else {
			a = started
		}
	}
	if nerr := s.notifier.Decided(ctx, a); nerr != nil {
		s.log.WarnContext(ctx, "approval message not updated", s.attrs(a, "err", nerr)...)
	}
	if err != nil {
		s.log.ErrorContext(ctx, "approved, but the waiting execution could not be resumed", s.attrs(a, "err", err)...)
		return Outcome{Kind: KindFailed, Approval: a, Message: fmt.Sprintf(
			"Approved, but the delivery that asked for %s.%s no longer waits, so it did not run.", a.Tool, a.Action)}
	}
	return Outcome{Kind: KindApproved, Approval: a, AgentInformed: true, Message: fmt.Sprintf(
		"Approved. The delivery goes on with %s.%s now; %s will report back with the result.", a.Tool, a.Action, a.AgentID)}
}

// failToken ends the execution waiting for a that was not approved
// (SendTaskFailure: ApprovalDenied or ApprovalExpired); its Catch tells the
// human and the agent. It reports whether the execution got the news.
func (s *Service) failToken(ctx context.Context, a Approval) bool {
	name, cause := ErrNameDenied, fmt.Sprintf("%s.%s was denied (%s)", a.Tool, a.Action, a.DecidedBy)
	switch a.Status {
	case StatusExpired:
		name, cause = ErrNameExpired, fmt.Sprintf("nobody approved %s.%s in time", a.Tool, a.Action)
	case StatusDenied:
	default:
		name, cause = ErrNameDenied, fmt.Sprintf("%s.%s did not run", a.Tool, a.Action)
	}
	if s.tokens == nil {
		s.log.ErrorContext(ctx, "an execution waits for this approval, but no task token client is wired", s.attrs(a)...)
		return false
	}
	if err := s.tokens.Fail(ctx, a.TaskToken, name, cause); err != nil {
		s.log.WarnContext(ctx, "the waiting execution could not be told (it no longer waits)", s.attrs(a, "err", err)...)
		return false
	}
	return true
}

func informedText(a Approval, informed bool) string {
	switch {
	case informed:
		return " " + a.AgentID + " has been told."
	case sb.NobodyWakes(a.Origin):
		return ""
	}
	return " " + a.AgentID + " could not be told right now; the outcome is recorded."
}

// replyTo is where the follow-up run answers: where the asking run was
// woken from, if anywhere.
func replyTo(a Approval) *wake.ReplyTo {
	if !a.ReplyTo.Routable() {
		return nil
	}
	return a.ReplyTo.Clone()
}

// ExpireDue closes what nobody will finish (the approvals-expire job):
// pending approvals at or past ExpiresAt become expired; approved calls
// the worker has not started within StartWithin of the decision become
// failed "not started" (certain: the same conditional write keeps a late
// job from running them); and calls executing for more than StuckAfter
// whose worker never recorded a result become failed with an "outcome
// unknown" result (logged as an error for the operator: the action ran at
// most once, possibly not at all). Each is shown to the Notifier and its
// agent is woken. It returns how many it closed; one failure does not stop
// the others.
func (s *Service) ExpireDue(ctx context.Context) (int, error) {
	open, err := s.store.ListOpen(ctx)
	if err != nil {
		return 0, fmt.Errorf("approvals expire: %w", err)
	}
	now := s.now().UTC()
	n := 0
	var errs []error
	for _, a := range open {
		var b Approval
		switch {
		case a.Status == StatusPending && !now.Before(a.ExpiresAt):
			b, err = s.store.Transition(ctx, a.ID, StatusPending, StatusExpired, func(x *Approval) {
				x.DecidedBy, x.DecidedAt = DecidedByExpiry, now
			})
		case a.Status == StatusApproved && a.TaskToken == "" && !a.DecidedAt.IsZero() && now.Sub(a.DecidedAt) >= s.startIn:
			s.log.ErrorContext(ctx, "approved call never started by the worker; closing it as not run",
				s.attrs(a, "decidedAt", a.DecidedAt)...)
			b, err = s.notStarted(ctx, a, fmt.Sprintf("the worker did not start it within %d minutes", int(s.startIn.Minutes())))
		case a.Status == StatusExecuting && now.Sub(a.StartedAt) >= s.stuckAfter:
			s.log.ErrorContext(ctx, "approval stuck in executing: its worker never recorded a result; closing it as failed (outcome unknown)",
				s.attrs(a, "startedAt", a.StartedAt, "execRunId", a.ExecRun.RunID)...)
			b, err = s.store.Transition(ctx, a.ID, StatusExecuting, StatusFailed, func(x *Approval) {
				x.Result = sb.Fail(fmt.Sprintf("the outcome of %s.%s is unknown: it started at %s but its result was never recorded. "+
					"It ran at most once, possibly not at all; check (for example by listing or reading) before you try again.",
					a.Tool, a.Action, a.StartedAt.UTC().Format(time.RFC3339)))
				x.Result.Data = map[string]any{"code": "outcome_unknown"}
			})
		default:
			continue
		}
		if sb.ErrorCode(err) == sb.ECONFLICT {
			continue // decided or finished meanwhile
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("approval %s: %w", a.ID, err))
			continue
		}
		if b.Status == StatusExpired {
			s.recordWait(ctx, b)
		}
		s.finish(ctx, b)
		n++
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("approvals expire: %w", errors.Join(errs...))
	}
	return n, nil
}

// attrs are the log attributes of a: ids only, never args, links or tokens.
func (s *Service) attrs(a Approval, more ...any) []any {
	return append([]any{"approvalId", a.ID, "agent", a.AgentID, "tool", a.Tool, "action", a.Action,
		"status", string(a.Status), "runId", a.Run.RunID, "rootRunId", a.Run.RootRunID}, more...)
}

// logID keeps an id from a request printable and short in a log line.
func logID(s string) string {
	if sb.ValidApprovalID(s) || len(s) <= 32 && strings.Trim(s, "0123456789") == "" {
		return s
	}
	return fmt.Sprintf("(%d bytes, not an id)", len(s))
}
