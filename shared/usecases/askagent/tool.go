package askagent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// Machine runs the ask-agent state machine and waits for its output
// (shared/adapters/sfntoken.SyncMachine). It returns EUNAVAILABLE when the
// service cannot be reached or the execution did not succeed, and
// ENOTFOUND when no machine is configured.
type Machine interface {
	StartSync(ctx context.Context, input string) (output string, err error)
}

// Tool is ask_agent. Timeout is the configured wait for an answer.
type Tool struct {
	Machine Machine
	Timeout time.Duration
	Log     *slog.Logger
}

var _ sb.Tool = (*Tool)(nil)

// askArgs declares the arguments of ask once: the schema offered to models
// comes from these tags and Invoke enforces the same limits.
type askArgs struct {
	Agent    *string `json:"agent" required:"true" schema:"minLength=1,maxLength=64" doc:"the id of the colleague (another agent) to ask"`
	Question *string `json:"question" required:"true" schema:"minLength=1,maxLength=4000" doc:"one short, self-contained question"`
}

// Spec implements switchboard.Tool.
func (t *Tool) Spec() sb.ToolSpec {
	return sb.ToolSpec{
		Name: sb.AskAgentTool,
		Description: "Ask a colleague (another agent) a short question and get the answer back in this run. " +
			"For short questions only, not to hand off work. The colleague cannot ask anyone in turn.",
		Actions: []sb.ActionSpec{{
			Name:        "ask",
			Description: "Ask one agent one short question; answers with its reply, or says why it was not asked or did not answer.",
			Parameters:  toolargs.Schema(askArgs{}, toolargs.Vocab{}),
		}},
	}
}

const askOp = "ask_agent.ask"

// Invoke implements switchboard.Tool.
func (t *Tool) Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope {
	if call.Action != "ask" {
		return sb.FailErr(toolargs.UnknownAction(askOp, sb.AskAgentTool, call.Action, []string{"ask"}))
	}
	const needs = `ask_agent.ask needs {"agent": "<agent id>", "question": "…"}`
	var args askArgs
	if err := (toolargs.Args{Op: askOp, Action: "ask"}).Decode(call.Args, &args); err != nil {
		return sb.Fail(needs + "; " + sb.ErrorMessage(err))
	}
	if args.Agent == nil || strings.TrimSpace(*args.Agent) == "" || args.Question == nil || strings.TrimSpace(*args.Question) == "" {
		return sb.Fail(needs)
	}
	if call.Run.RunID == "" {
		return sb.Fail("ask_agent works only inside an agent run: the answer comes back to the run that asked")
	}
	if t.Machine == nil {
		return sb.FailErr(sb.E(askOp, sb.EUNAVAILABLE, "ask_agent is not set up on this instance (no state machine); answer without asking"))
	}
	root := call.Run.RootRunID
	if root == "" {
		root = call.Run.RunID
	}
	timeout := t.Timeout
	if timeout < time.Second {
		timeout = defaultTimeout
	}
	secs := int(timeout / time.Second)
	q := Question{From: call.AgentID, To: strings.TrimSpace(*args.Agent), Question: *args.Question,
		RunID: call.Run.RunID, RootRunID: root, CallPath: callPathOf(call.Run, call.AgentID), TimeoutSeconds: secs}
	if p, ok := sb.SpanParentFrom(ctx); ok {
		q.ParentSpanID = p.Span.String()
	}
	in, _ := json.Marshal(q)
	// The machine ends the wait itself; this bound only catches a machine
	// that never comes back.
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	raw, err := t.Machine.StartSync(ctx, string(in))
	if err != nil {
		t.log().ErrorContext(ctx, "ask_agent: the state machine did not answer", "agent", call.AgentID, "to", q.To,
			"run", call.Run.RunID, "err", err)
		return sb.FailErr(sb.E(askOp, sb.EUNAVAILABLE, fmt.Sprintf(
			"the question to %s could not be delivered right now; carry on without the answer or try once more later", q.To)))
	}
	var out Outcome
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.log().ErrorContext(ctx, "ask_agent: unreadable machine output", "err", err)
		return sb.FailErr(sb.E(askOp, sb.EINTERNAL, "ask_agent got an unreadable answer; the operator can find details in the logs"))
	}
	switch out.Status {
	case "delivered":
		return sb.OK(map[string]any{"agent": q.To, "answer": out.Answer, "runId": out.RunID})
	case "denied":
		env := sb.Fail(fmt.Sprintf("%s was not asked: %s", q.To, out.Reason))
		env.Data = map[string]any{"agent": q.To, "code": sb.EFORBIDDEN}
		return env
	case "timeout":
		env := sb.Fail(fmt.Sprintf("%s gave no answer within %d seconds; carry on without it, or tell the human what is missing", q.To, secs))
		env.Data = map[string]any{"agent": q.To, "code": sb.EUNAVAILABLE}
		return env
	}
	reason := out.Reason
	if reason == "" || strings.HasSuffix(reason, "Error") || strings.HasPrefix(reason, "States.") || strings.HasPrefix(reason, "Lambda.") {
		// An error name from the machine says nothing to a model; the
		// details are in the logs and the failed row.
		reason = "its run failed"
	}
	env := sb.Fail(fmt.Sprintf("%s could not answer (%s); carry on without the answer, or tell the human what is missing", q.To, reason))
	env.Data = map[string]any{"agent": q.To, "code": sb.EUNAVAILABLE}
	return env
}

func (t *Tool) log() *slog.Logger {
	if t.Log != nil {
		return t.Log
	}
	return slog.Default()
}
