package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// Notifier tells the human (the router).
type Notifier interface {
	Deliver(ctx context.Context, n router.Notice) (router.Delivery, error)
}

// State is what the machine carries from Task to Task: the delivery as
// the tool started it, what is done so far, and (share only) how long to
// wait before trying again. Each step Task answers the whole State.
type State struct {
	Delivery Delivery `json:"delivery"`
	Done     Progress `json:"done"`
	// Wait is the seconds to wait before the share is tried again: what
	// Nextcloud asked for (Retry-After), else the step's share-limit
	// schedule; the machine's Wait state reads it. 0 = go on.
	Wait int `json:"wait"`
	// Approval is the human's yes to a public link (what the approvals flow
	// resumed the execution with); null until then, and for other shares.
	Approval *Granted `json:"approval"`
}

// Granted is the approvals flow's SendTaskSuccess output.
type Granted struct {
	ApprovalID string `json:"approvalId"`
	DecidedBy  string `json:"decidedBy"`
}

// ApprovalInput is the AwaitApproval Task's payload: the step input and
// the task token the approval carries.
type ApprovalInput struct {
	StepInput
	Token string `json:"token"`
}

// TaskTokens resume a waiting execution (shared/adapters/sfn.TaskTokens).
type TaskTokens interface {
	Succeed(ctx context.Context, token, output string) error
}

// ApprovalLookup reads approvals (switchboard.ApprovalStore.Get): ENOTFOUND
// when there is none with id.
type ApprovalLookup interface {
	Get(ctx context.Context, id string) (sb.Approval, error)
}

// StepInput is a step Task's payload.
type StepInput struct {
	Op string `json:"op"`
	// Execution is the execution's name: with the step it keys the marker
	// that keeps a retried step from doing its work twice.
	Execution string `json:"execution"`
	State
}

// FinishInput is the finish Task's payload: Status "delivered", or
// "failed" with the failed step and the machine's error (Error, Cause).
type FinishInput struct {
	StepInput
	Status     string     `json:"status"`
	FailedStep string     `json:"failedStep,omitempty"`
	Error      *TaskError `json:"error,omitempty"`
}

// TaskError is what a Catch puts under ResultPath: the error name and its
// cause (for a function error, its JSON error payload).
type TaskError struct {
	Error string `json:"Error"`
	Cause string `json:"Cause"`
}

// Outcome is the finish Task's answer and the machine's output.
type Outcome struct {
	Status     string   `json:"status"` // delivered | failed
	FailedStep string   `json:"failedStep,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Done       Progress `json:"done"`
	Told       string   `json:"told,omitempty"` // the channel that told the human, failures only
	// NoticeHeld: the human was not told of this failure, because the
	// agent's deliveries used up MaxFailureNotices within the hour.
	NoticeHeld bool `json:"noticeHeld,omitempty"`
}

// Steps serves the machine's Tasks.
type Steps struct {
	// Files and Chat are the Nextcloud and RocketChat tools' typed
	// services: each step's action passes the staging policy and the audit
	// as the agent's own call of it would.
	Files  sb.NextcloudTool
	Chat   sb.ChatTool
	KV     sb.KV
	Notify Notifier
	Waker  sb.WakeDispatcher
	Audit  sb.AuditStore
	// Tokens resume the execution when the policy lets a public link run
	// without a human (an operator's override).
	Tokens TaskTokens
	// Approvals is the approval store (read only): the Share step after
	// AwaitApproval looks up the approval staged for the delivery there.
	Approvals ApprovalLookup
	// ShareLimitWaitSeconds is the first wait of a share that Nextcloud
	// rate-limits without saying for how long
	// (instance.documents.shareLimitWaitSeconds; 0 = DefaultShareLimitWaitSeconds).
	// The waits are this base times 1, 2, 4, 4 (shareLimitFactors); after
	// them the step fails.
	ShareLimitWaitSeconds int
	// Telemetry records the spans of each execution and step
	// (docs/telemetry.md); nil records none.
	Telemetry sb.Telemetry
	Log       *slog.Logger
	Now       func() time.Time
}

// DefaultShareLimitWaitSeconds is the first share-limit wait when
// Steps.ShareLimitWaitSeconds is 0.
const DefaultShareLimitWaitSeconds = 60

// shareLimitFactors are the share-limit waits in units of
// ShareLimitWaitSeconds: 60, 120, 240, 240 s by default, 660 s in all.
// Nextcloud 34 allows 20 share creations per user in a sliding 600 s
// (failed ones count) and answers the 21st with a bare 429, no
// Retry-After. A POST the limit refuses takes no slot (its Limiter records
// attempts only below the limit), so the oldest attempt frees one within
// 600 s, and the last try, at 660 s, comes after that.
var shareLimitFactors = []int{1, 2, 4, 4}

// marker is a step's record, one KV value per execution and step.
type marker struct {
	State    string `json:"state"` // started | done
	Attempts int    `json:"attempts"`
	Waits    int    `json:"waits,omitempty"`
	// Waited is the seconds of those waits; Told says the human heard
	// that the share waits (once per delivery).
	Waited int      `json:"waited,omitempty"`
	Told   bool     `json:"told,omitempty"`
	Done   Progress `json:"done"`
	// StartedAt is when the step's first attempt began (the execution's
	// span starts at its first step's).
	StartedAt time.Time `json:"startedAt,omitzero"`
}

// markerKeep bounds how long a step is remembered: longer than any
// execution waits for an approval.
const markerKeep = 30 * 24 * time.Hour

func markerKey(execution, step string) string { return "docs#" + execution + "#" + step }

// begin reads the step's marker and records one more attempt. A done step
// answers its stored result (done=true); found tells a retry of a step
// whose earlier attempt may have acted.
func (s *Steps) begin(ctx context.Context, execution, step string) (m marker, prior, done bool, err error) {
	if execution == "" {
		return m, false, false, &taskerr.PermanentError{Message: "task payload has no execution name"}
	}
	key := markerKey(execution, step)
	for range 3 {
		raw, found, err := s.KV.Get(ctx, key)
		if err != nil {
			return m, false, false, &taskerr.TransientError{Message: "reading the step marker: " + err.Error()}
		}
		m = marker{}
		if found {
			if err := json.Unmarshal([]byte(raw), &m); err != nil {
				return m, false, false, &taskerr.PermanentError{Message: "step marker unreadable: " + err.Error()}
			}
			if m.State == "done" {
				return m, true, true, nil
			}
		}
		prior = found
		next := m
		next.State, next.Attempts = "started", m.Attempts+1
		if next.StartedAt.IsZero() {
			next.StartedAt = s.now().UTC()
		}
		b, _ := json.Marshal(next)
		old := ""
		if found {
			old = raw
		}
		err = s.KV.PutIf(ctx, key, old, string(b), s.now().Add(markerKeep))
		if err == nil {
			return next, prior, false, nil
		}
		if sb.ErrorCode(err) != sb.ECONFLICT {
			return m, false, false, &taskerr.TransientError{Message: "writing the step marker: " + err.Error()}
		}
	}
	return m, false, false, &taskerr.TransientError{Message: "the step marker changed under concurrent attempts"}
}

// readMarker is the step's marker, if any.
func (s *Steps) readMarker(ctx context.Context, execution, step string) (m marker, found bool, err error) {
	raw, found, err := s.KV.Get(ctx, markerKey(execution, step))
	if err != nil || !found {
		return m, false, err
	}
	return m, true, json.Unmarshal([]byte(raw), &m)
}

// save writes the step's marker (done, or a started one with a new wait count).
func (s *Steps) save(ctx context.Context, execution, step string, m marker) error {
	b, _ := json.Marshal(m)
	if err := s.KV.Put(ctx, markerKey(execution, step), string(b), s.now().Add(markerKeep)); err != nil {
		return &taskerr.TransientError{Message: "writing the step marker: " + err.Error()}
	}
	return nil
}

func (s *Steps) finishStep(ctx context.Context, in StepInput, step string, m marker, done Progress) (State, error) {
	m.State, m.Done = "done", done
	if err := s.save(ctx, in.Execution, step, m); err != nil {
		return State{}, err
	}
	return State{Delivery: in.Delivery, Done: done, Approval: in.Approval}, nil
}

// by is who calls a tool for the delivery: the delivering agent, inside
// its run.
func by(d Delivery) sb.ToolCall {
	return sb.ToolCall{AgentID: d.AgentID, Run: d.Run, Origin: sb.OriginAgent}
}

// Convert turns the workspace file into the asked format (Nextcloud.convert).
func (s *Steps) Convert(ctx context.Context, in StepInput) (st State, err error) {
	m, _, done, err := s.begin(ctx, in.Execution, StepConvert)
	if err != nil || done {
		return State{Delivery: in.Delivery, Done: m.Done}, err
	}
	trace := s.traceStep(ctx, in, StepConvert, StepConvert, m.Attempts)
	defer func() { trace.end(st.Wait, err) }()
	cv, err := s.Files.Convert(ctx, by(in.Delivery), sb.ConvertArgs{LocalPath: in.Delivery.LocalPath, Format: in.Delivery.Format})
	if err := stepError(StepConvert, err); err != nil {
		return State{}, err
	}
	done2 := in.Done
	done2.Converted = cv.LocalPath
	return s.finishStep(ctx, in, StepConvert, m, done2)
}

// Upload puts the (converted) file into the target folder
// (Nextcloud.upload; a locked file in a reports folder is saved under a
// timestamped name by the tool). Repeating it after an unknown outcome
// writes the same path again, which Nextcloud keeps as a version, not a
// second copy.
func (s *Steps) Upload(ctx context.Context, in StepInput) (st State, err error) {
	m, _, done, err := s.begin(ctx, in.Execution, StepUpload)
	if err != nil || done {
		return State{Delivery: in.Delivery, Done: m.Done}, err
	}
	trace := s.traceStep(ctx, in, StepUpload, StepUpload, m.Attempts)
	defer func() { trace.end(st.Wait, err) }()
	src := in.Done.Converted
	if src == "" {
		src = in.Delivery.LocalPath
	}
	up, err := s.Files.Upload(ctx, by(in.Delivery), sb.UploadArgs{LocalPath: src, RemotePath: targetFolder(in.Delivery.Folder) + "/"})
	if err := stepError(StepUpload, err); err != nil {
		return State{}, err
	}
	done2 := in.Done
	done2.Uploaded, done2.Renamed = up.Path, up.RequestedPath != ""
	done2.FileID, done2.FileLink = up.FileID, up.Link
	return s.finishStep(ctx, in, StepUpload, m, done2)
}

// Share shares the uploaded file (Nextcloud.share). When Nextcloud limits
// share creation (429) it answers seconds in State.Wait and the machine
// waits that long in a Wait state before it comes back: Retry-After when
// Nextcloud sent one, else the schedule of ShareLimitWaitSeconds times 1,
// 2, 4, 4. A Wait costs nothing while it waits; a handler sleeping out the
// share limit's minutes would pay for them. After the schedule's four
// waits the step fails (PermanentError). The first wait tells the human,
// once per delivery. A retry after an unknown outcome first looks for the
// share it may have made.
func (s *Steps) Share(ctx context.Context, in StepInput) (st State, err error) {
	m, _, done, err := s.begin(ctx, in.Execution, StepShare)
	if err != nil || done {
		return State{Delivery: in.Delivery, Done: m.Done}, err
	}
	trace := s.traceStep(ctx, in, StepShare, StepShare, m.Attempts)
	defer func() { trace.end(st.Wait, err) }()
	sh := in.Delivery.Share
	if sh == nil {
		return s.finishStep(ctx, in, StepShare, m, in.Done)
	}
	args, err := s.shareArgs(ctx, in)
	if err != nil {
		return State{}, err
	}
	call := shareBy(in.Delivery)
	if sh.PublicLink {
		// Whoever holds the task token can resume AwaitApproval with any
		// output: the yes counts only as the approval store records it.
		a, err := s.verifiedApproval(ctx, in, args)
		if err != nil {
			return State{}, err
		}
		call.Approved, call.ApprovalID, call.ApprovedBy = true, a.ID, a.DecidedBy
	}
	// Earlier attempts that ended in a wait made no share; any other
	// earlier attempt may have made one before it was cut off.
	if m.Attempts-1 > m.Waits {
		if done2, ok := s.existingShare(ctx, in); ok {
			return s.finishStep(ctx, in, StepShare, m, done2)
		}
	}
	shared, err := s.Files.Share(ctx, call, args)
	if rateLimited(err) {
		schedule := s.shareLimitSchedule()
		if m.Waits >= len(schedule) {
			return State{}, &taskerr.PermanentError{Message: fmt.Sprintf(
				"share: Nextcloud still refuses new shares (429, its limit of about 20 share creations per user in 10 minutes) after %d waits of %s in all; "+
					"the file is uploaded, share it later with Nextcloud.share", m.Waits, roughly(m.Waited))}
		}
		wait := retryAfter(err)
		if wait <= 0 {
			wait = schedule[m.Waits]
		}
		tell := !m.Told
		m.Waits, m.Waited, m.Told = m.Waits+1, m.Waited+wait, true
		// Saved before the notice: a retried step never tells twice.
		if err := s.save(ctx, in.Execution, StepShare, m); err != nil {
			return State{}, err
		}
		if tell {
			s.tellShareWaits(ctx, in, wait, retryAfter(err) > 0, schedule)
		}
		return State{Delivery: in.Delivery, Done: in.Done, Wait: wait, Approval: in.Approval}, nil
	}
	if err := stepError(StepShare, err); err != nil {
		return State{}, err
	}
	return s.finishStep(ctx, in, StepShare, m, shareDone(in.Done, shared))
}

// shareBy is who calls Nextcloud.share for the delivery: a staged
// approval keeps where the run answers.
func shareBy(d Delivery) sb.ToolCall {
	call := by(d)
	call.ReplyTo = d.ReplyTo
	return call
}

// shareArgs are the Nextcloud.share arguments of the delivery, with the
// link password the tool kept for it.
func (s *Steps) shareArgs(ctx context.Context, in StepInput) (sb.ShareArgs, error) {
	sh := in.Delivery.Share
	args := shareArgsOf(sh, in.Done.Uploaded)
	if sh.PublicLink && sh.PasswordKept {
		pw, found, err := s.KV.Get(ctx, passwordKey(in.Execution))
		if err != nil {
			return sb.ShareArgs{}, &taskerr.TransientError{Message: "reading the link password: " + err.Error()}
		}
		if !found {
			return sb.ShareArgs{}, &taskerr.PermanentError{Message: "share: the link password is no longer kept (deliveries keep it 30 days); start the delivery again"}
		}
		args.Password = pw
	}
	return args, nil
}

// shareArgsOf is the Nextcloud.share arguments of sh for path, without a
// link password.
func shareArgsOf(sh *Share, path string) sb.ShareArgs {
	args := sb.ShareArgs{Path: path}
	switch {
	case sh.PublicLink:
		args.ShareType = sb.ShareLink
	case sh.Group:
		args.ShareType, args.ShareWith = sb.ShareGroup, sh.With
	default:
		args.ShareType, args.ShareWith = sb.ShareUser, sh.With
	}
	if sh.ExpireDays > 0 {
		args.ExpireDays = sh.ExpireDays
	}
	return args
}

// RequestApproval asks a human to approve the public link: the share call
// goes through the executor under the task token, so the staging policy
// decides and, when it asks for approval, the approval carries the token
// (the execution waits in AwaitApproval until the approvals flow resumes
// or fails it). When the policy lets the link run at once (an operator's
// override), the share is made here and the execution resumed at once.
// A retried request finds its marker and asks no one twice.
func (s *Steps) RequestApproval(ctx context.Context, in ApprovalInput) (_ struct{}, err error) {
	// Keyed by the token: a retried Task waits on a new token, which a new
	// approval must carry (the first one could no longer resume anything).
	sum := sha256.Sum256([]byte(in.Token))
	step := "approval#" + hex.EncodeToString(sum[:8])
	m, _, done, err := s.begin(ctx, in.Execution, step)
	if err != nil || done {
		return struct{}{}, err
	}
	trace := s.traceStep(ctx, in.StepInput, step, "approval", m.Attempts)
	defer func() { trace.end(0, err) }()
	if in.Token == "" {
		return struct{}{}, &taskerr.PermanentError{Message: "approval: the task has no token"}
	}
	args, err := s.shareArgs(ctx, in.StepInput)
	if err != nil {
		return struct{}{}, err
	}
	shared, err := s.Files.Share(sb.WithTaskToken(trace.context(ctx), in.Token), shareBy(in.Delivery), args)
	var pending *sb.PendingApproval
	switch {
	case errors.As(err, &pending):
		id := pending.ApprovalID
		if id == "" {
			return struct{}{}, &taskerr.PermanentError{Message: "share: a public link needs a human's approval, and approvals are not set up on this instance (instance.approvals)"}
		}
		trace.outcome = spanPending
		// The Share step accepts this approval only: a retried Task (a new
		// token) stages a new one, which replaces it.
		b, _ := json.Marshal(askedApproval{ApprovalID: id})
		if err := s.KV.Put(ctx, askedKey(in.Execution), string(b), s.now().Add(markerKeep)); err != nil {
			return struct{}{}, &taskerr.TransientError{Message: "approval: recording the approval asked for: " + err.Error()}
		}
	case err == nil:
		if err := s.save(ctx, in.Execution, StepShare, marker{State: "done", Attempts: 1, Done: shareDone(in.Done, shared)}); err != nil {
			return struct{}{}, err
		}
		if s.Tokens == nil {
			return struct{}{}, &taskerr.PermanentError{Message: "approval: the link was shared, but the execution cannot be resumed here"}
		}
		out, _ := json.Marshal(Granted{DecidedBy: "policy"})
		if err := s.Tokens.Succeed(ctx, in.Token, string(out)); err != nil {
			return struct{}{}, &taskerr.TransientError{Message: "approval: resuming the execution: " + err.Error()}
		}
	default:
		return struct{}{}, stepError(StepShare, err)
	}
	m.State = "done"
	return struct{}{}, s.save(ctx, in.Execution, step, m)
}

// askedApproval records the approval RequestApproval staged for an
// execution, under askedKey.
type askedApproval struct {
	ApprovalID string `json:"approvalId"`
}

func askedKey(execution string) string { return "docs#" + execution + "#approval-asked" }

// unverified starts the error of a share whose approval could not be
// verified; Finish tells the human of these whatever the notice limit.
const unverified = "share: the approval could not be verified"

// verifiedApproval is the approval that lets the delivery's public link
// run with args. The task output that resumed AwaitApproval only names it: the
// approval must be the one RequestApproval staged for this execution, for
// this agent, run and call (Nextcloud.share with the arguments as staged:
// same args hash), and decided approve in the store (approved, or the
// approvals flow already closed it executing/executed after resuming).
// Who decided comes from the store. Anything else is a PermanentError
// (with an audit entry of the refused share): no share is made.
func (s *Steps) verifiedApproval(ctx context.Context, in StepInput, args sb.ShareArgs) (sb.Approval, error) {
	askedID := ""
	refuse := func(format string, a ...any) (sb.Approval, error) {
		why := fmt.Sprintf(format, a...)
		if g := in.Approval; g != nil {
			why += fmt.Sprintf(" (the execution was resumed naming approval %q, decided by %q)", claim(g.ApprovalID), claim(g.DecidedBy))
		}
		msg := unverified + ": " + why + "; no share was made. Nobody's yes is on record for this link: start the delivery again to ask a human"
		s.auditRefusedShare(ctx, in, askedID, msg)
		s.log().WarnContext(ctx, "document delivery: a public link's approval could not be verified", "execution", in.Execution,
			"agent", in.Delivery.AgentID, "approvalId", askedID, "why", why)
		return sb.Approval{}, &taskerr.PermanentError{Message: msg}
	}
	raw, found, err := s.KV.Get(ctx, askedKey(in.Execution))
	if err != nil {
		return sb.Approval{}, &taskerr.TransientError{Message: "share: reading the approval asked for: " + err.Error()}
	}
	var asked askedApproval
	if found {
		_ = json.Unmarshal([]byte(raw), &asked)
	}
	askedID = asked.ApprovalID
	switch {
	case askedID == "":
		return refuse("no approval was asked for this delivery")
	case in.Approval == nil:
		return refuse("no approval came with the step")
	case in.Approval.ApprovalID != askedID:
		return refuse("the approval named is not the one asked for this delivery (%s)", askedID)
	case s.Approvals == nil:
		return refuse("this function has no approval store to look approval %s up in", askedID)
	}
	a, err := s.Approvals.Get(ctx, askedID)
	switch sb.ErrorCode(err) {
	case "":
	case sb.ENOTFOUND:
		return refuse("approval %s is not in the approval store", askedID)
	default:
		return sb.Approval{}, &taskerr.TransientError{Message: "share: reading approval " + askedID + ": " + err.Error()}
	}
	switch a.Status {
	case sb.ApprovalApproved, sb.ApprovalExecuting, sb.ApprovalExecuted:
	default:
		return refuse("approval %s is %s, not approved", a.ID, a.Status)
	}
	d := in.Delivery
	if a.Tool != "Nextcloud" || a.Action != "share" || a.AgentID != d.AgentID || a.Run.RunID != d.Run.RunID || a.TaskToken == "" {
		return refuse("approval %s was given for another call (%s.%s of %s in run %s)", a.ID, a.Tool, a.Action, a.AgentID, a.Run.RunID)
	}
	if a.DecidedBy == "" {
		return refuse("approval %s names nobody who decided", a.ID)
	}
	// The service sends args as this JSON; the approval was staged with it.
	sent, _ := json.Marshal(args)
	if hash, err := approvals.ArgsHash("Nextcloud", "share", sent); err != nil || hash != a.ArgsHash {
		return refuse("approval %s was given for other arguments than this share's", a.ID)
	}
	return a, nil
}

// claim shows a value the task output claimed, which anyone holding the
// token chose: quoted by the caller, at most 64 characters.
func claim(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}

// auditRefusedShare records the share that did not run because its
// approval could not be verified (the executor never saw it). The args
// name the delivery only: the call's may hold the link password.
func (s *Steps) auditRefusedShare(ctx context.Context, in StepInput, approvalID, msg string) {
	d := in.Delivery
	e := sb.AuditEntry{ID: sb.NewID(s.now()), At: s.now().UTC(), Run: d.Run, AgentID: d.AgentID, Tool: "Nextcloud", Action: "share",
		Args:    fmt.Sprintf(`{"execution":%q,"step":"share","path":%q,"shareType":3}`, in.Execution, in.Done.Uploaded),
		Outcome: sb.OutcomeRejected, Error: msg, ApprovalID: approvalID}
	if err := s.Audit.Append(context.WithoutCancel(ctx), e); err != nil {
		s.log().ErrorContext(ctx, "audit write failed", "execution", in.Execution, "err", err)
	}
}

// KindDeliveryWaiting is the router notice of a share that waits for
// Nextcloud's share limit (once per delivery).
const KindDeliveryWaiting = "delivery_waiting"

// tellShareWaits tells the human that the delivery's share waits for
// Nextcloud's share limit: what waits, and for about how long. A notice
// that reaches no one is logged; the share waits all the same.
func (s *Steps) tellShareWaits(ctx context.Context, in StepInput, wait int, asked bool, schedule []int) {
	if s.Notify == nil {
		return
	}
	d := in.Delivery
	what := "sharing it"
	switch sh := d.Share; {
	case sh.PublicLink:
		what += " as a public link"
	case sh.Group:
		what += " with the group " + sh.With
	default:
		what += " with " + sh.With
	}
	var when string
	if asked {
		when = fmt.Sprintf("Nextcloud asked to wait %s, then it is tried again (at most %d waits in all)", roughly(wait), len(schedule))
	} else {
		total := 0
		for _, w := range schedule {
			total += w
		}
		when = fmt.Sprintf("it is tried again in %s, and for up to %s in all while the limit lasts", roughly(wait), roughly(total))
	}
	text := fmt.Sprintf("Document delivery %s: %s is uploaded, and %s waits for Nextcloud's share limit (about 20 new shares per user in 10 minutes): "+
		"%s. Nothing to do; you hear again only if it fails.", in.Execution, in.Done.Uploaded, what, when)
	if _, err := s.Notify.Deliver(ctx, router.Notice{Kind: KindDeliveryWaiting, AgentID: d.AgentID, Text: text, Run: d.Run}); err != nil {
		s.log().WarnContext(ctx, "the share waits for Nextcloud's limit and the human could not be told", "execution", in.Execution, "err", err)
	}
}

// roughly says seconds as a person reads them: "45 s", "2 min", "11 min".
func roughly(sec int) string {
	if sec < 90 {
		if sec == 60 {
			return "1 min"
		}
		return fmt.Sprintf("%d s", sec)
	}
	return fmt.Sprintf("%d min", (sec+30)/60)
}

// shareDone is d with the share: its id, and its link (a public link's
// URL, else the internal link of a user or group share).
func shareDone(d Progress, sh sb.FileShared) Progress {
	d.ShareID, d.Link = sh.ID, sh.URL
	if d.Link == "" {
		d.Link = sh.InternalURL
	}
	return d
}

// existingShare finds the share an earlier attempt made (Nextcloud.shares
// on the uploaded path): same type and recipient.
func (s *Steps) existingShare(ctx context.Context, in StepInput) (Progress, bool) {
	list, err := s.Files.Shares(ctx, by(in.Delivery), in.Done.Uploaded)
	if err != nil {
		return Progress{}, false
	}
	sh := in.Delivery.Share
	for _, d := range list {
		link := d.Type == sb.ShareLink
		switch {
		case sh.PublicLink && link:
		case !sh.PublicLink && d.ShareWith == sh.With && !link:
		default:
			continue
		}
		return shareDone(in.Done, d), true
	}
	return Progress{}, false
}

// Post puts the message with the link into the room (RocketChat.send_message).
func (s *Steps) Post(ctx context.Context, in StepInput) (st State, err error) {
	m, _, done, err := s.begin(ctx, in.Execution, StepPost)
	if err != nil || done {
		return State{Delivery: in.Delivery, Done: m.Done}, err
	}
	trace := s.traceStep(ctx, in, StepPost, StepPost, m.Attempts)
	defer func() { trace.end(st.Wait, err) }()
	d := in.Delivery
	posted, err := s.Chat.SendMessage(ctx, by(d), sb.ChatPostArgs{Room: d.Room, Text: postText(d.Message, postLink(in.Done)), Tmid: d.Tmid})
	if err := stepError(StepPost, err); err != nil {
		return State{}, err
	}
	done2 := in.Done
	done2.MessageID = posted.MessageID
	return s.finishStep(ctx, in, StepPost, m, done2)
}

// postText is the post's text: the message with the link.
func postText(message, link string) string {
	text := strings.TrimSpace(message)
	if text == "" {
		return "The document is ready: " + link
	} else if !strings.Contains(text, link) {
		text += "\n" + link
	}
	return text
}

// postLink is what the post offers the room: the share's link, else the
// file's internal link with its path (a user without access to the file
// cannot open it, but the path says where it is), else the path and why
// there is no link (an older Nextcloud tool answers no link).
func postLink(d Progress) string {
	switch {
	case d.Link != "":
		return d.Link
	case d.FileLink != "":
		return d.Uploaded + " — " + d.FileLink
	}
	return "saved to " + d.Uploaded + " in the agent's Nextcloud (no share was asked for, so there is no link)"
}

// Finish ends a delivery: it writes the audit entry of the outcome, tells
// the human when it failed (what failed, at which step, what was done) and
// wakes the agent with the same facts in a follow-up run of the run that
// started the delivery. A repeated Finish does nothing.
func (s *Steps) Finish(ctx context.Context, in FinishInput) (_ Outcome, err error) {
	const step = "finish"
	m, _, done, err := s.begin(ctx, in.Execution, step)
	out := Outcome{Status: in.Status, FailedStep: in.FailedStep, Done: in.Done}
	if in.Status != "delivered" {
		out.Status = "failed"
		out.Reason = reasonOf(in.Error)
	}
	if err != nil || done {
		return out, err
	}
	trace := s.traceStep(ctx, in.StepInput, step, step, m.Attempts)
	defer func() {
		trace.end(0, err)
		if err == nil {
			s.recordExecution(ctx, in, out)
		}
	}()
	d := in.Delivery
	facts := Facts(in.Execution, out)
	entry := sb.AuditEntry{ID: sb.NewID(s.now()), At: s.now().UTC(), Run: d.Run, AgentID: d.AgentID, Tool: ToolName,
		Action: "deliver", Args: fmt.Sprintf(`{"execution":%q,"step":"finish"}`, in.Execution), Decision: sb.DecisionAuto, Outcome: sb.OutcomeOK}
	if out.Status == "failed" {
		entry.Outcome, entry.Error = sb.OutcomeError, facts
		text, tell := facts, true
		// A forged approval is always told (each needs an execution that
		// waits for an approval, so it cannot flood); other failures count.
		if !strings.HasPrefix(out.Reason, unverified) {
			var last bool
			var until time.Time
			tell, last, until = s.failureNotice(ctx, d.AgentID)
			if last {
				text += fmt.Sprintf(" That makes %d failed deliveries of %s within an hour, the most you are told of: further failed deliveries of %s are not sent to you until %s UTC; "+
					"each is in the audit, and %s is told of each in its follow-up run.", MaxFailureNotices, d.AgentID, d.AgentID, until.UTC().Format("15:04"), d.AgentID)
			}
		}
		if tell {
			n := router.Notice{Kind: KindDeliveryFailed, AgentID: d.AgentID, Text: text, Run: d.Run}
			dl, err := s.Notify.Deliver(ctx, n)
			if err != nil {
				s.log().ErrorContext(ctx, "document delivery failed and the human could not be told", "execution", in.Execution, "err", err)
			}
			out.Told = dl.Channel
		} else {
			out.NoticeHeld = true
			s.log().WarnContext(ctx, "document delivery failed; the human's notice is held (the agent's failure notices for this hour are used up)",
				"execution", in.Execution, "agent", d.AgentID, "limit", MaxFailureNotices, "facts", facts)
		}
	}
	if err := s.Audit.Append(ctx, entry); err != nil {
		s.log().ErrorContext(ctx, "audit write failed", "execution", in.Execution, "err", err)
	}
	parent := d.Run
	job := sb.WakeJob{AgentID: d.AgentID, Source: JobSource, Text: facts, Parent: &parent, ReplyTo: d.ReplyTo}
	if out.Told != "" {
		// The human has read the failure in the router's notice: the
		// follow-up run is the agent's, and its answer is not posted as a
		// second copy of the same facts.
		job.ReplyTo = nil
		job.Text = facts + " " + toldAlready(out.Told)
	}
	if err := s.Waker.Dispatch(ctx, job); err != nil {
		return out, &taskerr.TransientError{Message: "queueing the follow-up run: " + err.Error()}
	}
	m.State = "done"
	_ = s.save(ctx, in.Execution, step, m)
	return out, nil
}

// toldAlready ends the follow-up text of a failure the human was told of
// through channel.
func toldAlready(channel string) string {
	return fmt.Sprintf("The human has been told this already (through %s), so your answer to this run is not posted anywhere. "+
		"Act on it if you can (for example deliver again with what was wrong fixed); tell the human only what is new, with RocketChat.send_message.", channel)
}

// KindDeliveryFailed is the router notice of a failed delivery.
const KindDeliveryFailed = "delivery_failed"

// MaxFailureNotices is how many failed deliveries of one agent the human
// is told of (KindDeliveryFailed) in any failureNoticeWindow.
const MaxFailureNotices = 3

// failureNoticeWindow is the sliding window of MaxFailureNotices.
const failureNoticeWindow = time.Hour

func failureNoticesKey(agentID string) string { return "docs#failure-notices#" + agentID }

// failureNotice spends one of agentID's failure notices of the last hour
// (a KV list of when they went out, one conditional write): tell is false
// when MaxFailureNotices went out within the hour; last is true for the
// notice that uses up the budget, and until is when the oldest leaves the
// window. A state table that cannot answer does not silence the human:
// the notice goes out (logged).
func (s *Steps) failureNotice(ctx context.Context, agentID string) (tell, last bool, until time.Time) {
	key, now := failureNoticesKey(agentID), s.now()
	for range 3 {
		raw, found, err := s.KV.Get(ctx, key)
		if err != nil {
			break
		}
		var sent []time.Time
		if found {
			_ = json.Unmarshal([]byte(raw), &sent)
		}
		recent := sent[:0]
		for _, at := range sent {
			if now.Sub(at) < failureNoticeWindow {
				recent = append(recent, at)
			}
		}
		if len(recent) >= MaxFailureNotices {
			return false, false, recent[0].Add(failureNoticeWindow)
		}
		recent = append(recent, now.UTC())
		b, _ := json.Marshal(recent)
		old := ""
		if found {
			old = raw
		}
		err = s.KV.PutIf(ctx, key, old, string(b), now.Add(failureNoticeWindow))
		if err == nil {
			return true, len(recent) == MaxFailureNotices, recent[0].Add(failureNoticeWindow)
		}
		if sb.ErrorCode(err) != sb.ECONFLICT {
			break
		}
	}
	s.log().WarnContext(ctx, "the failure-notice limit could not be read or written; telling the human anyway", "agent", agentID)
	return true, false, time.Time{}
}

// JobSource marks the follow-up run of a delivery.
const JobSource = "document-pipeline"

// Facts is the text the agent and (on failure) the human read.
func Facts(execution string, o Outcome) string {
	d := o.Done
	var did []string
	if d.Converted != "" {
		did = append(did, "converted to "+d.Converted)
	}
	if d.Uploaded != "" {
		u := "uploaded to " + d.Uploaded
		if d.FileLink != "" && d.Link == "" {
			u += " (" + d.FileLink + ")"
		}
		if d.Renamed {
			u += " (the file was locked, so it got a timestamped name)"
		}
		did = append(did, u)
	}
	if d.Link != "" {
		did = append(did, "shared: "+d.Link)
	}
	switch {
	case d.MessageID == "":
	case d.Link != "" || d.FileLink != "":
		did = append(did, "link posted in the room")
	default:
		did = append(did, "its path posted in the room (there was no link to post)")
	}
	if o.Status == "delivered" {
		return fmt.Sprintf("Document delivery %s finished: %s.", execution, strings.Join(did, "; "))
	}
	doneText := "nothing was done"
	if len(did) > 0 {
		doneText = "done so far: " + strings.Join(did, "; ")
	}
	var not []string
	for _, st := range []struct{ step, text string }{{StepUpload, "not uploaded"}, {StepShare, "not shared"}, {StepPost, "not posted"}} {
		if o.FailedStep == st.step || len(not) > 0 {
			not = append(not, st.text)
		}
	}
	tail := ""
	if len(not) > 0 {
		tail = " (" + strings.Join(not, ", ") + ")"
	}
	return fmt.Sprintf("Document delivery %s failed at step %s: %s. %s%s.", execution, o.FailedStep, o.Reason, doneText, tail)
}

// reasonOf reads a caught error: a function error's Cause is its JSON
// payload, whose errorMessage is the step's own text.
func reasonOf(e *TaskError) string {
	if e == nil {
		return "unknown error"
	}
	var p struct {
		ErrorMessage string `json:"errorMessage"`
	}
	if json.Unmarshal([]byte(e.Cause), &p) == nil && p.ErrorMessage != "" {
		return p.ErrorMessage
	}
	switch e.Error {
	case "States.Timeout":
		return "the step timed out"
	case "":
		return "unknown error"
	}
	if e.Cause != "" {
		return e.Error + ": " + e.Cause
	}
	return e.Error
}

// stepError turns a failed tool call into the error the machine retries
// (TransientError: rate limits, 5xx, unreachable) or catches at once
// (PermanentError: everything a retry cannot fix, such as 507 or a refusal
// by the staging policy).
func stepError(step string, err error) error {
	var pending *sb.PendingApproval
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pending):
		return &taskerr.PermanentError{Message: step + ": needs a human's approval, which a delivery cannot wait for here"}
	}
	msg := step + ": " + sb.ErrorMessage(err)
	code, status := sb.ErrorCode(err), sb.HTTPStatus(err)
	if code == sb.ERATELIMITED || code == sb.EUNAVAILABLE || status == 429 || status >= 500 && status != 507 {
		return &taskerr.TransientError{Message: msg, RetryAfterSeconds: retryAfter(err)}
	}
	return &taskerr.PermanentError{Message: msg}
}

// rateLimited reports a failed call that Nextcloud rate-limited (429 or
// rate_limited), or one that passes on a wait it asked for (a 503 with
// Retry-After).
func rateLimited(err error) bool {
	var pending *sb.PendingApproval
	if err == nil || errors.As(err, &pending) {
		return false
	}
	return sb.HTTPStatus(err) == 429 || sb.ErrorCode(err) == sb.ERATELIMITED || retryAfter(err) > 0
}

// retryAfter is the wait (whole seconds) a rate limit or an unavailable
// server asked for, 0 when it named none.
func retryAfter(err error) int {
	var se *sb.Error
	code := sb.ErrorCode(err)
	if (code != sb.ERATELIMITED && code != sb.EUNAVAILABLE) || !errors.As(err, &se) {
		return 0
	}
	return int(math.Ceil(se.RetryAfter.Seconds()))
}

// shareLimitSchedule is the share-limit waits in seconds.
func (s *Steps) shareLimitSchedule() []int {
	base := s.ShareLimitWaitSeconds
	if base <= 0 {
		base = DefaultShareLimitWaitSeconds
	}
	out := make([]int, len(shareLimitFactors))
	for i, f := range shareLimitFactors {
		out[i] = base * f
	}
	return out
}

func (s *Steps) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Steps) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}
