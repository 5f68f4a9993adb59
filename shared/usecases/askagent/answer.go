package askagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// Ask is the payload of the machine's RunTarget Task.
type Ask struct {
	Op             string   `json:"op,omitempty"`
	Agent          string   `json:"agent"`
	From           string   `json:"from"`
	Question       string   `json:"question"`
	ParentRunID    string   `json:"parentRunId"`
	RootRunID      string   `json:"rootRunId"`
	CallPath       []string `json:"callPath"`
	ParentSpanID   string   `json:"parentSpanId,omitempty"`
	ExecutionID    string   `json:"executionId"`
	TimeoutSeconds int      `json:"timeoutSeconds"`
	// AskedAt is the execution's start: the request row's time, as a
	// record Task of the same execution writes it too.
	AskedAt time.Time `json:"askedAt,omitzero"`
}

// requestRow is the question's row, as Answer and a record Task write it.
func requestRow(executionID, from, to, question, runID, rootRunID string, askedAt time.Time) Row {
	return Row{Key: executionID + "#request", From: from, To: to, Channel: string(sb.ChannelAsk),
		Direction: string(sb.DirectionRequest), Status: string(sb.MessageDelivered), Content: question,
		RunID: runID, RootRunID: rootRunID, OccurredAt: askedAt}
}

// Reply is what RunTarget hands on: the answer and the answering run.
type Reply struct {
	Answer string `json:"answer"`
	RunID  string `json:"runId"`
}

// Agents builds an agent from the config (agentrun.Agents does): its
// model, prompt and limits. Returns ENOTFOUND for an agent not configured.
type Agents interface {
	Agent(id string) (sb.Agent, error)
}

// Answerer runs the asked agent on a question the guard let through:
// under the agent's lease (its runs never overlap; the wait for it counts
// against the timeout), after its daily budget check, with the step budget
// of an answer and the call path stamped on the run. The Recorder writes
// the question's request row, the answer's response row, the run's receipt
// and the lease's release in one store request (a run without an answer
// has its receipt alone; the machine records the question then). The
// engine audits the run's tool calls.
type Answerer struct {
	Engine   *agentrun.Engine
	Recorder *Recorder
	Agents   Agents
	Leases   sb.Leases
	Budget   interface {
		Over(ctx context.Context, agentID string) (bool, error)
	}
	MaxSteps int
	Log      *slog.Logger
	Now      func() time.Time // time.Now when nil
}

// leaseSlack keeps a crashed answer's lease a little past its deadline.
const leaseSlack = 15 * time.Second

// overtime lets the run end a little after the machine stopped waiting, so
// that the machine's own timeout (a timeout row) always comes first, not
// the run's failure (a failed row) racing it.
const overtime = 5 * time.Second

// Answer records a.Question's request row, runs a.Agent on it and
// records the answer's response row. The run is bounded by a's timeout
// plus overtime (the machine stops waiting at the timeout and records the
// timeout itself: an answer later than that is not recorded). Errors are *taskerr types: the machine
// records them as a failed answer.
func (an *Answerer) Answer(ctx context.Context, a Ask) (Reply, error) {
	if a.Agent == "" || a.From == "" || a.ParentRunID == "" || a.ExecutionID == "" || a.AskedAt.IsZero() {
		return Reply{}, &taskerr.PermanentError{Message: "ask.run: the question names no agent, asker, asking run, execution or start time"}
	}
	if !stampedPath(a.CallPath, a.From) {
		// Run without it, the answer would be an ordinary run that may ask
		// others in turn.
		return Reply{}, &taskerr.PermanentError{Message: "ask.run: the question carries no call path ending with its asker; no run was started"}
	}
	timeout := clampTimeout(a.TimeoutSeconds)
	answerBy := an.now().Add(timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout+overtime)
	defer cancel()
	ag, err := an.Agents.Agent(a.Agent)
	if err != nil {
		return Reply{}, &taskerr.PermanentError{Message: sb.ErrorMessage(err)}
	}
	if over, err := an.Budget.Over(ctx, a.Agent); err != nil {
		return Reply{}, &taskerr.TransientError{Message: "budget check: " + sb.ErrorMessage(err)}
	} else if over {
		return Reply{}, &taskerr.PermanentError{Message: fmt.Sprintf(
			"%s has used up its daily budget and answers no questions until 00:00 UTC", a.Agent)}
	}
	lease, err := an.lease(ctx, a.Agent)
	if err != nil {
		return Reply{}, err
	}
	given := false // the lease went back with the answer
	defer func() {
		if !given {
			an.release(ctx, lease)
		}
	}()

	if an.MaxSteps > 0 {
		ag.MaxSteps = an.MaxSteps
	}
	ag.SystemPrompt += "\n\nYou are answering a short question from another agent, " + a.From +
		". Answer it directly and briefly with what you know or can look up; you cannot ask other agents in turn."
	parent := &sb.RunContext{RunID: a.ParentRunID, RootRunID: a.RootRunID, AgentID: a.From}
	receipts := an.Engine.Receipts
	engine := *an.Engine
	engine.Receipts = writtenLater{receipts}
	runCtx := ctx
	if span, ok := sb.ParseSpanID(a.ParentSpanID); ok && a.RootRunID != "" {
		// The answering run hangs under the asking tool call's span.
		runCtx = sb.WithSpanParent(ctx, sb.SpanParent{Trace: sb.ChainTrace(a.RootRunID), Span: span})
	}
	res, err := engine.Start(runCtx, ag, agentrun.Start{
		Wake:     untrusted.Frame("agent "+a.From+" asks (ask_agent)", a.Question),
		Parent:   parent,
		CallPath: joinPath(a.CallPath),
	})
	if err != nil {
		an.putReceipt(ctx, receipts, res.Receipt)
		an.log().ErrorContext(ctx, "ask_agent: the answering run failed", "agent", a.Agent, "from", a.From,
			"run", res.Run.RunID, "err", err)
		if errors.Is(err, context.DeadlineExceeded) {
			return Reply{}, &taskerr.PermanentError{Message: fmt.Sprintf("%s ran out of time before answering", a.Agent)}
		}
		return Reply{}, &taskerr.PermanentError{Message: fmt.Sprintf("%s could not answer: %s", a.Agent, res.Receipt.Reason)}
	}
	answeredAt := an.now()
	if !answeredAt.Before(answerBy) {
		an.putReceipt(ctx, receipts, res.Receipt)
		return Reply{}, &taskerr.PermanentError{Message: fmt.Sprintf("%s ran out of time before answering", a.Agent)}
	}
	row := Row{Key: a.ExecutionID + "#response", From: a.Agent, To: a.From,
		Channel: string(sb.ChannelAsk), Direction: string(sb.DirectionResponse), Status: string(sb.MessageDelivered),
		Content: res.Answer, RunID: res.Run.RunID, ParentRunID: a.ParentRunID, RootRunID: a.RootRunID,
		OccurredAt: answeredAt}
	question := requestRow(a.ExecutionID, a.From, a.Agent, a.Question, a.ParentRunID, a.RootRunID, a.AskedAt)
	// The lease goes back with the rows and the receipt (the agent's next
	// run counts this one's cost against the daily budget). Its delete is
	// unconditional, so the write must end well before the lease does.
	wctx, cancelWrite := context.WithDeadline(context.WithoutCancel(ctx), lease.until.Add(-leaseSlack/3))
	defer cancelWrite()
	if err := an.Recorder.RecordAnswer(wctx, question, row, res.Receipt, lease.key); err != nil {
		an.log().ErrorContext(ctx, "ask_agent: the answer was not recorded", "agent", a.Agent, "run", res.Run.RunID, "err", err)
		an.putReceipt(ctx, receipts, res.Receipt) // the run's cost counts, answered or not
		return Reply{}, err
	}
	given = true
	an.log().InfoContext(ctx, "ask_agent: answered", "agent", a.Agent, "from", a.From, "runId", res.Run.RunID,
		"parentRunId", res.Run.ParentRunID, "rootRunId", res.Run.RootRunID, "outcome", res.Outcome, "steps", res.Steps,
		"costUsd", res.Receipt.CostUSD)
	return Reply{Answer: res.Answer, RunID: res.Run.RunID}, nil
}

// writtenLater is the answering run's receipt store: the engine's write of
// the receipt is left to Answer, which sends it with the response row.
type writtenLater struct{ sb.ReceiptStore }

func (writtenLater) Put(context.Context, sb.Receipt) error { return nil }

// putReceipt writes the receipt of a run whose answer is not recorded
// (a receipt already in, from a batch that failed halfway, is fine).
func (an *Answerer) putReceipt(ctx context.Context, receipts sb.ReceiptStore, r sb.Receipt) {
	err := receipts.Put(context.WithoutCancel(ctx), r)
	if err != nil && sb.ErrorCode(err) != sb.ECONFLICT {
		an.log().ErrorContext(ctx, "ask_agent: the answering run's receipt was not written", "agent", r.AgentID,
			"run", r.Run.RunID, "costUsd", r.CostUSD, "err", err)
	}
}

// heldLease is the agent's run lease while an answer runs.
type heldLease struct {
	agent, key, holder string
	until              time.Time
}

// lease takes the agent's run lease, waiting while another run holds it
// until ctx ends; it lasts until ctx's deadline plus leaseSlack.
func (an *Answerer) lease(ctx context.Context, agentID string) (heldLease, error) {
	key, holder := sb.AgentLease(agentID), sb.NewID(an.now())
	until := an.now().Add(leaseSlack)
	if d, ok := ctx.Deadline(); ok {
		until = d.Add(leaseSlack)
	}
	err := sb.WaitForLease(ctx, an.Leases, key, holder, sb.LeaseWait{
		Until: func() time.Time { return until },
		First: 100 * time.Millisecond, Max: time.Second, Now: an.Now,
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return heldLease{}, &taskerr.PermanentError{Message: fmt.Sprintf("%s stayed busy with another run until the question timed out", agentID)}
	case err != nil:
		return heldLease{}, &taskerr.TransientError{Message: "lease: " + sb.ErrorMessage(err)}
	}
	return heldLease{agent: agentID, key: key, holder: holder, until: until}, nil
}

// release gives l back if this run still holds it.
func (an *Answerer) release(ctx context.Context, l heldLease) {
	if err := an.Leases.Release(context.WithoutCancel(ctx), l.key, l.holder); err != nil {
		an.log().WarnContext(ctx, "ask_agent: the agent's lease was not given back; it ends by itself",
			"agent", l.agent, "err", err)
	}
}

func (an *Answerer) now() time.Time {
	if an.Now != nil {
		return an.Now()
	}
	return time.Now()
}

func (an *Answerer) log() *slog.Logger {
	if an.Log != nil {
		return an.Log
	}
	return slog.Default()
}
