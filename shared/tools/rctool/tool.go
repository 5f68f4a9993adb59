package rctool

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// ToolName is the name models and POST /tools/invoke use.
const ToolName = "RocketChat"

// Defaults and bounds.
const (
	DefaultMaxUploadMB   = 25 // RocketChat.maxUploadMb when unset
	DefaultMaxDownloadMB = 25 // RocketChat.maxDownloadMb when unset
	DefaultCount         = 20 // messages read_room and search return by default
	MaxCount             = 100
	// CacheTTL is how long an agent's subscriptions serve room lookups.
	// Rocket.Chat limits every REST route to about 10 calls a minute per
	// user and the poll job already spends one subscriptions.get a
	// minute; a miss always asks the server again, so a new room is found at
	// once.
	CacheTTL = 30 * time.Second
	// conditionTimeout bounds the room lookup staging asks for; the
	// executor's Condition call has no context of its own.
	conditionTimeout = 5 * time.Second
)

// Agent is one agent's Rocket.Chat side: its chat (acting as the agent's
// own user) and the RocketChat block of its configuration.
type Agent struct {
	Client sb.Chat
	// Username is the agent's own Rocket.Chat username; it tells the
	// counterpart of a direct message apart from the agent.
	Username string
	// AllowedRooms lists room names, ids and (for DMs) counterpart usernames
	// the agent may use; empty allows every room.
	AllowedRooms []string
	// DefaultRoom is where send_message posts when no room is given.
	DefaultRoom string
	// MaxUploadMB and MaxDownloadMB bound send_file and download_file; 0
	// means the defaults (25).
	MaxUploadMB   int
	MaxDownloadMB int
	// AllowDangerousDownloads lets download_file store executable endings.
	AllowDangerousDownloads bool
}

// Tool is the RocketChat tool. It is safe for concurrent use.
type Tool struct {
	clients func(agentID string) (Agent, bool)
	blobs   sb.BlobStore
	now     func() time.Time
	log     *slog.Logger

	mu    sync.Mutex
	cache map[string]subsSnapshot // by agent id
}

type subsSnapshot struct {
	at   time.Time
	subs []sb.ChatSubscription
}

var (
	_ sb.Tool             = (*Tool)(nil)
	_ staging.Conditioner = (*Tool)(nil)
	_ tools.Preflighter   = (*Tool)(nil)
)

// New builds the tool. clients returns an agent's Rocket.Chat side, ok false
// when the agent has no RocketChat block; blobs holds the workspace files
// send_file reads and download_file writes.
func New(clients func(agentID string) (Agent, bool), blobs sb.BlobStore) *Tool {
	return &Tool{clients: clients, blobs: blobs, now: time.Now, log: slog.Default(), cache: map[string]subsSnapshot{}}
}

// SetClock replaces the clock of the room cache (tests).
func (t *Tool) SetClock(now func() time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.now = now
}

// SetLogger replaces the logger (default slog.Default()).
func (t *Tool) SetLogger(l *slog.Logger) { t.log = l }

// Invoke runs one action and always answers with an envelope.
func (t *Tool) Invoke(ctx context.Context, call sb.ToolCall) (env sb.Envelope) {
	defer func() {
		if r := recover(); r != nil {
			env = toolargs.Panicked(ctx, t.log, "rocketchat", call, r, "rctool."+call.Action, "RocketChat."+call.Action)
		}
	}()
	run, ok := actions[call.Action]
	if !ok {
		return sb.FailErr(toolargs.UnknownAction("rctool", ToolName, call.Action, t.Spec().ActionNames()))
	}
	agent, ok := t.clients(call.AgentID)
	if !ok || agent.Client == nil {
		return sb.FailErr(toolargs.NotConfigured("rctool", call.AgentID, "RocketChat"))
	}
	c := &invocation{t: t, ctx: ctx, call: call, agent: agent, op: "rctool." + call.Action}
	return run(c)
}

// Preflight runs an action's argument checks without acting, so that the
// executor refuses a call that can only fail before anyone is asked to
// approve it: bad arguments, a workspace path that leaves the workspace, and
// for send_file a file that is not there or is over the upload limit (one
// listing of the workspace store). Rooms are not looked up here: Condition
// already does, and Invoke answers unknown rooms precisely.
func (t *Tool) Preflight(ctx context.Context, call sb.ToolCall) error {
	run, ok := actions[call.Action]
	if !ok {
		return nil // the executor refuses unknown actions itself
	}
	agent, ok := t.clients(call.AgentID)
	if !ok || agent.Client == nil {
		return nil // Invoke says what to configure
	}
	c := &invocation{t: t, ctx: ctx, call: call, agent: agent, op: "rctool." + call.Action, preflight: true}
	if env := run(c); env.Status == "error" {
		return toolargs.Refusal(c.op, env)
	}
	return nil
}

// checked is what an action answers in a preflight once its arguments pass.
var checked = sb.Envelope{Status: "ok"}

// actions maps action names to their handlers.
var actions = map[string]func(*invocation) sb.Envelope{
	"send_message":  (*invocation).sendMessage,
	"reply":         (*invocation).reply,
	"send_file":     (*invocation).sendFile,
	"list_rooms":    (*invocation).listRooms,
	"read_room":     (*invocation).readRoom,
	"mark_read":     (*invocation).markRead,
	"download_file": (*invocation).downloadFile,
	"react":         (*invocation).react,
	"search":        (*invocation).search,
}

// invocation is one call in flight.
type invocation struct {
	t     *Tool
	ctx   context.Context
	call  sb.ToolCall
	agent Agent
	op    string
	// preflight: check the arguments and stop before the first call that
	// acts (or asks Rocket.Chat); see Preflight.
	preflight bool
}

// Condition names the staging condition of call: "other_room" for
// send_message, reply and send_file to a room outside the agent's
// allowedRooms, else "". It looks the room up in the agent's subscriptions
// (cached) when the argument is not itself a list entry. When it cannot tell
// (bad arguments, Rocket.Chat unreachable) it answers "": Invoke checks the
// list again and refuses, so staging is never the only guard.
func (t *Tool) Condition(call sb.ToolCall) string {
	switch call.Action {
	case "send_message", "reply", "send_file":
	default:
		return ""
	}
	agent, ok := t.clients(call.AgentID)
	if !ok || agent.Client == nil || len(agent.AllowedRooms) == 0 {
		return ""
	}
	var a struct {
		Room *string `json:"room"`
	}
	if err := decodeLoose(call.Args, &a); err != nil {
		return ""
	}
	arg := agent.DefaultRoom
	if a.Room != nil {
		arg = *a.Room
	}
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return ""
	}
	if listed(agent.AllowedRooms, bareRoomName(arg)) {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), conditionTimeout)
	defer cancel()
	c := &invocation{t: t, ctx: ctx, call: call, agent: agent, op: "rctool.condition"}
	room, err := c.resolve(arg, false)
	switch {
	case err == nil && !allowed(agent.AllowedRooms, room):
		return "other_room"
	case err != nil && strings.HasPrefix(arg, "@") && sb.ErrorCode(err) == sb.ENOTFOUND:
		// No DM yet and the username is not listed: sending would open one
		// with someone outside the list.
		return "other_room"
	}
	// Allowed, or unknown/unreachable: Invoke answers with the precise error.
	return ""
}

// Fingerprint names the room a send_file acts on (its id, from one fresh
// lookup), so that an approved upload into a room that is gone is refused
// (ENOTFOUND) and one whose name now means another room too; "" for the
// other actions.
func (t *Tool) Fingerprint(ctx context.Context, call sb.ToolCall) (string, error) {
	if call.Action != "send_file" {
		return "", nil
	}
	agent, ok := t.clients(call.AgentID)
	if !ok || agent.Client == nil {
		return "", nil
	}
	var a struct {
		Room *string `json:"room"`
	}
	if err := decodeLoose(call.Args, &a); err != nil {
		return "", nil
	}
	arg := agent.DefaultRoom
	if a.Room != nil {
		arg = *a.Room
	}
	if strings.TrimSpace(arg) == "" {
		return "", nil
	}
	// The target as the server has it now, not as cached: an approval
	// comes back minutes later to check whether the room is still there.
	t.forget(call.AgentID)
	c := &invocation{t: t, ctx: ctx, call: call, agent: agent, op: "rctool.fingerprint"}
	r, err := c.resolve(arg, false)
	if err != nil {
		return "", fmt.Errorf("rocketchat fingerprint %s: %w", arg, err)
	}
	return fmt.Sprintf("room %s (id %s)", r.display(), r.ID), nil
}
