package nctool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// ToolName is the name models and POST /tools/invoke use.
const ToolName = "Nextcloud"

// Defaults.
const (
	DefaultShareExpireDays   = 14 // shareDefaultExpireDays when unset
	DefaultReportsMaxAgeDays = 90 // reports older than 90 days are cleaned up
	// ReportsFolder is the folder below rootPath whose files Cleanup ages
	// out and whose locked files upload saves under a timestamped name.
	ReportsFolder = "reports"
)

// Agent is one agent's Nextcloud side: its client (usually the shared
// service account), an optional Collabora client, and the
// Nextcloud block of its configuration.
type Agent struct {
	Client    sb.Files
	Collabora sb.Converter // nil: no collaboraUrl, convert is unavailable
	// RootPath is the agent's folder in the account; every path
	// argument resolves inside it. Empty refuses every action.
	RootPath string
	// SharedReportsPath (optional) is a folder outside RootPath that the
	// people see (the seed's shared reports folder): paths written
	// shared-reports:… resolve inside it.
	SharedReportsPath string
	AllowPublicShares bool // false (the default) refuses link shares
	// ShareDefaultExpireDays is the expiry of link shares when the call
	// names none: 0 means DefaultShareExpireDays, negative means no expiry.
	ShareDefaultExpireDays int
	// ReportsMaxAgeDays is Cleanup's age limit; 0 means DefaultReportsMaxAgeDays.
	ReportsMaxAgeDays int
	// AgentName labels the link shares the agent creates, so people can
	// tell in Nextcloud who made a link.
	AgentName string
	// BaseURL (optional) is the Nextcloud address people open; with it,
	// user and group shares answer an internal_url ({BaseURL}/f/{fileid}).
	BaseURL string
}

func (a Agent) shareDefaultDays() int {
	switch {
	case a.ShareDefaultExpireDays == 0:
		return DefaultShareExpireDays
	case a.ShareDefaultExpireDays < 0:
		return 0
	}
	return a.ShareDefaultExpireDays
}

func (a Agent) reportsMaxAge() int {
	if a.ReportsMaxAgeDays <= 0 {
		return DefaultReportsMaxAgeDays
	}
	return a.ReportsMaxAgeDays
}

// Tool is the Nextcloud tool. It is safe for concurrent use.
type Tool struct {
	agents func(agentID string) (Agent, bool)
	blobs  sb.BlobStore
	now    func() time.Time
	log    *slog.Logger
}

var (
	_ sb.Tool             = (*Tool)(nil)
	_ staging.Conditioner = (*Tool)(nil)
	_ tools.Preflighter   = (*Tool)(nil)
)

// New builds the tool. agents returns an agent's Nextcloud side, ok false
// when the agent has no Nextcloud block; blobs holds the workspace files
// upload reads and download writes; now is the clock for share expiry,
// timestamped names and Cleanup (nil = time.Now). Expiry dates are computed
// from now in UTC, because Nextcloud compares them with its own date.
func New(agents func(agentID string) (Agent, bool), blobs sb.BlobStore, now func() time.Time) *Tool {
	if now == nil {
		now = time.Now
	}
	return &Tool{agents: agents, blobs: blobs, now: now, log: slog.Default()}
}

// SetLogger replaces the logger (default slog.Default()).
func (t *Tool) SetLogger(l *slog.Logger) { t.log = l }

// actions maps action names to their handlers.
var actions = map[string]func(*invocation) sb.Envelope{
	"upload":          (*invocation).upload,
	"download":        (*invocation).download,
	"list":            (*invocation).list,
	"stat":            (*invocation).stat,
	"mkdir":           (*invocation).mkdir,
	"move":            (*invocation).move,
	"delete":          (*invocation).delete,
	"search":          (*invocation).search,
	"versions":        (*invocation).versions,
	"restore_version": (*invocation).restoreVersion,
	"trash":           (*invocation).trash,
	"favorite":        (*invocation).favorite,
	"quota":           (*invocation).quota,
	"capabilities":    (*invocation).capabilities,
	"convert":         (*invocation).convert,
	"share":           (*invocation).share,
	"shares":          (*invocation).shares,
	"unshare":         (*invocation).unshare,
}

// invocation is one call in flight.
type invocation struct {
	t     *Tool
	ctx   context.Context
	call  sb.ToolCall
	agent Agent
	nc    sb.Files
	scope scope
	op    string
	// preflight: check the arguments and stop before the first call that
	// acts (or asks a server); see Preflight.
	preflight bool
}

// Invoke runs one action and always answers with an envelope.
func (t *Tool) Invoke(ctx context.Context, call sb.ToolCall) (env sb.Envelope) {
	defer func() {
		if r := recover(); r != nil {
			env = toolargs.Panicked(ctx, t.log, "nextcloud", call, r, "nctool."+call.Action, "Nextcloud."+call.Action)
		}
	}()
	run, ok := actions[call.Action]
	if !ok {
		return sb.FailErr(toolargs.UnknownAction("nctool", ToolName, call.Action, t.Spec().ActionNames()))
	}
	c, err := t.invocation(ctx, call, false)
	if err != nil {
		return sb.FailErr(err)
	}
	return run(c)
}

// invocation starts call for its agent: EFORBIDDEN when the agent has no
// Nextcloud block, EINVALID when its folders are wrong.
func (t *Tool) invocation(ctx context.Context, call sb.ToolCall, preflight bool) (*invocation, error) {
	agent, ok := t.agents(call.AgentID)
	if !ok || agent.Client == nil {
		return nil, toolargs.NotConfigured("nctool", call.AgentID, "Nextcloud")
	}
	sc, err := newScope(agent.RootPath)
	if err == nil {
		sc, err = sc.withShared(agent.SharedReportsPath)
	}
	if err != nil {
		return nil, err
	}
	return &invocation{t: t, ctx: ctx, call: call, agent: agent, nc: agent.Client, scope: sc, op: "nctool." + call.Action, preflight: preflight}, nil
}

// Preflight runs an action's argument checks without acting, so that the
// executor refuses a call that can only fail before anyone is asked to
// approve it: bad arguments, paths that leave the agent's folder, a share
// that cannot be made, and for delete a path that does not exist (one
// PROPFIND). Everything else that needs the server is left to Invoke.
func (t *Tool) Preflight(ctx context.Context, call sb.ToolCall) error {
	run, ok := actions[call.Action]
	if !ok {
		return nil // the executor refuses unknown actions itself
	}
	agent, ok := t.agents(call.AgentID)
	if !ok || agent.Client == nil {
		return nil // Invoke says what to configure
	}
	sc, err := newScope(agent.RootPath)
	if err == nil {
		sc, err = sc.withShared(agent.SharedReportsPath)
	}
	if err != nil {
		return err
	}
	c := &invocation{t: t, ctx: ctx, call: call, agent: agent, nc: agent.Client, scope: sc, op: "nctool." + call.Action, preflight: true}
	if env := run(c); env.Status == "error" {
		return toolargs.Refusal(c.op, env)
	}
	return nil
}

// checked is what an action answers in a preflight once its arguments pass.
var checked = sb.Envelope{Status: "ok"}

// Condition names the staging condition of call: for share,
// "public" when it asks for a link share (shareType 3) and the agent may
// create them, "public_not_allowed" when it may not; "" otherwise. Invoke
// refuses disallowed link shares itself, so staging is never the only guard.
func (t *Tool) Condition(call sb.ToolCall) string {
	if call.Action != "share" {
		return ""
	}
	var a struct {
		ShareType json.RawMessage `json:"shareType"`
	}
	if raw := bytes.TrimSpace(call.Args); len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return ""
		}
	}
	// Any spelling of 3 counts ("3", 3.0): staging must not be talked out
	// of an approval by a number's form; Invoke then accepts only 3.
	typ, err := strconv.ParseFloat(strings.Trim(string(bytes.TrimSpace(a.ShareType)), `"`), 64)
	if err != nil || typ != float64(sb.ShareLink) {
		return ""
	}
	agent, ok := t.agents(call.AgentID)
	if ok && agent.AllowPublicShares {
		return "public"
	}
	return "public_not_allowed"
}

// Fingerprint describes the file or folder a delete or share acts on (its
// etag, from one PROPFIND), so that an approved call on an entry replaced
// meanwhile is refused; ENOTFOUND when it is gone; "" for the other
// actions.
func (t *Tool) Fingerprint(ctx context.Context, call sb.ToolCall) (string, error) {
	if call.Action != "delete" && call.Action != "share" {
		return "", nil
	}
	c, err := t.invocation(ctx, call, true)
	if err != nil {
		return "", nil
	}
	p, err := c.pathArg()
	if err != nil {
		return "", nil
	}
	info, err := c.nc.Stat(ctx, p)
	if err != nil {
		return "", fmt.Errorf("nextcloud fingerprint %s: %w", c.scope.show(p), err)
	}
	return fmt.Sprintf("%s with etag %s", c.scope.show(p), info.ETag), nil
}
