package askagent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Asker is what the guard knows of an agent: whether it exists, whether
// ask_agent is enabled for it, and whom it may ask (empty = every other
// agent).
type Asker struct {
	Exists  bool
	Enabled bool
	Allowed []string
}

// Guard refuses a question the rules forbid, before anything is run, and
// records every question it refuses (the answering Task records the
// questions it lets through). Its refusals are *taskerr.DeniedError, which
// the machine catches by name; the Reason is said to the asking agent as
// it is.
type Guard struct {
	Askers   Askers
	Recorder *Recorder
	// Control says whether the asked agent is paused and whether the
	// asking chain may take another hop (control.Control); nil: always.
	Control Control
}

// Control is the operator's switches as the guard asks them.
type Control interface {
	Paused(ctx context.Context, agentID string) (bool, error)
	Check(ctx context.Context, run sb.RunContext, running float64) (string, error)
}

// Askers say what an agent may ask.
type Askers interface {
	Asker(id string) Asker
}

// ConfigAskers are the configured agents with their ask_agent blocks.
type ConfigAskers struct{ Config *config.Config }

// Asker implements Askers.
func (c ConfigAskers) Asker(id string) Asker {
	ag, ok := c.Config.Agent(id)
	if !ok {
		return Asker{}
	}
	as := Asker{Exists: true, Enabled: ag.Tools.AskAgent != nil}
	if as.Enabled {
		as.Allowed = ag.Tools.AskAgent.Agents
	}
	return as
}

// Admit checks q and records a refused one as its denied request row. It
// answers as Check does, or with the Recorder's error when the row could
// not be written (the machine retries a *taskerr.TransientError; the retry
// writes the same row again).
func (g *Guard) Admit(ctx context.Context, q Question) error {
	if q.ExecutionID == "" || q.AskedAt.IsZero() {
		return &taskerr.PermanentError{Message: "ask.guard: the question carries no execution id or start time"}
	}
	verdict := g.Check(ctx, q)
	var denied *taskerr.DeniedError
	if !errors.As(verdict, &denied) {
		return verdict
	}
	row := requestRow(q.ExecutionID, q.From, q.To, q.Question, q.RunID, q.RootRunID, q.AskedAt)
	row.Status, row.Reason = string(sb.MessageDenied), denied.Reason
	if err := g.Recorder.Record(ctx, row); err != nil {
		return err
	}
	return verdict
}

// Check answers nil when q may be asked, a *taskerr.DeniedError when not
// (also when q carries no call path that ends with the asker: the cycle
// check never takes a missing path for an empty one), and a
// *taskerr.PermanentError for a payload that names no asker, target or run.
func (g *Guard) Check(ctx context.Context, q Question) error {
	deny := func(format string, a ...any) error { return &taskerr.DeniedError{Reason: fmt.Sprintf(format, a...)} }
	switch {
	case q.From == "" || q.To == "" || q.RunID == "":
		return &taskerr.PermanentError{Message: "ask.guard: the question names no asker, target or run"}
	case !stampedPath(q.CallPath, q.From):
		return deny("this question carries no call path from %s's run, so whether it goes round in a circle cannot be checked; it was not asked", q.From)
	case q.To == q.From:
		return deny("you cannot ask yourself; answer from what you know or ask the human")
	case slices.Contains(q.CallPath, q.To):
		return deny("%s is already in this chain of questions (%s), so asking it would go round in a circle; answer with what you know",
			q.To, strings.Join(q.CallPath, " → "))
	case len(q.CallPath) > 1:
		return deny("you are answering a question from %s and cannot ask others in turn; answer with what you know",
			q.CallPath[len(q.CallPath)-2])
	}
	from, to := g.Askers.Asker(q.From), g.Askers.Asker(q.To)
	switch {
	case !from.Enabled:
		return deny("ask_agent is not enabled for you; the operator can add an ask_agent block to your tools")
	case !to.Exists:
		return deny("there is no agent %q; check the id", q.To)
	case len(from.Allowed) > 0 && !slices.Contains(from.Allowed, q.To):
		return deny("you may not ask %s; you may ask %s", q.To, strings.Join(from.Allowed, ", "))
	}
	return g.operator(ctx, q, deny)
}

// operator refuses a question to a paused agent, or in a chain the
// operator stopped or that has used up its budget.
func (g *Guard) operator(ctx context.Context, q Question, deny func(string, ...any) error) error {
	if g.Control == nil {
		return nil
	}
	// Both switches are read at once: the question waits for the slower
	// read, not for the two one after the other. A pause is said first.
	var paused bool
	var pausedErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		paused, pausedErr = g.Control.Paused(ctx, q.To)
	}()
	reason, err := g.Control.Check(ctx, sb.RunContext{AgentID: q.To, RunID: q.RunID, RootRunID: q.RootRunID}, 0)
	<-read
	if err = errors.Join(pausedErr, err); err != nil {
		return &taskerr.TransientError{Message: "ask.guard: " + sb.ErrorMessage(err)}
	}
	if paused {
		return deny("agent_paused: %s is paused by the operator and answers no questions until it is resumed; carry on without it", q.To)
	}
	switch reason {
	case "":
		return nil
	case "chain_budget":
		return deny("chain_budget: this chain of work has used up its budget (chainBudgetUsd); stop and tell the human what is done")
	default:
		return deny("chain_stopped: the operator stopped this chain of work; stop now")
	}
}
