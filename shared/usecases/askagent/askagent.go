// Package askagent is ask_agent: one agent asks another a short question
// and gets the answer as the tool result of the same run. The question runs
// through the ask-agent Express state machine (infra/statemachines), whose
// Task states call this package's handlers: Guard refuses what the rules
// forbid and records the question (its request row, delivered or denied),
// Answerer runs the asked agent and records its answer, Recorder writes the
// response row of a question that timed out or failed. A delivered answer
// takes two calls, a refusal one. The tool only starts the machine and
// reads its outcome.
//
// The rules: questions go one level deep (a run that answers a question
// asks no one in turn), never round in a circle (nobody already on the call
// path is asked again), never to oneself, and only to agents that exist and
// that the asker's ask_agent block allows. The engine stamps the call path
// on the run; no model can write it, and no caller: POST /tools/invoke
// takes a run only as the engine's signed token, whose call path it
// carries. The machine's Task payloads come from our own state machine
// (started and invoking our functions through IAM only); even so the guard
// and the answering Task refuse a question whose call path does not end
// with its asker, so a missing path never passes for "nobody asked yet".
package askagent

import (
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/config"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The op of each Task payload, by which a function's handler tells the
// machine's payloads from its own events.
const (
	OpGuard  = "ask.guard"
	OpRecord = "agentMessage.record"
	OpRun    = "ask.run"
)

// Question is the machine's input, as the tool starts it and the Guard
// Task receives it (with the execution's id and start).
type Question struct {
	Op        string `json:"op,omitempty"`
	From      string `json:"from"`
	To        string `json:"to"`
	Question  string `json:"question"`
	RunID     string `json:"runId"`
	RootRunID string `json:"rootRunId"`
	// CallPath is the asking chain's agents, the asker last: the asking
	// run's own path plus the asker.
	CallPath       []string `json:"callPath"`
	TimeoutSeconds int      `json:"timeoutSeconds"`
	// ParentSpanID is the asking execute_tool span (hex; "" without
	// telemetry): the answering run's span hangs under it in whichever
	// Lambda it runs. Always present, so that the machine's path to it
	// resolves.
	ParentSpanID string `json:"parentSpanId"`
	// ExecutionID and AskedAt come from the machine (its execution's id and
	// start): they make the request row's key and time, the same for a
	// retried Task.
	ExecutionID string    `json:"executionId,omitempty"`
	AskedAt     time.Time `json:"askedAt,omitzero"`
}

// Outcome is the machine's output.
type Outcome struct {
	Status string `json:"status"` // delivered | denied | timeout | failed
	Agent  string `json:"agent"`
	Answer string `json:"answer,omitempty"`
	Reason string `json:"reason,omitempty"`
	RunID  string `json:"runId,omitempty"`
}

// callPathOf is the call path a question from run carries.
func callPathOf(run sb.RunContext, asker string) []string {
	return append(run.Callers(), asker)
}

// stampedPath reports whether path is one the engine's run gives a
// question from asker: at least the asker, last, and no empty agent id. A
// payload with another path did not come from the tool (the machine's
// input is the tool's Question), so it is not believed: a missing path
// must never read as "nobody asked before".
func stampedPath(path []string, asker string) bool {
	if len(path) == 0 || path[len(path)-1] != asker {
		return false
	}
	for _, id := range path {
		if id == "" || strings.Contains(id, sb.CallPathSep) {
			return false
		}
	}
	return true
}

// joinPath is the RunContext form of a call path.
func joinPath(path []string) string { return strings.Join(path, sb.CallPathSep) }

// defaultTimeout is instance.askAgent.timeoutSeconds' default.
const defaultTimeout = 60 * time.Second

// clampTimeout keeps a payload's timeout within what the config allows.
func clampTimeout(s int) time.Duration {
	if s <= 0 || s > config.MaxAskTimeoutSeconds {
		return defaultTimeout
	}
	return time.Duration(s) * time.Second
}
