// Package agentrun runs an agent: system prompt + wake message + tools →
// model → tool calls through the executor (staging and audit) → final answer,
// within a step budget and a loop guard, and writes one receipt per run.
package agentrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Invoker runs one tool call (tools.Executor).
type Invoker interface {
	Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope
	Specs(agentID string) []sb.ToolSpec
}

// RunTokens signs a run's context until expires (runtoken.Keys): the
// token is the only form in which the tool API believes a run from
// outside the engine.
type RunTokens interface {
	Issue(run sb.RunContext, expires time.Time) (string, error)
}

// Engine runs agents. With Tokens set, every run gets a token that ends
// with the run's deadline; its tool calls carry it (sb.RunToken).
type Engine struct {
	Tools    Invoker
	Receipts sb.ReceiptStore
	Tokens   RunTokens
	// Telemetry records the run's spans (nil: none).
	Telemetry sb.Telemetry
	// Chain is asked before every model call whether the run's chain may
	// go on (stopped by the operator, over its chain budget); nil: always.
	Chain ChainGate
	Now   func() time.Time
}

// ChainGate says whether the chain of run may take another step: a reason
// (control.ReasonStopped, control.ReasonChainBudget) when not, "" when it
// may. running is the run's own cost so far (it has no receipt yet).
type ChainGate interface {
	Check(ctx context.Context, run sb.RunContext, running float64) (string, error)
}

// tokenTTL is a run token's life when the run has no deadline; the issuer
// caps it as well.
const tokenTTL = 15 * time.Minute

// Result is the outcome of one run.
type Result struct {
	Run     sb.RunContext `json:"run"`
	Answer  string        `json:"answer"`
	Outcome string        `json:"outcome"` // answered | step_budget | loop_guard | error | chain_stopped | chain_budget
	Steps   int           `json:"steps"`
	Receipt sb.Receipt    `json:"receipt"`
	// Calls lists the tool calls the run made, in order, with their answers
	// (the reply path looks here to avoid posting twice).
	Calls []Call `json:"calls,omitempty"`
	// ModelCalls counts the model attempts of the run, retries and the time
	// spent waiting between them (the providers retry and count).
	ModelCalls sb.ModelCalls `json:"modelCalls"`
	// RunToken is the run's token ("" without Engine.Tokens). Never in
	// the JSON: it stays with the engine and the run's tool calls.
	RunToken string `json:"-"`
}

// Call is one tool call of a run and its answer.
type Call struct {
	Tool     string          `json:"tool"`
	Action   string          `json:"action"`
	Args     json.RawMessage `json:"args,omitempty"`
	Envelope sb.Envelope     `json:"envelope"`
}

// loopLimit: the loopLimit-th identical call (tool, action, args) in one run
// is not executed; the loop guard ends the run instead.
const loopLimit = 3

// Start is what one run begins with.
type Start struct {
	// Wake is the first user message, already framed as untrusted where it
	// carries others' text.
	Wake string
	// Parent is nil for a run a human or schedule started.
	Parent *sb.RunContext
	// ReplyTo is where a run woken from a chat answers; every tool call of
	// the run carries it (a staged approval keeps it for the follow-up).
	ReplyTo *sb.ReplyTo
	// CallPath, when set, makes this a run that answers another agent's
	// question (see sb.RunContext.CallPath): it is stamped on the run and
	// the run is not offered ask_agent.
	CallPath string
	// Replay names the wake this run works on, the same for every attempt
	// of it (the job's wake claim); "" for runs no claim guards. The run's
	// tool calls carry it with their place in the run (sb.ToolCall.Replay,
	// CallIndex), so that an attempt after a crash does not repeat what
	// the dead one already did.
	Replay string
}

// Run executes one run of agent on wake (already framed as untrusted where it
// carries others' text). parent is nil for a run a human or schedule started.
// The receipt is written even when the model fails.
func (e *Engine) Run(ctx context.Context, agent sb.Agent, wake string, parent *sb.RunContext) (Result, error) {
	return e.Start(ctx, agent, Start{Wake: wake, Parent: parent})
}

// Start executes one run of agent as st says; see Run.
func (e *Engine) Start(ctx context.Context, agent sb.Agent, st Start) (Result, error) {
	wake, parent := st.Wake, st.Parent
	now := e.now()
	res := Result{Run: sb.NewRun(agent.ID, parent, now)}
	res.Run.CallPath = st.CallPath
	rec := sb.Receipt{Run: res.Run, AgentID: agent.ID, Provider: agent.Provider, Model: agent.ModelName, StartedAt: now.UTC()}
	maxSteps := agent.MaxSteps
	if maxSteps <= 0 {
		maxSteps = 8
	}
	req := sb.ModelRequest{System: agent.SystemPrompt, Tools: offered(e.Tools.Specs(agent.ID), res.Run),
		Messages: []sb.ModelMessage{{Role: "user", Content: wake}}}
	ctx, res.RunToken = e.issueToken(ctx, res.Run, now)
	seen := map[string]int{}
	index := 0 // the next tool call's place in the run
	var runErr error
	var attempts sb.ModelCallCounter
	ctx = sb.WithModelCallCounter(ctx, &attempts)
	spans := e.startSpans(ctx, agent, res.Run, now)

loop:
	for {
		if res.Steps >= maxSteps {
			res.Outcome = "step_budget"
			res.Answer = fmt.Sprintf("I stopped after %d steps without finishing; please narrow the request.", maxSteps)
			break
		}
		if reason := e.chainStop(ctx, res.Run, agent.Pricing.Cost(rec.TokensIn, rec.TokensOut)); reason != "" {
			res.Outcome, rec.Reason = reason, reason
			res.Answer = stopAnswer(reason)
			break
		}
		res.Steps++
		before, began := attempts.Calls(), spans.clock()
		resp, err := agent.Model.Complete(ctx, req)
		calls := attempts.Calls()
		calls.Retries -= before.Retries
		calls.Waited -= before.Waited
		spans.chat(ctx, res.Steps, began, req, resp, err, calls)
		if err != nil {
			res.Outcome, rec.Reason = "error", modelReason(err)
			runErr = fmt.Errorf("agentrun %s step %d: %w", agent.ID, res.Steps, err)
			break
		}
		rec.TokensIn += resp.TokensIn
		rec.TokensOut += resp.TokensOut
		if len(resp.ToolCalls) == 0 {
			res.Outcome, res.Answer = "answered", resp.Text
			break
		}
		req.Messages = append(req.Messages, sb.ModelMessage{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls})
		for _, tc := range resp.ToolCalls {
			key := tc.Tool + "." + tc.Action + " " + string(tc.Args)
			if seen[key]++; seen[key] >= loopLimit {
				res.Outcome = "loop_guard"
				res.Answer = fmt.Sprintf("I stopped because I kept repeating %s.%s with the same arguments.", tc.Tool, tc.Action)
				break loop
			}
			began := spans.clock()
			callCtx, audit := spans.toolContext(ctx, index)
			env := e.Tools.Invoke(callCtx, sb.ToolCall{AgentID: agent.ID, Tool: tc.Tool, Action: tc.Action,
				Args: tc.Args, Run: res.Run, Origin: sb.OriginAgent, ReplyTo: st.ReplyTo.Clone(),
				Replay: st.Replay, CallIndex: index})
			spans.tool(ctx, index, tc, began, env, audit)
			index++
			args := tc.Args
			if !json.Valid(args) {
				args = nil // a model's broken JSON must not break the result's own encoding
			}
			res.Calls = append(res.Calls, Call{Tool: tc.Tool, Action: tc.Action, Args: args, Envelope: env})
			body, _ := json.Marshal(env)
			req.Messages = append(req.Messages, sb.ModelMessage{Role: "tool", ToolCallID: tc.ID, Content: string(body)})
		}
	}

	res.ModelCalls = attempts.Calls()
	if res.ModelCalls.Retries > 0 {
		slog.InfoContext(ctx, "model calls were retried", "agent", agent.ID, "run", res.Run.RunID,
			"attempts", res.ModelCalls.Attempts, "retries", res.ModelCalls.Retries, "waited", res.ModelCalls.Waited, "outcome", res.Outcome)
	}
	rec.Steps, rec.Outcome = res.Steps, res.Outcome
	rec.Duration = e.now().Sub(now)
	rec.CostUSD = agent.Pricing.Cost(rec.TokensIn, rec.TokensOut)
	res.Receipt = rec
	spans.end(ctx, rec, now.Add(rec.Duration))
	if err := e.Receipts.Put(context.WithoutCancel(ctx), rec); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("agentrun %s: receipt: run %s: %w", agent.ID, rec.Run.RunID, err))
	}
	return res, runErr
}

// chainStop asks the chain gate before a model call. A gate that cannot
// answer (the store is unreachable) lets the run go on: a stop or a budget
// is an operator's brake, and an outage must not stop every run.
func (e *Engine) chainStop(ctx context.Context, run sb.RunContext, running float64) string {
	if e.Chain == nil {
		return ""
	}
	reason, err := e.Chain.Check(ctx, run, running)
	if err != nil {
		slog.WarnContext(ctx, "the chain gate could not be asked; the run goes on", "agent", run.AgentID, "run", run.RunID, "err", err)
		return ""
	}
	return reason
}

// Outcomes of a run that its chain's gate ended (the receipt's reason too).
const (
	OutcomeChainStopped = "chain_stopped"
	OutcomeChainBudget  = "chain_budget"
)

// stopAnswer is what a run the chain gate ended says where it was woken.
func stopAnswer(reason string) string {
	switch reason {
	case OutcomeChainBudget:
		return "I stopped: this chain of work has used up its budget (chainBudgetUsd)."
	default:
		return "I stopped: the operator stopped this chain of work."
	}
}

// issueToken signs run until its deadline (ctx's, else tokenTTL from now)
// and puts the token on ctx for the run's tool calls. A token that cannot
// be issued costs the run nothing but callers outside the engine.
func (e *Engine) issueToken(ctx context.Context, run sb.RunContext, now time.Time) (context.Context, string) {
	if e.Tokens == nil {
		return ctx, ""
	}
	expires := now.Add(tokenTTL)
	if d, ok := ctx.Deadline(); ok {
		expires = d
	}
	tok, err := e.Tokens.Issue(run, expires)
	if err != nil {
		slog.WarnContext(ctx, "run token not issued", "agent", run.AgentID, "run", run.RunID, "err", err)
		return ctx, ""
	}
	return sb.WithRunToken(ctx, tok), tok
}

// offered is what the model of run may call: an answering run asks no one
// in turn, so it is not shown ask_agent (and is refused should it call it).
func offered(specs []sb.ToolSpec, run sb.RunContext) []sb.ToolSpec {
	if !run.Answering() {
		return specs
	}
	out := make([]sb.ToolSpec, 0, len(specs))
	for _, s := range specs {
		if s.Name != sb.AskAgentTool {
			out = append(out, s)
		}
	}
	return out
}

// modelReason is the receipt's reason for a model failure: unavailable for
// what may pass (unavailable, rate limited, out of time), else the error
// code (a refusal: unauthorized, invalid, …).
func modelReason(err error) string {
	code := sb.ErrorCode(err)
	if code == sb.EUNAVAILABLE || code == sb.ERATELIMITED || errors.Is(err, context.DeadlineExceeded) {
		return "model_unavailable"
	}
	return "model_" + code
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}
