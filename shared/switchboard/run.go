package switchboard

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"
)

// RunContext identifies one agent run within its chain. The engine stamps
// it; no tool argument or model output can set it.
type RunContext struct {
	RunID       string `json:"runId"`
	ParentRunID string `json:"parentRunId,omitempty"` // empty when a human or a schedule started the run
	RootRunID   string `json:"rootRunId"`             // = RunID when there is no parent
	AgentID     string `json:"agentId"`
	// CallPath is set only on a run that answers another agent's question
	// (ask_agent): the ids of the asking chain's agents, the first asker
	// first, joined by CallPathSep (a string, so that run contexts stay
	// comparable). Such a run may not ask anyone in turn, and nobody on the
	// path may be asked again, so questions never go deeper than one level
	// nor round in a circle.
	CallPath string `json:"callPath,omitempty"`
	// TaskHops is how many task hand-overs deep the run is: 0 for a run
	// that a person, a schedule or a question started; a run that a task
	// woke is one deeper than the run that created the task, and the runs
	// that follow from it (its approved calls, the creator's wake with the
	// result) stay at that depth. The Taskboard refuses a task that would
	// go deeper than its hop limit.
	TaskHops int `json:"taskHops,omitempty"`
	// PaidBy is the agent whose daily budget the run is charged to when
	// that is not the run's own agent: a task's runs are charged to the
	// agent that handed the work out (the creator, or whoever pays for the
	// creator's run), so that no agent spends another's budget. Empty: the
	// run's agent pays.
	PaidBy string `json:"paidBy,omitempty"`
}

// Payer is the agent whose daily budget the run is charged to.
func (rc RunContext) Payer() string {
	if rc.PaidBy != "" {
		return rc.PaidBy
	}
	return rc.AgentID
}

// CallPathSep joins the agent ids of a CallPath; agent ids never contain it.
const CallPathSep = ">"

// AskAgentTool is the tool through which one agent asks another a short
// question. The engine leaves it out of what an answering run is offered.
const AskAgentTool = "ask_agent"

// Answering reports whether the run answers another agent's question.
func (rc RunContext) Answering() bool { return rc.CallPath != "" }

// Callers lists the agents of CallPath, the first asker first.
func (rc RunContext) Callers() []string {
	if rc.CallPath == "" {
		return nil
	}
	return strings.Split(rc.CallPath, CallPathSep)
}

// NewRun starts a run for agent. With a nil parent it is the root of a new
// chain; a follow-up takes on its parent's task depth and payer.
func NewRun(agentID string, parent *RunContext, now time.Time) RunContext {
	id := NewID(now)
	rc := RunContext{RunID: id, RootRunID: id, AgentID: agentID}
	if parent != nil && parent.RunID != "" {
		rc.ParentRunID = parent.RunID
		rc.RootRunID = parent.RootRunID
		if rc.RootRunID == "" {
			rc.RootRunID = parent.RunID
		}
		rc.TaskHops, rc.PaidBy = parent.TaskHops, parent.PaidBy
	}
	return rc
}

// NewID returns a 26-character lower-case hex identifier that sorts by time:
// 48 bits of Unix milliseconds, then 56 random bits.
func NewID(now time.Time) string {
	var b [13]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	// keep the 6 time bytes, fill the rest with randomness
	if _, err := rand.Read(b[6:]); err != nil {
		panic("switchboard: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// runTokenKey is the context key of a run's token.
type runTokenKey struct{}

// WithRunToken is ctx carrying token, the engine-signed token of the run
// whose tool calls run under ctx. A tool that hands a call on to the tool
// API from outside the process sends it as "run": {"token": …}; the API
// believes run ids and call paths only in that form.
func WithRunToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, runTokenKey{}, token)
}

// RunToken is the run token ctx carries, "" when none.
func RunToken(ctx context.Context) string {
	s, _ := ctx.Value(runTokenKey{}).(string)
	return s
}
