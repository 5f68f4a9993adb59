package taskboard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The bounds of task_create, when Limits leaves them zero. Each wake is a
// run of another agent, so a run that creates tasks in a loop, two agents
// that hand a task back and forth, or an agent that spends others' money
// would otherwise run the board without end (an attack run once made
// 500 runs in 15 s and a chain 25 hand-overs deep).
const (
	// DefaultPerRun is how many tasks one run may create: enough to split
	// a piece of work between colleagues, not a fan-out.
	DefaultPerRun = 5
	// DefaultPerHour is how many tasks one agent may create per clock hour
	// (UTC), across all its runs.
	DefaultPerHour = 30
	// DefaultHops is how deep a chain of hand-overs may go: a task created
	// by a run that no task woke is one hop; a task created by the run its
	// task woke is one more, up to this many.
	DefaultHops = 3
)

// Reasons a task_create or a task's wake is refused; a denied row's reason
// starts with one ("run_limit: …").
const (
	ReasonRunLimit    = "run_limit"     // the run created DefaultPerRun tasks already
	ReasonHourLimit   = "hour_limit"    // the agent created DefaultPerHour tasks this hour
	ReasonHopLimit    = "hop_limit"     // the chain is DefaultHops hand-overs deep
	ReasonAnswering   = "answering_run" // the run answers an ask_agent question
	ReasonBudget      = "payer_budget"  // the agent that pays for the task's runs has no budget left
	ReasonChainBudget = "chain_budget"  // the chain has used up its chainBudgetUsd
	ReasonStopped     = "chain_stopped" // the operator stopped the chain
	// ReasonNoTaskboard: the assignee takes no tasks (it has no Taskboard).
	ReasonNoTaskboard = "no_taskboard"
)

// Limits bound task_create; a zero field takes its default.
type Limits struct {
	PerRun  int // tasks per run (DefaultPerRun)
	PerHour int // tasks per agent and clock hour (DefaultPerHour)
	Hops    int // hand-overs along a chain (DefaultHops)
}

func (s *Service) limits() Limits {
	l := s.Limits
	if l.PerRun <= 0 {
		l.PerRun = DefaultPerRun
	}
	if l.PerHour <= 0 {
		l.PerHour = DefaultPerHour
	}
	if l.Hops <= 0 {
		l.Hops = DefaultHops
	}
	return l
}

// Budget says whether an agent has used up its daily budget
// (*agentrun.Budget; it tells the human once a day).
type Budget interface {
	Over(ctx context.Context, agentID string) (bool, error)
}

// ChainGate says whether a chain may take another hop (control.Control's
// Check): a reason ("chain_stopped", "chain_budget") when not.
type ChainGate interface {
	Check(ctx context.Context, run sb.RunContext, running float64) (string, error)
}

// Refused is a task_create, or a task's wake, that a bound refused: the
// error its caller sees (EFORBIDDEN or ERATELIMITED, saying what to do) and
// the reason its denied row records.
type Refused struct {
	Reason string // one of the Reason constants
	Limit  int    // the bound, where there is a number
	Err    *sb.Error
}

func (r *Refused) Error() string { return r.Err.Error() }
func (r *Refused) Unwrap() error { return r.Err }

// RefusedFor is the reason err refused a task or a wake; "" when err is
// no *Refused.
func RefusedFor(err error) string {
	var r *Refused
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}

func refuse(reason, code string, limit int, msg string) *Refused {
	return &Refused{Reason: reason, Limit: limit, Err: sb.E("taskboard.create", code, msg)}
}

// payer is who the runs of a task created in run are charged to: the
// agent that pays for run (run.PaidBy), else the creating agent itself.
// The human's tasks are the assignee's to pay, as any request of the human.
func payer(actor string, run sb.RunContext) string {
	if !isAgent(actor) {
		return run.PaidBy
	}
	if run.PaidBy != "" {
		return run.PaidBy
	}
	return actor
}

// paidBy is the PaidBy a run of agent gets when p pays for it: empty when
// the agent pays for itself.
func paidBy(p, agent string) string {
	if p == agent {
		return ""
	}
	return p
}

// admit checks a task_create by actor in call.Run before anything is
// written: an answering run creates none; a task that wakes another agent
// stays within the hop limit and needs its payer's budget. It returns the
// new task's hop count and its payer.
func (s *Service) admit(ctx context.Context, call sb.ToolCall, actor, assignee string) (hops int, pays string, err error) {
	run, lim := call.Run, s.limits()
	hops, pays = run.TaskHops+1, payer(actor, run)
	if isAgent(actor) && run.Answering() {
		callers := run.Callers()
		asker := s.name(callers[len(callers)-1])
		return 0, "", refuse(ReasonAnswering, sb.EFORBIDDEN, 0, fmt.Sprintf(
			"this run answers a question from %s (ask_agent), and an answer cannot hand work on; answer with what you know "+
				"and say what should be done instead: %s can create the task", asker, asker))
	}
	if actor == assignee {
		return hops, pays, nil // a note to itself wakes nobody
	}
	if hops > lim.Hops {
		return 0, "", refuse(ReasonHopLimit, sb.EFORBIDDEN, lim.Hops, fmt.Sprintf(
			"this run works on a task that was handed on %d times already (task → task → …), the most a chain may; "+
				"do not hand it on: do the work yourself, or finish your task (task_complete or task_block) with what you have", run.TaskHops))
	}
	if pays != "" && isAgent(actor) && s.Budget != nil {
		over, err := s.Budget.Over(ctx, pays)
		if err != nil {
			return 0, "", sb.Wrap("taskboard.create", sb.EUNAVAILABLE, "whether the budget allows the task could not be checked; try again in a moment", err)
		}
		if over {
			msg := "your daily budget is used up, and the runs a task causes are charged to it, so you create no tasks until 00:00 UTC; " +
				"tell the human if it is urgent"
			if pays != actor {
				msg = fmt.Sprintf("this work is paid for by %s, whose daily budget is used up, and the runs a task causes are charged to it; "+
					"create no tasks until 00:00 UTC, tell the human if it is urgent", s.name(pays))
			}
			return 0, "", refuse(ReasonBudget, sb.EFORBIDDEN, 0, msg)
		}
	}
	return hops, pays, nil
}

// count counts one task_create of an agent against its run's and its
// hour's bound (conditional counter writes, safe under concurrent calls).
// The human's tasks are not counted. undo takes the counts back when the
// task is not created after all.
func (s *Service) count(ctx context.Context, call sb.ToolCall, actor string) (undo func(), err error) {
	undo = func() {}
	if !isAgent(actor) {
		return undo, nil
	}
	lim, now := s.limits(), s.now()
	hour := now.UTC().Truncate(time.Hour)
	runKey := "tasks-created#run#" + call.Run.RunID
	hourKey := "tasks-created#" + actor + "#" + hour.Format("2006010215")
	// A run lasts minutes (a Lambda at most 15); its counter an hour.
	_, ok, err := s.Counters.Incr(ctx, runKey, lim.PerRun, now.Add(time.Hour))
	if err != nil {
		return undo, err
	}
	if !ok {
		return undo, refuse(ReasonRunLimit, sb.ERATELIMITED, lim.PerRun, fmt.Sprintf(
			"this run has created %d tasks, the most one run may; do not create more in this run: add the rest to a task "+
				"you created (task_comment), do it yourself, or tell the human", lim.PerRun))
	}
	back := func(keys ...string) {
		for _, k := range keys {
			if err := s.Counters.Decr(context.WithoutCancel(ctx), k); err != nil {
				s.log().WarnContext(ctx, "taskboard could not take a count back", "key", k, "err", err)
			}
		}
	}
	_, ok, err = s.Counters.Incr(ctx, hourKey, lim.PerHour, hour.Add(2*time.Hour))
	if err != nil || !ok {
		back(runKey) // this call did not create a task
		if err != nil {
			return undo, err
		}
		next := hour.Add(time.Hour)
		r := refuse(ReasonHourLimit, sb.ERATELIMITED, lim.PerHour, fmt.Sprintf(
			"you have created %d tasks this hour, the most an agent may; the next can be created from %s UTC: until then "+
				"do the work yourself or add it to an open task with task_comment", lim.PerHour, next.Format("15:04")))
		r.Err.RetryAfter = next.Sub(now)
		return undo, r
	}
	return func() { back(runKey, hourKey) }, nil
}

// refusedText caps what a denied row keeps of a refused task's description:
// a storm of refusals must not write a storm of search rows.
const refusedTextCap = 1000

// recordRefusal writes the denied row of a refused hand-over from actor to
// assignee (agents only: the human's calls are no agent messages).
func (s *Service) recordRefusal(ctx context.Context, call sb.ToolCall, actor, assignee, title, description string, r *Refused) {
	if !isAgent(actor) || actor == assignee {
		return
	}
	s.record(ctx, sb.AgentMessage{From: actor, To: assignee, Channel: sb.ChannelTask, Direction: sb.DirectionRequest,
		Content: title + "\n\n" + scrub.Cap(description, refusedTextCap), Status: sb.MessageDenied,
		Reason: r.Reason + ": " + r.Err.Message, OccurredAt: s.now()}, call.Run)
}

// Admits is AdmitWake for the agent run: a refused wake is false and no
// error.
func (s *Service) Admits(ctx context.Context, job sb.WakeJob) (bool, error) {
	err := s.AdmitWake(ctx, job)
	if RefusedFor(err) != "" {
		return false, nil
	}
	return err == nil, err
}

// AdmitWake is the gate the agent-worker asks before a task's wake runs
// (job.Source == JobSource): the wake is refused when it is deeper than
// the hop limit (a wake kept from before, or a run context from elsewhere)
// or when the agent that pays for it (job.Parent.PaidBy) has used up its
// daily budget. A refused wake is a denied row and a *Refused; other wakes
// are nil. Any other error means the check could not be made (retry).
func (s *Service) AdmitWake(ctx context.Context, job sb.WakeJob) error {
	if job.Source != JobSource || job.Parent == nil {
		return nil
	}
	p, lim := *job.Parent, s.limits()
	var r *Refused
	switch {
	case p.TaskHops > lim.Hops:
		r = refuse(ReasonHopLimit, sb.EFORBIDDEN, lim.Hops, fmt.Sprintf(
			"the wake of %s is %d task hand-overs deep, more than a chain may go (%d)", job.AgentID, p.TaskHops, lim.Hops))
	case p.PaidBy != "" && p.PaidBy != job.AgentID && s.Budget != nil:
		over, err := s.Budget.Over(ctx, p.PaidBy)
		if err != nil {
			return fmt.Errorf("taskboard: budget of %s: %w", p.PaidBy, err)
		}
		if over {
			r = refuse(ReasonBudget, sb.EFORBIDDEN, 0, fmt.Sprintf(
				"the wake of %s is paid for by %s, whose daily budget is used up; it does not run", job.AgentID, p.PaidBy))
		}
	}
	if r == nil && s.Chain != nil {
		reason, err := s.Chain.Check(ctx, sb.RunContext{AgentID: job.AgentID, RunID: p.RunID, RootRunID: p.RootRunID}, 0)
		if err != nil {
			return fmt.Errorf("taskboard: chain gate: %w", err)
		}
		switch reason {
		case "":
		case ReasonChainBudget:
			r = refuse(reason, sb.EFORBIDDEN, 0, fmt.Sprintf("the wake of %s belongs to a chain that has used up its budget (chainBudgetUsd); it does not run", job.AgentID))
		default:
			r = refuse(reason, sb.EFORBIDDEN, 0, fmt.Sprintf("the wake of %s belongs to a chain the operator stopped; it does not run", job.AgentID))
		}
	}
	if r == nil {
		return nil
	}
	s.log().WarnContext(ctx, "taskboard wake refused", "agent", job.AgentID, "from", p.AgentID, "reason", r.Reason, "runId", p.RunID)
	if isAgent(p.AgentID) && p.AgentID != job.AgentID {
		s.record(ctx, sb.AgentMessage{From: p.AgentID, To: job.AgentID, Channel: sb.ChannelTask, Direction: sb.DirectionRequest,
			Content: scrub.Cap(job.Text, refusedTextCap), Status: sb.MessageDenied, Reason: r.Reason + ": " + r.Err.Message,
			OccurredAt: s.now()}, p)
	}
	return r
}
