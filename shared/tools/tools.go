// Package tools runs tool actions: it checks that the agent may use the tool,
// checks the arguments against the action's declared schema, asks the staging
// policy, runs the tool, and writes one audit entry per call, whatever the
// outcome. Model-issued calls and POST /tools/invoke share this path.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
)

// Scrubber masks secrets (shared/platform/scrub satisfies it).
type Scrubber interface {
	JSON(raw []byte) []byte
	String(s string) string
}

// Preflighter is implemented by tools that can tell, before the staging
// policy sees a call, that it can only fail: arguments the tool refuses, a
// path that leaves the allowed place, a workspace file that does not exist.
// The executor calls Preflight after the schema check and before the policy,
// so that nobody is asked to approve a call that cannot succeed. Preflight
// must change nothing; it may read (an existence check). It returns nil
// when it cannot tell (a server unreachable): Invoke checks again anyway.
type Preflighter interface {
	Preflight(ctx context.Context, call sb.ToolCall) error
}

// Permits tells whether an agent may use a tool (its config has the block).
type Permits func(agentID, tool string) bool

// Executor is the one path from a tool call to its audited outcome.
type Executor struct {
	tools   map[string]sb.Tool
	specs   map[string]sb.ToolSpec
	schemas map[string]*actionSchema // "Tool.action"
	aliases map[string]string        // "Tool.alias" → action
	policy  *staging.Policy
	audit   sb.AuditStore
	scrub   Scrubber
	permits Permits
	log     *slog.Logger
	now     func() time.Time
	stage   Stager
	// replays keeps the outcomes of a wake's non-idempotent calls for its
	// later attempts (nil: nothing is recorded or replayed).
	replays    sb.KV
	replayable map[string]bool // "Tool.action"
}

// Stager keeps an action that needs a human's approval and asks for it
// (approvals.Service). It answers the pending_approval envelope.
type Stager interface {
	Stage(ctx context.Context, call sb.ToolCall, reason string) (sb.Envelope, error)
}

// Allower is implemented by a Stager that keeps allowances
// (approvals.Service): Allowed reports the active allowance that lets a
// call run without a new approval.
type Allower interface {
	// err is set when the allowances could not be read (the store is
	// unavailable): staging the call would fail the same way.
	Allowed(ctx context.Context, call sb.ToolCall) (sb.Allowance, bool, error)
}

// Fingerprinter is implemented by tools whose staged calls act on a target
// that may change while a human decides: Fingerprint describes the target
// now (a file's etag, a room's id) in words a person and a model can read,
// "" when the action has none worth checking. It is taken once when a call
// is staged and once more, just before the approved call runs; a different
// answer, or ENOTFOUND (the target is gone), refuses the call. Any other
// error means it cannot tell, and the call runs (the tool checks anyway).
type Fingerprinter interface {
	Fingerprint(ctx context.Context, call sb.ToolCall) (string, error)
}

// SetStager connects the approvals flow. Without one, approve answers a
// pending_approval envelope and nothing is kept. (A setter, because the
// approvals flow needs the Executor to run what was approved.)
func (x *Executor) SetStager(s Stager) { x.stage = s }

// Options configure an Executor; all fields but Now, Replays and
// ReplayActions are required.
type Options struct {
	Tools   []sb.Tool
	Policy  *staging.Policy
	Audit   sb.AuditStore
	Scrub   Scrubber
	Permits Permits
	Log     *slog.Logger
	Now     func() time.Time
	// Replays keeps the outcomes of the ReplayActions calls of wakes (see
	// sb.ToolCall.Replay) so that a recovered wake does not repeat them;
	// nil turns replay off.
	Replays sb.KV
	// ReplayActions are "Tool.action" names; nil means
	// DefaultReplayActions.
	ReplayActions []string
}

// New reads every tool's spec once. An action's schema is compiled into
// its argument check when the action is first called, not here: a cold
// start pays only for the actions it uses. CompileAll compiles them all.
func New(o Options) (*Executor, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	x := &Executor{tools: map[string]sb.Tool{}, specs: map[string]sb.ToolSpec{}, schemas: map[string]*actionSchema{},
		aliases: map[string]string{}, policy: o.Policy, audit: o.Audit, scrub: o.Scrub, permits: o.Permits, log: o.Log, now: o.Now,
		replays: o.Replays, replayable: map[string]bool{}}
	if o.ReplayActions == nil {
		o.ReplayActions = DefaultReplayActions
	}
	for _, a := range o.ReplayActions {
		x.replayable[a] = true
	}
	for _, t := range o.Tools {
		spec := t.Spec()
		if _, dup := x.tools[spec.Name]; dup {
			return nil, fmt.Errorf("tools: %s registered twice", spec.Name)
		}
		x.tools[spec.Name] = t
		x.specs[spec.Name] = spec
		for _, a := range spec.Actions {
			x.schemas[spec.Name+"."+a.Name] = &actionSchema{name: spec.Name + "." + a.Name, params: a.Parameters}
		}
		for _, a := range spec.Actions {
			for _, alias := range a.Aliases {
				key := spec.Name + "." + alias
				if _, clash := x.schemas[key]; clash || x.aliases[key] != "" {
					return nil, fmt.Errorf("tools: %s: alias %q of %s is already an action or another alias", spec.Name, alias, a.Name)
				}
				x.aliases[key] = a.Name
			}
		}
	}
	return x, nil
}

// CompileAll compiles every action's schema now and returns the first
// error; tests and tools that want to fail fast call it.
func (x *Executor) CompileAll() error {
	names := make([]string, 0, len(x.schemas))
	for n := range x.schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := x.schemas[n].get(); err != nil {
			return err
		}
	}
	return nil
}

// actionSchema is one action's schema, compiled on first use.
type actionSchema struct {
	name   string
	params map[string]any
	once   sync.Once
	schema *node
	err    error
}

func (a *actionSchema) get() (*node, error) {
	a.once.Do(func() { a.schema, a.err = compile(a.name, a.params) })
	return a.schema, a.err
}

// Specs lists the tools, sorted by name. With agentID set, only the tools
// that agent may use.
func (x *Executor) Specs(agentID string) []sb.ToolSpec {
	var out []sb.ToolSpec
	for name, spec := range x.specs {
		if agentID != "" && !x.permits(agentID, name) {
			continue
		}
		out = append(out, spec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Invoke runs call and always answers with an envelope; it writes one audit
// entry. The audit write comes after the action: if it fails, the entry goes
// to the error log (scrubbed) so that it is never lost silently.
func (x *Executor) Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope {
	ctx, sink := auditSink(ctx)
	call, entry, start := x.begin(call)
	env := x.invoke(ctx, call, &entry)
	entry = x.audited(ctx, entry, start, env)
	if sink != nil {
		sink.Entry = entry
	}
	return env
}

// auditSink takes the sb.ToolAudit ctx carries for this call and hides it
// from the calls the tool makes in turn.
func auditSink(ctx context.Context) (context.Context, *sb.ToolAudit) {
	sink := sb.ToolAuditFrom(ctx)
	if sink != nil {
		ctx = sb.WithToolAudit(ctx, nil)
	}
	return ctx, sink
}

// Run is the typed path for the system's own callers (the document
// pipeline, a run's reply): call names the tool, action and arguments as a
// model would send them, and do is the typed service's method that performs
// it. The call passes the same gate as Invoke — aliases, the agent's tools,
// the schema, the tool's preflight, the staging policy and approvals — and
// writes the same one audit entry, but do runs instead of the tool's Invoke
// and Run answers do's error. A call that does not run answers EINVALID
// (unknown tool or action, wrong arguments), EFORBIDDEN (not configured for
// the agent, or denied by the policy), the tool's own refusal (preflight),
// or *switchboard.PendingApproval when it waits for a human. Replay does not
// apply: such callers keep their own markers.
func (x *Executor) Run(ctx context.Context, call sb.ToolCall, do func(ctx context.Context) error) error {
	ctx, sink := auditSink(ctx)
	call, entry, start := x.begin(call)
	answered, answer := false, error(nil)
	env := func() sb.Envelope {
		tool, err := x.admit(ctx, call)
		if err != nil {
			entry.Outcome = sb.OutcomeRejected
			answered, answer = true, err
			return sb.Fail(sb.ErrorMessage(err))
		}
		return x.decideAndRun(ctx, tool, call, &entry, func(ctx context.Context) sb.Envelope {
			answered, answer = true, x.safeDo(ctx, call, do)
			if answer != nil {
				return sb.FailErr(answer)
			}
			return sb.OK(nil)
		})
	}()
	entry = x.audited(ctx, entry, start, env)
	if sink != nil {
		sink.Entry = entry
	}
	if answered {
		return answer
	}
	return held(call, entry, env)
}

// held is the error of a typed call that did not run, from its audit entry
// and the envelope the model would have seen.
func held(call sb.ToolCall, entry sb.AuditEntry, env sb.Envelope) error {
	op := "tools." + call.Tool + "." + call.Action
	switch entry.Outcome {
	case sb.OutcomePending:
		msg, _ := env.Data["message"].(string)
		return &sb.PendingApproval{ApprovalID: entry.ApprovalID, Message: msg}
	case sb.OutcomeDenied:
		return sb.E(op, sb.EFORBIDDEN, env.Error)
	}
	// A preflight refusal and a staging store failure carry their code.
	code, _ := env.Data["code"].(string)
	if code == "" {
		code = sb.EINVALID
	}
	return sb.E(op, code, env.Error)
}

// begin resolves an alias (one name for the tool, the rules and the audit)
// and opens the call's audit entry.
func (x *Executor) begin(call sb.ToolCall) (sb.ToolCall, sb.AuditEntry, time.Time) {
	if action, ok := x.aliases[call.Tool+"."+call.Action]; ok {
		call.Action = action
	}
	start := x.now()
	entry := sb.AuditEntry{
		ID: sb.NewID(start), At: start.UTC(), Run: call.Run, AgentID: call.AgentID,
		Tool: call.Tool, Action: call.Action, Args: x.auditArgs(call.Args), Origin: call.Origin, Client: call.Client,
	}
	return call, entry, start
}

// audited closes entry with the call's answer, writes it and returns it.
func (x *Executor) audited(ctx context.Context, entry sb.AuditEntry, start time.Time, env sb.Envelope) sb.AuditEntry {
	entry.Duration = x.now().Sub(start)
	if env.Status == "error" && entry.Error == "" {
		entry.Error = x.scrub.String(env.Error)
	}
	if err := x.audit.Append(context.WithoutCancel(ctx), entry); err != nil {
		x.log.ErrorContext(ctx, "audit write failed; entry follows", "err", err,
			"tool", entry.Tool, "action", entry.Action, "agent", entry.AgentID,
			"runId", entry.Run.RunID, "outcome", entry.Outcome, "args", entry.Args)
	}
	return entry
}

// admit is the call's tool when the call names a known action of a tool
// the agent may use, with arguments its schema accepts.
func (x *Executor) admit(ctx context.Context, call sb.ToolCall) (sb.Tool, error) {
	const op = "tools.admit"
	tool, ok := x.tools[call.Tool]
	if !ok {
		return nil, sb.E(op, sb.EINVALID, fmt.Sprintf("unknown tool %q; available tools: %s", call.Tool, strings.Join(x.names(), ", ")))
	}
	if _, ok := x.schemas[call.Tool+"."+call.Action]; !ok {
		return nil, sb.E(op, sb.EINVALID, fmt.Sprintf("%s has no action %q; use one of: %s", call.Tool, call.Action, strings.Join(x.specs[call.Tool].ActionNames(), ", ")))
	}
	if !x.permits(call.AgentID, call.Tool) {
		return nil, sb.E(op, sb.EFORBIDDEN, fmt.Sprintf("agent %q is not configured for %s; add a %s block under its tools in the config", call.AgentID, call.Tool, call.Tool))
	}
	if msg := x.validate(ctx, call); msg != "" {
		return nil, sb.E(op, sb.EINVALID, msg)
	}
	return tool, nil
}

func (x *Executor) invoke(ctx context.Context, call sb.ToolCall, entry *sb.AuditEntry) sb.Envelope {
	tool, err := x.admit(ctx, call)
	if err != nil {
		entry.Outcome = sb.OutcomeRejected
		return sb.Fail(sb.ErrorMessage(err))
	}
	// Before the preflight and the policy: what an earlier attempt of the
	// wake did may fail a preflight now (a deleted file is gone) and must
	// not be staged for approval twice.
	replayKey := x.replayKey(call)
	if replayKey != "" {
		if env, ok := x.recorded(ctx, replayKey); ok {
			entry.Outcome = sb.OutcomeReplayed
			return env
		}
	}
	env := x.decideAndRun(ctx, tool, call, entry, func(ctx context.Context) sb.Envelope { return x.safeInvoke(ctx, tool, call) })
	if replayKey != "" {
		x.record(ctx, replayKey, env)
	}
	return env
}

// decideAndRun runs a valid call's preflight, asks the staging policy and
// runs (run), stages or refuses the call as it says.
func (x *Executor) decideAndRun(ctx context.Context, tool sb.Tool, call sb.ToolCall, entry *sb.AuditEntry, run func(context.Context) sb.Envelope) sb.Envelope {
	if p, ok := tool.(Preflighter); ok {
		if err := x.preflight(ctx, p, call); err != nil {
			entry.Outcome = sb.OutcomeRejected
			return sb.FailErr(err)
		}
	}
	condition := ""
	if c, ok := tool.(staging.Conditioner); ok {
		condition = c.Condition(call)
	}
	entry.Decision = x.policy.Decide(call, condition)
	if call.Approved && entry.Decision != sb.DecisionDeny {
		// A human's yes let it run, not a rule: say so, and whose yes.
		entry.Decision, entry.ApprovalID, entry.DecidedBy = sb.DecisionApproved, call.ApprovalID, call.ApprovedBy
		if refused, ok := x.targetChanged(ctx, tool, call); ok {
			entry.Outcome = sb.OutcomeRejected
			return refused
		}
	}
	if entry.Decision == sb.DecisionApprove {
		al, ok, err := x.allowed(ctx, call)
		if err != nil && sb.ErrorCode(err) == sb.EUNAVAILABLE {
			// The store that would keep the request does not answer: say so
			// now rather than wait for it a second time.
			entry.Outcome = sb.OutcomeError
			fail := sb.Fail(fmt.Sprintf("%s.%s needs a human's approval, but the request could not be stored; try again later", call.Tool, call.Action))
			fail.Data = map[string]any{"code": sb.EUNAVAILABLE} // the HTTP route answers 503
			return fail
		}
		if ok {
			// A human's earlier yes for this place covers it: run it now.
			entry.Decision, entry.ApprovalID = sb.DecisionAllowed, al.ApprovalID
			entry.DecidedBy = "allowance " + al.ID + " granted by " + al.GrantedBy
		}
	}
	switch entry.Decision {
	case sb.DecisionDeny:
		entry.Outcome = sb.OutcomeDenied
		return sb.Fail(fmt.Sprintf("%s.%s is not allowed here by the staging policy; do not retry, tell the human what you wanted to do instead", call.Tool, call.Action))
	case sb.DecisionApprove:
		entry.Outcome = sb.OutcomePending
		if x.stage != nil {
			call.Target = x.fingerprint(ctx, tool, call)
			env, err := x.stage.Stage(ctx, call, fmt.Sprintf("%s asked for %s.%s during run %s", call.AgentID, call.Tool, call.Action, call.Run.RunID))
			if err != nil {
				entry.Outcome = sb.OutcomeError
				fail := sb.Fail(fmt.Sprintf("%s.%s needs a human's approval, but the request could not be stored; try again later", call.Tool, call.Action))
				fail.Data = map[string]any{"code": sb.ErrorCode(err)} // unavailable: the HTTP route answers 503
				return fail
			}
			entry.ApprovalID, _ = env.Data["approval_id"].(string)
			return env
		}
		return sb.Envelope{Status: sb.OutcomePending, Data: map[string]any{
			"message": fmt.Sprintf("%s.%s needs a human's approval; it has not run. Tell the human what you want to do and why; you will be woken with the result once someone decides.", call.Tool, call.Action),
		}}
	}
	env := run(ctx)
	entry.Outcome = sb.OutcomeOK
	if env.Status == "error" {
		entry.Outcome = sb.OutcomeError
	}
	return env
}

// allowed asks the stager for an allowance that covers call.
func (x *Executor) allowed(ctx context.Context, call sb.ToolCall) (sb.Allowance, bool, error) {
	a, ok := x.stage.(Allower)
	if !ok {
		return sb.Allowance{}, false, nil
	}
	return a.Allowed(ctx, call)
}

// fingerprint is the target of a call about to be staged; "" when the
// tool records none or cannot tell now.
func (x *Executor) fingerprint(ctx context.Context, tool sb.Tool, call sb.ToolCall) string {
	f, ok := tool.(Fingerprinter)
	if !ok {
		return ""
	}
	fp, err := f.Fingerprint(ctx, call)
	if err != nil {
		x.log.WarnContext(ctx, "target of a staged call not recorded; it will not be re-checked", "tool", call.Tool,
			"action", call.Action, "runId", call.Run.RunID, "err", err)
		return ""
	}
	return fp
}

// targetChanged refuses an approved call whose target is not what it was
// when the call was staged (one look at the target).
func (x *Executor) targetChanged(ctx context.Context, tool sb.Tool, call sb.ToolCall) (sb.Envelope, bool) {
	f, ok := tool.(Fingerprinter)
	if !ok || call.Target == "" {
		return sb.Envelope{}, false
	}
	now, err := f.Fingerprint(ctx, call)
	var why string
	switch {
	case sb.ErrorCode(err) == sb.ENOTFOUND:
		why = "it no longer exists (when it was asked it was " + call.Target + ")"
	case err != nil:
		x.log.WarnContext(ctx, "target of an approved call could not be re-checked; it runs", "tool", call.Tool,
			"action", call.Action, "approvalId", call.ApprovalID, "err", err)
		return sb.Envelope{}, false
	case now == call.Target:
		return sb.Envelope{}, false
	default:
		why = "when it was asked it was " + call.Target + "; now it is " + now
	}
	env := sb.Fail(fmt.Sprintf("%s.%s was approved, but its target changed since it was asked: %s. It did not run; "+
		"look at the target again and ask anew if the action is still right.", call.Tool, call.Action, why))
	env.Data = map[string]any{"code": sb.CodeTargetChanged}
	return env, true
}

// safeInvoke turns a panicking tool into an error envelope: a bug in one tool
// must not take the run (or the Lambda) down, and no stack reaches the model.
func (x *Executor) safeInvoke(ctx context.Context, tool sb.Tool, call sb.ToolCall) (env sb.Envelope) {
	defer func() {
		if r := recover(); r != nil {
			env = sb.Fail(fmt.Sprintf("%s.%s failed unexpectedly; the operator can find details in the logs", call.Tool, call.Action))
			x.log.ErrorContext(ctx, "tool panicked", "tool", call.Tool, "action", call.Action,
				"runId", call.Run.RunID, "panic", fmt.Sprint(r))
		}
	}()
	return tool.Invoke(ctx, call)
}

// safeDo is safeInvoke for a typed call.
func (x *Executor) safeDo(ctx context.Context, call sb.ToolCall, do func(context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = sb.E("tools."+call.Tool+"."+call.Action, sb.EINTERNAL, fmt.Sprintf("%s.%s failed unexpectedly; the operator can find details in the logs", call.Tool, call.Action))
			x.log.ErrorContext(ctx, "tool panicked", "tool", call.Tool, "action", call.Action,
				"runId", call.Run.RunID, "panic", fmt.Sprint(r))
		}
	}()
	return do(ctx)
}

// preflight runs a tool's own checks; a panic there must not take the call
// down with it, so it counts as "cannot tell" and Invoke decides.
func (x *Executor) preflight(ctx context.Context, p Preflighter, call sb.ToolCall) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = nil
			x.log.ErrorContext(ctx, "tool preflight panicked", "tool", call.Tool, "action", call.Action,
				"runId", call.Run.RunID, "panic", fmt.Sprint(r))
		}
	}()
	return p.Preflight(ctx, call)
}

func (x *Executor) validate(ctx context.Context, call sb.ToolCall) string {
	schema, err := x.schemas[call.Tool+"."+call.Action].get()
	if err != nil {
		x.log.ErrorContext(ctx, "tool schema does not compile", "err", err, "tool", call.Tool, "action", call.Action)
		return fmt.Sprintf("args of %s.%s could not be checked; the operator can find details in the logs", call.Tool, call.Action)
	}
	args, ok := parseArgs(call.Args)
	if !ok {
		return fmt.Sprintf("args of %s.%s are not valid JSON; send a JSON object", call.Tool, call.Action)
	}
	var problems []string
	schema.check(args, "", &problems)
	if len(problems) == 0 {
		return ""
	}
	return fmt.Sprintf("args of %s.%s are wrong: %s; see GET /tools for the schema", call.Tool, call.Action, strings.Join(problems, "; "))
}

func (x *Executor) auditArgs(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	if !json.Valid(raw) {
		return scrub.Cap(x.scrub.String(string(raw)), sb.MaxAuditArgs)
	}
	return scrub.Cap(string(x.scrub.JSON(raw)), sb.MaxAuditArgs)
}

func (x *Executor) names() []string {
	n := make([]string, 0, len(x.tools))
	for k := range x.tools {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}
