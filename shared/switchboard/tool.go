package switchboard

import (
	"context"
	"encoding/json"
	"sort"
)

// ToolCall is one request to run a tool action. Run is stamped by the engine
// (or by the tool API for calls from outside a run); Args come from a model or
// a client and are untrusted.
type ToolCall struct {
	AgentID string          `json:"agent"`
	Tool    string          `json:"tool"`
	Action  string          `json:"action"`
	Args    json.RawMessage `json:"args"`
	Run     RunContext      `json:"-"`
	// Origin is "agent" for model-issued calls, "router" for notices the
	// system itself generates (they bypass approval), "operator" for
	// calls through the tool API, "mcp" for calls of an MCP client.
	Origin string `json:"-"`
	// Client names the MCP client that made the call (origin "mcp"), for
	// the audit; "" otherwise.
	Client string `json:"-"`
	// ReplyTo is where the run that made the call answers (nil for runs
	// nobody woke from a chat, and for calls from outside a run). Stamped
	// by the engine like Run; a staged approval keeps it for the
	// follow-up run.
	ReplyTo *ReplyTo `json:"-"`
	// Approved is set only by the approvals flow when it executes a staged
	// action after a human said yes; ApprovalID and ApprovedBy then name the
	// approval and who decided, for the audit.
	Approved   bool   `json:"-"`
	ApprovalID string `json:"-"`
	ApprovedBy string `json:"-"`
	// Target is the fingerprint of the call's target when it was staged
	// (Approval.Target): set with Approved, so that the executor refuses an
	// approved call whose target changed meanwhile.
	Target string `json:"-"`
	// Replay names the wake the call's run works on, the same for every
	// attempt of it (its claim key); CallIndex is the call's place among
	// the run's tool calls, counted from 0. Together with the arguments
	// they let the executor answer a recovered wake's repeat of a call
	// that already had its effect with the recorded outcome. Set by the
	// engine; "" for calls of runs no wake claim guards.
	Replay    string `json:"-"`
	CallIndex int    `json:"-"`
}

// Call origins.
const (
	OriginAgent    = "agent"
	OriginRouter   = "router"
	OriginOperator = "operator"
	OriginMCP      = "mcp"
)

// NobodyWakes reports whether a call of this origin comes from outside any
// run (the tool API's operator, an MCP client): no agent waits to be woken
// with the outcome of its approval; the caller asks for it.
func NobodyWakes(origin string) bool { return origin == OriginOperator || origin == OriginMCP }

// Envelope is every tool answer. Status is "ok", "error" or
// "pending_approval"; Data carries the action's result fields, flattened into
// the top-level JSON object next to status.
type Envelope struct {
	Status            string
	Error             string // human reason and what to do; only with status "error"
	HTTPStatus        int    // third-party status when one caused the error
	Endpoint          string // third-party endpoint involved, without credentials
	NeedsConfirmation bool
	Data              map[string]any
}

// PendingApproval is the error of a typed tool call (shared/tools
// Executor.Run) that the staging policy holds for a human's approval: it has
// not run. ApprovalID names the approval ("" when approvals are not set up);
// Message says what happens next.
type PendingApproval struct {
	ApprovalID string
	Message    string
}

func (e *PendingApproval) Error() string {
	return "needs a human's approval (approval " + e.ApprovalID + "): " + e.Message
}

// CodeTargetChanged is the envelope code (Data["code"]) of an approved call
// the executor refused because its target changed after it was staged
// (the file was replaced, the room is gone): it did not run.
const CodeTargetChanged = "target_changed"

// OK builds a success envelope.
func OK(data map[string]any) Envelope { return Envelope{Status: "ok", Data: data} }

// Fail builds an error envelope from a caller-safe message.
func Fail(message string) Envelope { return Envelope{Status: "error", Error: message} }

// FailErr builds an error envelope from err, showing only its caller-safe message.
func FailErr(err error) Envelope {
	env := Fail(ErrorMessage(err))
	env.Data = map[string]any{"code": ErrorCode(err)}
	return env
}

var reservedKeys = []string{"status", "error", "http_status", "endpoint", "needs_confirmation"}

// MarshalJSON flattens Data next to the fixed fields; fixed fields win.
func (e Envelope) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(e.Data)+5)
	for k, v := range e.Data {
		m[k] = v
	}
	// Reserved keys come only from the fixed fields: a tool's data can never
	// fake a confirmation request, an error or a status.
	for _, k := range reservedKeys {
		delete(m, k)
	}
	m["status"] = e.Status
	if e.Error != "" {
		m["error"] = e.Error
	}
	if e.HTTPStatus != 0 {
		m["http_status"] = e.HTTPStatus
	}
	if e.Endpoint != "" {
		m["endpoint"] = e.Endpoint
	}
	if e.NeedsConfirmation {
		m["needs_confirmation"] = true
	}
	return json.Marshal(m)
}

// UnmarshalJSON is the inverse of MarshalJSON.
func (e *Envelope) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*e = Envelope{}
	if s, ok := m["status"].(string); ok {
		e.Status = s
	}
	if s, ok := m["error"].(string); ok {
		e.Error = s
	}
	if f, ok := m["http_status"].(float64); ok {
		e.HTTPStatus = int(f)
	}
	if s, ok := m["endpoint"].(string); ok {
		e.Endpoint = s
	}
	if v, ok := m["needs_confirmation"].(bool); ok {
		e.NeedsConfirmation = v
	}
	for _, k := range reservedKeys {
		delete(m, k)
	}
	if len(m) > 0 {
		e.Data = m
	}
	return nil
}

// ToolSpec describes a tool to models and to GET /tools.
type ToolSpec struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Actions     []ActionSpec `json:"actions"`
}

// ActionSpec describes one action; Parameters is a JSON Schema object.
// Aliases are other names a caller may use for the action (a short name
// next to the one offered to models); the executor runs the action under
// Name, so staging rules and audits see one name.
type ActionSpec struct {
	Name        string         `json:"name"`
	Aliases     []string       `json:"aliases,omitempty"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// Action looks an action up by name.
func (s ToolSpec) Action(name string) (ActionSpec, bool) {
	for _, a := range s.Actions {
		if a.Name == name {
			return a, true
		}
	}
	return ActionSpec{}, false
}

// ActionNames lists the action names, sorted.
func (s ToolSpec) ActionNames() []string {
	names := make([]string, len(s.Actions))
	for i, a := range s.Actions {
		names[i] = a.Name
	}
	sort.Strings(names)
	return names
}

// Tool is one capability agents can use. Invoke is called only after the
// arguments passed schema validation and the staging policy said auto (or a
// human approved). It must answer with an envelope, never panic, and never
// put internal error text into it.
type Tool interface {
	Spec() ToolSpec
	Invoke(ctx context.Context, call ToolCall) Envelope
}
