// Package taskboard is delegation between agents: an agent (or the human,
// through the tool API) gives a task to an agent, the assignee is woken to
// do it, and completing or blocking it wakes the creator as a follow-up of
// the finishing run. Every step that crosses from one agent to another is
// recorded as an agent message by this package (the core's side, never the
// calling tool's arguments), a blocked task reaches the human once through
// the router, and the watchdog job reports each task left open too long,
// once.
package taskboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// JobSource names the wakes this package queues.
const JobSource = "taskboard"

// DefaultWatchdog is how long a task may stay open before the human hears
// of it, when the config does not say.
const DefaultWatchdog = 24 * time.Hour

// Party is what the service needs to know about an agent.
type Party struct {
	Name      string // display name; the id when it has none
	Taskboard bool   // the agent has the Taskboard tool, so it can take and finish tasks
}

// Notifier tells the human (*router.Router).
type Notifier interface {
	Deliver(ctx context.Context, n router.Notice) (router.Delivery, error)
}

// Parties look an agent up; false for an unknown id.
type Parties interface {
	Party(id string) (Party, bool)
}

// ConfigParties are the configured agents: their display names and
// whether they have the Taskboard tool.
type ConfigParties struct{ Config *config.Config }

// Party implements Parties.
func (c ConfigParties) Party(id string) (Party, bool) {
	a, ok := c.Config.Agent(id)
	if !ok {
		return Party{}, false
	}
	name := a.Name
	if name == "" {
		name = id
	}
	return Party{Name: name, Taskboard: a.Tools.Taskboard != nil}, true
}

// Service is the taskboard. All fields but WatchdogAfter, Limits, Now and
// Log are required.
type Service struct {
	Tasks sb.TaskStore
	// Messages records agent-to-agent messages; the app passes the core's
	// sb.ScrubbingMessages, so contents are scrubbed before they are kept.
	Messages sb.AgentMessageLog
	Waker    sb.WakeDispatcher
	Notify   Notifier
	Agents   Parties
	// WatchdogAfter is how long a task may stay open before the watchdog
	// tells the human; 0 turns the watchdog off.
	WatchdogAfter time.Duration
	// Counters count task_create per run and per agent and hour (the
	// state table's bounded counters).
	Counters sb.Counters
	// Budget is the daily budget: a task's runs are charged to the agent
	// that handed the work out, so one without budget left creates no
	// task that wakes another agent, and its tasks' wakes do not run
	// (AdmitWake).
	Budget Budget
	// Chain says whether a task's chain may take another hop (stopped by
	// the operator, over its chain budget): a wake it refuses is a denied
	// row (AdmitWake). Nil: always.
	Chain ChainGate
	// Limits bound task_create; zero fields take the defaults.
	Limits Limits
	Now    func() time.Time
	Log    *slog.Logger
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// name is how texts call a party.
func (s *Service) name(id string) string {
	if id == sb.HumanParty {
		return "the human"
	}
	if p, ok := s.Agents.Party(id); ok && p.Name != "" && p.Name != id {
		return fmt.Sprintf("%s (%s)", p.Name, id)
	}
	return id
}

// Actor is who makes a call: the human for calls through the tool API
// from outside any run, else the calling agent.
func Actor(call sb.ToolCall) string {
	if call.Origin == sb.OriginOperator {
		return sb.HumanParty
	}
	return call.AgentID
}

func isAgent(party string) bool { return party != sb.HumanParty }

// Created is the outcome of Create.
type Created struct {
	Task     sb.Task
	Woken    bool // the assignee's wake was queued, now or (Deferred) by the task-wakes job
	Deferred bool
}

// Create gives a new task to assignee. The assignee must be a configured
// agent with the Taskboard tool (EINVALID, ENOTFOUND otherwise). An
// agent's task_create is bounded (a *Refused, with a denied row): none from
// a run that answers a question, at most Limits.PerRun per run and
// Limits.PerHour per agent and hour, a chain at most Limits.Hops hand-overs
// deep, and none that would wake another agent while the agent paying for
// it has no budget left. Unless the creator gives the task to itself, the
// assignee is woken with the task as a follow-up of the creating run, one
// hop deeper and paid for by the creator (or whoever pays for the creating
// run), and the hand-over is recorded as a message. A wake that cannot be
// queued now waits for the task-wakes job (Deferred); one that cannot even
// be kept is no error either: the task is stored (Woken false) and the
// watchdog reports it if it stays open.
func (s *Service) Create(ctx context.Context, call sb.ToolCall, assignee, title, description string) (Created, error) {
	const op = "taskboard.create"
	actor := Actor(call)
	now := s.now()
	if assignee == sb.HumanParty {
		return Created{}, sb.E(op, sb.EINVALID, "tasks go to agents; tell the human with notify_user instead")
	}
	p, ok := s.Agents.Party(assignee)
	if !ok {
		return Created{}, sb.E(op, sb.ENOTFOUND, fmt.Sprintf("no agent %q; give the task to one of the agents with the Taskboard tool", assignee))
	}
	if !p.Taskboard {
		msg := fmt.Sprintf("agent %s does not take tasks (it has no Taskboard tool); give the task to another agent or ask the human", assignee)
		if isAgent(actor) && actor != assignee {
			s.record(ctx, sb.AgentMessage{From: actor, To: assignee, Channel: sb.ChannelTask, Direction: sb.DirectionRequest,
				Content: title + "\n\n" + description, Status: sb.MessageDenied, Reason: ReasonNoTaskboard + ": " + msg, OccurredAt: now}, call.Run)
		}
		return Created{}, sb.E(op, sb.EINVALID, msg)
	}
	hops, pays, err := s.admit(ctx, call, actor, assignee)
	var undo func()
	if err == nil {
		undo, err = s.count(ctx, call, actor)
	}
	if err != nil {
		var r *Refused
		if errors.As(err, &r) {
			s.recordRefusal(ctx, call, actor, assignee, title, description, r)
		}
		return Created{}, err
	}
	t := sb.Task{
		ID: sb.NewID(now), Creator: actor, Assignee: assignee, Title: title, Description: description,
		Status: sb.TaskOpen, CreatedAt: now, UpdatedAt: now, Hops: hops, Run: call.Run, ReplyTo: call.ReplyTo.Clone(),
	}
	if err := s.Tasks.Create(ctx, t); err != nil {
		undo()
		return Created{}, err
	}
	if actor == assignee {
		return Created{Task: t, Woken: true}, nil // a note to itself: it is running already
	}
	// The assignee's run follows the creating run, one hop deeper, and is
	// charged to the payer.
	parent := call.Run
	parent.TaskHops, parent.PaidBy = hops, paidBy(pays, assignee)
	woken, deferred := s.wake(ctx, sb.WakeJob{AgentID: assignee, Source: JobSource, Text: AssignedText(t, s.name(actor)), Parent: &parent}, t.ID)
	if isAgent(actor) {
		s.record(ctx, sb.AgentMessage{From: actor, To: assignee, Channel: sb.ChannelTask, Direction: sb.DirectionRequest,
			Content: title + "\n\n" + description, TaskID: t.ID, Status: deliveredIf(woken), OccurredAt: now}, call.Run)
	}
	return Created{Task: t, Woken: woken, Deferred: deferred}, nil
}

// Comment adds a comment by the caller, who must be the task's creator or
// its assignee (EFORBIDDEN otherwise). A comment between two agents is
// recorded as a message: the assignee's to the creator answers (response),
// the creator's to the assignee asks (request). Comments wake nobody; they
// travel with the task (task_list) and with its outcome.
func (s *Service) Comment(ctx context.Context, call sb.ToolCall, id, text string) (sb.Task, error) {
	const op = "taskboard.comment"
	actor := Actor(call)
	t, err := s.Tasks.Get(ctx, id)
	if err != nil {
		return sb.Task{}, err
	}
	if actor != t.Creator && actor != t.Assignee {
		return sb.Task{}, sb.E(op, sb.EFORBIDDEN, fmt.Sprintf(
			"task %s is between %s and %s; only they comment on it", id, s.name(t.Creator), s.name(t.Assignee)))
	}
	if taskBytes(t)+len(text) > maxTaskBytes-resultRoom {
		return sb.Task{}, sb.E(op, sb.ECONFLICT, fmt.Sprintf(
			"task %s holds as much text as it can; finish it, or put long text into a file and comment with its path", id))
	}
	now := s.now()
	t, err = s.Tasks.Comment(ctx, id, sb.TaskComment{By: actor, Text: text, At: now})
	if err != nil {
		return sb.Task{}, err
	}
	to, dir := t.Assignee, sb.DirectionRequest
	if actor == t.Assignee {
		to, dir = t.Creator, sb.DirectionResponse
	}
	if isAgent(actor) && isAgent(to) && actor != to {
		s.record(ctx, sb.AgentMessage{From: actor, To: to, Channel: sb.ChannelTaskComment, Direction: dir,
			Content: text, TaskID: id, Status: sb.MessageDelivered, OccurredAt: now}, call.Run)
	}
	return t, nil
}

// A task is one DynamoDB item (at most 400 KB). Its texts are bounded in
// characters, which is up to four bytes each, so the comments are bounded
// in bytes: they may fill the item up to maxTaskBytes less the room its
// result or blocker reason may still need.
const (
	maxTaskBytes = 300 << 10
	resultRoom   = 4 * sb.MaxTaskText
)

// taskBytes is the size of t's texts in bytes.
func taskBytes(t sb.Task) int {
	n := len(t.Title) + len(t.Description) + len(t.Result) + len(t.Blocker)
	for _, c := range t.Comments {
		n += len(c.Text) + len(c.By) + 64 // the comment's other attributes
	}
	return n
}

// Finished is the outcome of Finish.
type Finished struct {
	Task         sb.Task
	CreatorWoken bool // an agent creator's follow-up wake was queued
	HumanTold    bool // a notice reached the human (blocked, or done for the human)
}

// Finish completes (to = done) or blocks (to = blocked) a task; only its
// assignee may (EFORBIDDEN). The store lets exactly one of racing calls
// through (ECONFLICT for the others, and for a task already done). The
// creator is woken with the outcome as a follow-up of this run and the
// outcome is recorded as a message; a task the human created is reported
// to the human instead. A block also reaches the human, once: only the one
// call that blocked the task sends it.
func (s *Service) Finish(ctx context.Context, call sb.ToolCall, id string, to sb.TaskStatus, text string) (Finished, error) {
	const op = "taskboard.finish"
	actor := Actor(call)
	t, err := s.Tasks.Get(ctx, id)
	if err != nil {
		return Finished{}, err
	}
	verb := "completes"
	if to == sb.TaskBlocked {
		verb = "blocks"
	}
	if actor != t.Assignee {
		return Finished{}, sb.E(op, sb.EFORBIDDEN, fmt.Sprintf(
			"task %s is assigned to %s; only the assignee %s it (comment on it instead)", id, s.name(t.Assignee), verb))
	}
	now := s.now()
	t, err = s.Tasks.Finish(ctx, id, to, text, call.Run, now)
	if err != nil {
		return Finished{}, err
	}
	out := Finished{Task: t}
	if to == sb.TaskBlocked {
		out.HumanTold = s.tell(ctx, router.Notice{Kind: router.KindTaskBlocked, Text: BlockedNotice(t, s.name(t.Assignee), s.name(t.Creator)), Run: call.Run}, t.ID)
	}
	switch {
	case t.Creator == t.Assignee:
	case !isAgent(t.Creator):
		if to == sb.TaskDone {
			out.HumanTold = s.tell(ctx, router.Notice{Kind: router.KindTaskDone, AgentID: t.Assignee, Text: DoneNotice(t, s.name(t.Assignee)), Run: call.Run}, t.ID)
		}
	default:
		// The creator hears the result at the task's depth, charged to
		// whoever paid for the creating run.
		run := call.Run
		run.TaskHops, run.PaidBy = max(run.TaskHops, t.Hops), paidBy(t.Run.Payer(), t.Creator)
		out.CreatorWoken, _ = s.wake(ctx, sb.WakeJob{AgentID: t.Creator, Source: JobSource, Text: FinishedText(t, s.name(t.Assignee)),
			Parent: &run, ReplyTo: t.ReplyTo.Clone()}, t.ID)
		if isAgent(actor) {
			content := text
			if to == sb.TaskBlocked {
				content = "blocked: " + text
			}
			s.record(ctx, sb.AgentMessage{From: actor, To: t.Creator, Channel: sb.ChannelTaskResult, Direction: sb.DirectionResponse,
				Content: content, TaskID: id, TaskStatus: to, Status: deliveredIf(out.CreatorWoken), OccurredAt: now}, call.Run)
		}
	}
	return out, nil
}

// List lists the caller's tasks: those assigned to it, those it created,
// or both (role ""), newest first, each listing an index read.
func (s *Service) List(ctx context.Context, call sb.ToolCall, role sb.TaskRole, status sb.TaskStatus, limit int) ([]sb.Task, error) {
	actor := Actor(call)
	roles := []sb.TaskRole{role}
	if role == "" {
		roles = []sb.TaskRole{sb.TaskAssignedTo, sb.TaskCreatedBy}
	}
	var out []sb.Task
	seen := map[string]bool{}
	for _, r := range roles {
		ts, err := s.Tasks.List(ctx, sb.TaskQuery{Party: actor, Role: r, Status: status, Limit: limit})
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			if !seen[t.ID] { // a note to oneself is in both listings
				seen[t.ID] = true
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// Watchdog is the task-watchdog job: every task open longer than
// WatchdogAfter reaches the human once. The claim is a conditional write
// on the task, so that a retried job or two overlapping runs send one
// notice; a notice that cannot be delivered gives its claim back for the
// next run.
func (s *Service) Watchdog(ctx context.Context) (string, error) {
	if s.WatchdogAfter <= 0 {
		return "the task watchdog is off (instance.taskboard.watchdogHours: 0)", nil
	}
	now := s.now()
	due, err := s.Tasks.OpenSince(ctx, now.Add(-s.WatchdogAfter), sb.MaxTaskPage)
	if err != nil {
		return "", err
	}
	told, failed := 0, 0
	var errs []error
	for _, t := range due {
		ok, err := s.Tasks.ClaimWatchdog(ctx, t.ID, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue // another run reported it, or it was finished meanwhile
		}
		_, err = s.Notify.Deliver(ctx, router.Notice{Kind: router.KindWatchdog, Text: WatchdogNotice(t, s.name(t.Assignee), s.name(t.Creator), now), Run: t.Run})
		if err != nil {
			failed++
			errs = append(errs, err)
			if rerr := s.Tasks.ReleaseWatchdog(context.WithoutCancel(ctx), t.ID, now); rerr != nil {
				s.log().ErrorContext(ctx, "task watchdog could not give its claim back; this task will not be reported again",
					"task", t.ID, "err", rerr)
			}
			continue
		}
		told++
	}
	return fmt.Sprintf("%d open tasks past %s reported, %d could not be", told, s.WatchdogAfter, failed), errors.Join(errs...)
}

// wake queues job. When that fails (the queue refused it, or the function
// has no way to hand out wakes) the job is kept for the task-wakes job
// (deferred). woken is false only when the wake is lost: it could be
// neither queued nor kept (logged).
func (s *Service) wake(ctx context.Context, job sb.WakeJob, taskID string) (woken, deferred bool) {
	err := s.Waker.Dispatch(ctx, job)
	if err == nil {
		return true, false
	}
	raw, merr := json.Marshal(job)
	if merr == nil {
		now := s.now()
		merr = s.Tasks.DeferWake(context.WithoutCancel(ctx), sb.DeferredWake{ID: sb.NewID(now), TaskID: taskID, AgentID: job.AgentID, Job: string(raw), At: now})
	}
	if merr != nil {
		s.log().ErrorContext(ctx, "taskboard could not wake an agent, nor keep the wake for later", "agent", job.AgentID,
			"task", taskID, "err", err, "keepErr", merr)
		return false, false
	}
	s.log().InfoContext(ctx, "taskboard wake deferred to the task-wakes job", "agent", job.AgentID, "task", taskID, "reason", sb.ErrorMessage(err))
	return true, true
}

// RunDeferredWakes is the task-wakes job: it queues the wakes that could
// not be queued when they arose, and delivers the notices that could not
// be delivered, oldest first. Each is taken with a conditional delete, so
// overlapping runs handle it once; one that still fails is kept again for
// the next run.
func (s *Service) RunDeferredWakes(ctx context.Context) (string, error) {
	due, err := s.Tasks.DeferredWakes(ctx, sb.MaxTaskPage)
	if err != nil {
		return "", err
	}
	queued, failed := 0, 0
	var errs []error
	for _, w := range due {
		ok, err := s.Tasks.TakeWake(ctx, w.ID)
		if err != nil || !ok {
			if err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := s.redo(ctx, w); err != nil {
			failed++
			errs = append(errs, err)
			if kerr := s.Tasks.DeferWake(context.WithoutCancel(ctx), w); kerr != nil {
				s.log().ErrorContext(ctx, "a deferred taskboard wake is lost", "task", w.TaskID, "agent", w.AgentID, "err", kerr)
			}
			continue
		}
		queued++
	}
	return fmt.Sprintf("%d deferred wakes queued, %d kept for the next run", queued, failed), errors.Join(errs...)
}

// redo queues a deferred wake or delivers a deferred notice. One that
// cannot be read is dropped (logged): it would fail every run.
func (s *Service) redo(ctx context.Context, w sb.DeferredWake) error {
	if w.Notice {
		var n router.Notice
		if err := json.Unmarshal([]byte(w.Job), &n); err != nil {
			s.log().ErrorContext(ctx, "a deferred taskboard notice is unreadable; dropped", "task", w.TaskID, "err", err)
			return nil
		}
		_, err := s.Notify.Deliver(ctx, n)
		return err
	}
	var job sb.WakeJob
	if err := json.Unmarshal([]byte(w.Job), &job); err != nil {
		s.log().ErrorContext(ctx, "a deferred taskboard wake is unreadable; dropped", "task", w.TaskID, "agent", w.AgentID, "err", err)
		return nil
	}
	return s.Waker.Dispatch(ctx, job)
}

// tell delivers a notice to the human and reports whether it arrived. One
// that did not (no channel reached the human) is kept for the task-wakes
// job, which tries again every minute.
func (s *Service) tell(ctx context.Context, n router.Notice, taskID string) bool {
	_, err := s.Notify.Deliver(ctx, n)
	if err == nil {
		return true
	}
	raw, kerr := json.Marshal(n)
	if kerr == nil {
		now := s.now()
		kerr = s.Tasks.DeferWake(context.WithoutCancel(ctx), sb.DeferredWake{ID: sb.NewID(now), TaskID: taskID, Job: string(raw), Notice: true, At: now})
	}
	if kerr != nil {
		s.log().ErrorContext(ctx, "taskboard could not tell the human, nor keep the notice for later", "kind", n.Kind, "task", taskID,
			"err", err, "keepErr", kerr)
	} else {
		s.log().WarnContext(ctx, "taskboard could not tell the human; the task-wakes job tries again", "kind", n.Kind, "task", taskID, "err", err)
	}
	return false
}

// record writes one message with the acting run's ids. A record that
// fails is logged with the message's ids: the step it describes happened.
func (s *Service) record(ctx context.Context, m sb.AgentMessage, run sb.RunContext) {
	m.ID = sb.NewID(m.OccurredAt)
	m.RunID, m.ParentRunID, m.RootRunID = run.RunID, run.ParentRunID, run.RootRunID
	if m.RootRunID == "" {
		m.RootRunID = m.RunID
	}
	if err := s.Messages.Record(context.WithoutCancel(ctx), m); err != nil {
		s.log().ErrorContext(ctx, "taskboard could not record an agent message", "from", m.From, "to", m.To,
			"channel", m.Channel, "task", m.TaskID, "runId", m.RunID, "err", err)
	}
}

func deliveredIf(ok bool) sb.MessageStatus {
	if ok {
		return sb.MessageDelivered
	}
	return sb.MessageFailed
}

// Caps of the texts a wake or a notice carries: the gist, not megabytes.
const (
	wakeTextCap   = 8000
	noticeTextCap = 1000
)

// AssignedText is the assignee's wake message: what to do with the task in
// our words, the creator's title and description in an untrusted frame.
func AssignedText(t sb.Task, creator string) string {
	head := fmt.Sprintf("%s gave you task %s. Its title and description are below. Do the work; when it is done, "+
		"call Taskboard task_complete with taskId %q and your result. If you cannot go on, call task_block with the "+
		"taskId and the reason; to ask %s something, use task_comment.", creator, t.ID, t.ID, creator)
	return head + "\n" + untrusted.Frame("task "+t.ID+" from "+t.Creator,
		"title: "+t.Title+"\n\n"+scrub.Cap(t.Description, wakeTextCap))
}

// FinishedText is the creator's follow-up wake message: the outcome in our
// words, the assignee's result or reason (and the comments) framed.
func FinishedText(t sb.Task, assignee string) string {
	var head, body string
	if t.Status == sb.TaskDone {
		head = fmt.Sprintf("Task %s that you gave to %s is done. Its title and result are below; carry on with what you needed it for.",
			t.ID, assignee)
		body = "result: " + scrub.Cap(t.Result, wakeTextCap)
	} else {
		head = fmt.Sprintf("Task %s that you gave to %s is blocked; its title and the reason are below, and the human has been told. "+
			"Help with task_comment if you can, or decide with the human what happens to it.", t.ID, assignee)
		body = "reason: " + scrub.Cap(t.Blocker, wakeTextCap)
	}
	// The title may carry text the creator took from others: it stays in
	// the frame like the rest.
	body = "title: " + t.Title + "\n" + body
	if n := len(t.Comments); n > 0 {
		var b strings.Builder
		for _, c := range t.Comments[max(0, n-5):] {
			b.WriteString("\n- " + c.By + ": " + scrub.Cap(c.Text, 500))
		}
		body += fmt.Sprintf("\n\ncomments (%d, the last 5):%s", n, b.String())
	}
	return head + "\n" + untrusted.Frame("task "+t.ID+" from "+t.Assignee, body)
}

// BlockedNotice tells the human that a task is blocked.
func BlockedNotice(t sb.Task, assignee, creator string) string {
	return fmt.Sprintf("Task blocked: %s cannot go on with %q (task %s from %s).\nReason: %s",
		assignee, t.Title, t.ID, creator, scrub.Cap(t.Blocker, noticeTextCap))
}

// DoneNotice tells the human that the task they gave is done.
func DoneNotice(t sb.Task, assignee string) string {
	return fmt.Sprintf("Task done: %s finished %q (task %s).\nResult: %s", assignee, t.Title, t.ID, scrub.Cap(t.Result, noticeTextCap))
}

// WatchdogNotice tells the human about a task open too long.
func WatchdogNotice(t sb.Task, assignee, creator string, now time.Time) string {
	age := now.Sub(t.CreatedAt).Truncate(time.Minute)
	return fmt.Sprintf("Task open for %s: %q (task %s), given by %s to %s, is still not done. Ask %s about it, or close it.",
		age, t.Title, t.ID, creator, assignee, assignee)
}
