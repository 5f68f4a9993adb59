package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// ToolName is the name models and POST /tools/invoke use.
const ToolName = "Workspace"

// Read and list bounds.
const (
	DefaultReadBytes = 64 << 10 // read answers at most this much unless maxBytes says otherwise
	MaxReadBytes     = 1 << 20  // the largest maxBytes read accepts: answers go into a model's context
	ListLimit        = 500      // entries per scope in one list answer
	// DefaultMaxFileBytes applies when limits reports ok with maxBytes <= 0;
	// it matches the config default Workspace.maxFileMb = 25.
	DefaultMaxFileBytes = 25 << 20
)

// Tool is the Workspace tool: write, read, list and delete files in the
// agent's workspace (see Resolve for paths).
type Tool struct {
	store  sb.BlobStore
	limits func(agentID string) (maxBytes int64, ok bool)
}

var (
	_ sb.Tool           = (*Tool)(nil)
	_ tools.Preflighter = (*Tool)(nil)
)

// NewTool builds the tool over store. limits tells, per agent, the largest
// file write may store (Workspace.maxFileMb in bytes) and whether the agent
// has a Workspace block at all; ok == false answers every call with an error
// envelope.
func NewTool(store sb.BlobStore, limits func(agentID string) (maxBytes int64, ok bool)) *Tool {
	return &Tool{store: store, limits: limits}
}

const pathDoc = "workspace path: personal:<path> for your own files (the prefix may be left out), " +
	"shared:<path> for files every agent sees; folders separated by /, no .., no leading /, no colon after the prefix"

// The arguments of every action, declared once: Spec derives the JSON
// Schema offered to models from these tags and decodeArgs enforces the same
// limits (see toolargs). Paths are checked by Resolve.
type (
	writeArgs struct {
		Path    *string `json:"path" required:"true" schema:"minLength=1"`
		Content *string `json:"content" required:"true" doc:"the whole file content as text (UTF-8)"`
	}
	readArgs struct {
		Path     *string `json:"path" required:"true" schema:"minLength=1"`
		MaxBytes *int64  `json:"maxBytes" schema:"minimum=1,maximum=1048576,default=65536" doc:"read at most this many bytes (default 65536, at most 1048576)"`
	}
	listArgs struct {
		Prefix *string `json:"prefix" doc:"folder to list, such as personal:, shared: or shared:reports/; a bare folder name is personal"`
	}
	deleteArgs struct {
		Path *string `json:"path" required:"true" schema:"minLength=1"`
	}
)

// vocab holds the path description the actions share.
var vocab = toolargs.Vocab{Docs: map[string]string{"path": pathDoc}}

// Spec describes the actions; each action's schema comes from its argument
// struct.
func (t *Tool) Spec() sb.ToolSpec {
	action := func(name, desc string, args any) sb.ActionSpec {
		return sb.ActionSpec{Name: name, Description: desc, Parameters: toolargs.Schema(args, vocab)}
	}
	return sb.ToolSpec{
		Name:        ToolName,
		Description: "Your file workspace: write text files, read them back, list and delete them. Files here can be sent to chat or uploaded to Nextcloud by their path.",
		Actions: []sb.ActionSpec{
			action("write", "Write a text file, replacing it if it exists. Folders are created as needed. Answers the path and size.", writeArgs{}),
			action("read", "Read a text file. Answers content, size, modified and truncated (true when the file is longer than maxBytes). "+
				"Binary files are refused: send or upload them by path instead.", readArgs{}),
			action("list", fmt.Sprintf("List files with path, size and modified time, sorted by path, at most %d per scope. "+
				"Without prefix it lists personal: and shared:.", ListLimit), listArgs{}),
			action("delete", "Delete one file.", deleteArgs{}),
		},
	}
}

// Invoke runs one action. Every answer is an envelope; internal error text
// goes to the log only.
func (t *Tool) Invoke(ctx context.Context, call sb.ToolCall) (env sb.Envelope) {
	defer func() {
		if r := recover(); r != nil {
			env = toolargs.Panicked(ctx, slog.Default(), "workspace", call, r, "workspace."+call.Action, "the workspace")
		}
	}()
	maxBytes, ok := t.limits(call.AgentID)
	if !ok {
		return sb.FailErr(toolargs.NotConfigured("workspace", call.AgentID, "Workspace"))
	}
	c := &invocation{t: t, ctx: ctx, call: call}
	return c.run(maxBytes)
}

// Preflight runs an action's argument checks without acting, so that the
// executor refuses a call that can only fail before anyone is asked to
// approve it: bad arguments, paths outside the workspace, content over the
// size limit, and for delete a file that is not there (one store listing).
func (t *Tool) Preflight(ctx context.Context, call sb.ToolCall) error {
	maxBytes, ok := t.limits(call.AgentID)
	if !ok {
		return nil // Invoke says what to configure
	}
	c := &invocation{t: t, ctx: ctx, call: call, preflight: true}
	if env := c.run(maxBytes); env.Status == "error" {
		return toolargs.Refusal("workspace."+call.Action, env)
	}
	return nil
}

// checked is what an action answers in a preflight once its arguments pass.
var checked = sb.Envelope{Status: "ok"}

func (c *invocation) run(maxBytes int64) sb.Envelope {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxFileBytes
	}
	t, call := c.t, c.call
	switch call.Action {
	case "write":
		return c.write(maxBytes)
	case "read":
		return c.read()
	case "list":
		return c.list()
	case "delete":
		return c.delete()
	}
	return sb.FailErr(toolargs.UnknownAction("workspace", ToolName, call.Action, t.Spec().ActionNames()))
}

// invocation is one call in flight.
type invocation struct {
	t    *Tool
	ctx  context.Context
	call sb.ToolCall
	// preflight: check the arguments and stop before the store changes;
	// see Preflight.
	preflight bool
}

func (c *invocation) write(maxBytes int64) sb.Envelope {
	var a writeArgs
	if err := decodeArgs(c.call, &a); err != nil {
		return sb.FailErr(err)
	}
	if a.Path == nil {
		return missing("write", "path")
	}
	if a.Content == nil {
		return missing("write", "content")
	}
	key, ref, err := c.resolve(*a.Path)
	if err != nil {
		return sb.FailErr(err)
	}
	size := int64(len(*a.Content))
	if size > maxBytes {
		return sb.FailErr(sb.E("workspace.write", sb.EINVALID, fmt.Sprintf(
			"the content is %s, more than this agent's limit of %s per file; write a shorter file or split it into parts",
			humanBytes(size), humanBytes(maxBytes))))
	}
	if c.preflight {
		return checked
	}
	if err := c.t.store.Put(c.ctx, key, strings.NewReader(*a.Content), size, contentType(key)); err != nil {
		return c.storeFailure("write", ref, err)
	}
	return sb.OK(map[string]any{"path": ref, "size": size})
}

func (c *invocation) read() sb.Envelope {
	var a readArgs
	if err := decodeArgs(c.call, &a); err != nil {
		return sb.FailErr(err)
	}
	if a.Path == nil {
		return missing("read", "path")
	}
	limit := int64(DefaultReadBytes)
	if a.MaxBytes != nil {
		limit = *a.MaxBytes // decodeArgs checked the range
	}
	key, ref, err := c.resolve(*a.Path)
	if err != nil {
		return sb.FailErr(err)
	}
	if c.preflight {
		return checked
	}
	rc, info, err := c.t.store.Get(c.ctx, key)
	if err != nil {
		if sb.ErrorCode(err) == sb.ENOTFOUND {
			return c.notFound(key, ref)
		}
		return c.storeFailure("read", ref, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit))
	if err != nil {
		return c.storeFailure("read", ref, err)
	}
	truncated := int64(len(b)) < info.Size
	text, isText := asText(b, truncated)
	if !isText {
		return sb.FailErr(sb.E("workspace.read", sb.EINVALID, fmt.Sprintf(
			"%s is a binary file (%s) and read only returns text; use it by its path instead, for example RocketChat send_file or Nextcloud upload with %s",
			ref, humanBytes(info.Size), ref)))
	}
	data := map[string]any{
		"path":      ref,
		"content":   text,
		"size":      info.Size,
		"modified":  info.Modified.UTC().Format(time.RFC3339),
		"truncated": truncated,
	}
	if truncated {
		data["note"] = fmt.Sprintf("this is the first %d of %d bytes; read again with a larger maxBytes (at most %d) for more",
			len(text), info.Size, MaxReadBytes)
	}
	return sb.OK(data)
}

func (c *invocation) list() sb.Envelope {
	var a listArgs
	if err := decodeArgs(c.call, &a); err != nil {
		return sb.FailErr(err)
	}
	refs := []string{PrefixPersonal, PrefixShared}
	if a.Prefix != nil && *a.Prefix != "" {
		refs = []string{*a.Prefix}
	}
	entries := []map[string]any{}
	truncated := false
	var shown []string
	for _, ref := range refs {
		prefix, err := ResolvePrefix(c.call.AgentID, ref)
		if err != nil {
			return sb.FailErr(err)
		}
		if c.preflight {
			continue
		}
		shown = append(shown, displayPrefix(c.call.AgentID, prefix))
		// One more than shown tells whether there is more.
		blobs, err := c.t.store.List(c.ctx, prefix, ListLimit+1)
		if err != nil {
			return c.storeFailure("list", ref, err)
		}
		if len(blobs) > ListLimit {
			blobs, truncated = blobs[:ListLimit], true
		}
		for _, b := range blobs {
			p := DisplayRef(c.call.AgentID, b.Key)
			if p == "" {
				continue // a key no workspace path can name (written by something else)
			}
			entries = append(entries, map[string]any{
				"path": p, "size": b.Size, "modified": b.Modified.UTC().Format(time.RFC3339),
			})
		}
	}
	if c.preflight {
		return checked
	}
	data := map[string]any{"entries": entries, "count": len(entries), "truncated": truncated}
	if len(shown) == 1 {
		data["prefix"] = shown[0]
	}
	switch {
	case truncated:
		data["note"] = fmt.Sprintf("only the first %d files per scope are listed; list a narrower folder to see the rest", ListLimit)
	case len(entries) == 0:
		data["note"] = fmt.Sprintf("there are no files under %s", strings.Join(shown, " or "))
	}
	return sb.OK(data)
}

func (c *invocation) delete() sb.Envelope {
	var a deleteArgs
	if err := decodeArgs(c.call, &a); err != nil {
		return sb.FailErr(err)
	}
	if a.Path == nil {
		return missing("delete", "path")
	}
	key, ref, err := c.resolve(*a.Path)
	if err != nil {
		return sb.FailErr(err)
	}
	// The port deletes missing keys silently; the agent should hear that
	// the file was not there (a typo deletes nothing).
	exists, err := c.exists(key)
	if err != nil {
		if c.preflight {
			return checked // cannot tell now; Invoke checks again
		}
		return c.storeFailure("delete", ref, err)
	}
	if !exists {
		return c.notFound(key, ref)
	}
	if c.preflight {
		return checked
	}
	if err := c.t.store.Delete(c.ctx, key); err != nil {
		return c.storeFailure("delete", ref, err)
	}
	return sb.OK(map[string]any{"path": ref, "deleted": true})
}

// resolve checks the path and returns its key and canonical path.
func (c *invocation) resolve(ref string) (key, canonical string, err error) {
	key, err = Resolve(c.call.AgentID, ref)
	if err != nil {
		return "", "", err
	}
	return key, DisplayRef(c.call.AgentID, key), nil
}

// exists reports whether key is a stored object (List sorts by key, so an
// exact match comes first).
func (c *invocation) exists(key string) (bool, error) {
	blobs, err := c.t.store.List(c.ctx, key, 1)
	if err != nil {
		return false, err
	}
	return len(blobs) == 1 && blobs[0].Key == key, nil
}

// notFound answers for a missing file, pointing at the folder to list, or
// saying that the path is a folder.
func (c *invocation) notFound(key, ref string) sb.Envelope {
	if blobs, err := c.t.store.List(c.ctx, key+"/", 1); err == nil && len(blobs) > 0 {
		return sb.FailErr(sb.E("workspace."+c.call.Action, sb.EINVALID, fmt.Sprintf(
			"%s is a folder, not a file; list %s/ to see its files", ref, ref)))
	}
	folder := PrefixPersonal
	if strings.HasPrefix(ref, PrefixShared) {
		folder = PrefixShared
	}
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		folder = ref[:i+1]
	}
	return sb.FailErr(sb.E("workspace."+c.call.Action, sb.ENOTFOUND, fmt.Sprintf(
		"no file %s in the workspace; list %s to see what exists", ref, folder)))
}

// storeFailure logs err and answers with a caller-safe message.
func (c *invocation) storeFailure(verb, ref string, err error) sb.Envelope {
	slog.ErrorContext(c.ctx, "workspace store failed", "action", c.call.Action, "agent", c.call.AgentID,
		"path", ref, "runId", c.call.Run.RunID, "rootRunId", c.call.Run.RootRunID, "err", err.Error())
	op := "workspace." + c.call.Action
	if sb.ErrorCode(err) == sb.EUNAVAILABLE || errors.Is(err, context.DeadlineExceeded) {
		return sb.FailErr(sb.E(op, sb.EUNAVAILABLE, fmt.Sprintf(
			"could not %s %s: the workspace storage is unavailable right now; try again in a minute", verb, ref)))
	}
	return sb.FailErr(sb.E(op, sb.EINTERNAL, fmt.Sprintf(
		"could not %s %s because of an internal error; the operator can find details in the logs", verb, ref)))
}

func missing(action, arg string) sb.Envelope {
	return sb.FailErr(sb.E("workspace."+action, sb.EINVALID, fmt.Sprintf(
		"missing argument %q; %s needs %s", arg, action, argList(action))))
}

func argList(action string) string {
	switch action {
	case "write":
		return "path and content"
	case "read":
		return "path (and optionally maxBytes)"
	case "list":
		return "nothing, or a prefix"
	}
	return "path"
}

// decodeArgs decodes the call's args strictly into dst and checks the
// limits its tags declare (toolargs.Decode): one JSON object, only the
// declared arguments (exact case), each of the right type. Errors are
// EINVALID and name the argument.
func decodeArgs(call sb.ToolCall, dst any) error {
	return toolargs.Args{Op: "workspace." + call.Action, Action: call.Action}.Decode(call.Args, dst)
}

// asText returns b as text when it is UTF-8 without NUL bytes. A read cut
// short may end inside a character; that partial character is dropped.
func asText(b []byte, truncated bool) (string, bool) {
	if truncated {
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.Valid(b); i++ {
			b = b[:len(b)-1]
		}
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return "", false
	}
	return string(b), true
}

// contentType guesses from the file ending; workspace writes are text.
func contentType(key string) string {
	if t := mime.TypeByExtension(path.Ext(key)); t != "" {
		return t
	}
	return "text/plain; charset=utf-8"
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Fingerprint describes the file a delete acts on (size and modification
// time, from one listing of the store), so that an approved delete of a
// file replaced meanwhile is refused; ENOTFOUND when it is gone; "" for
// the other actions.
func (t *Tool) Fingerprint(ctx context.Context, call sb.ToolCall) (string, error) {
	if call.Action != "delete" {
		return "", nil
	}
	var a deleteArgs
	if err := decodeArgs(call, &a); err != nil || a.Path == nil {
		return "", nil
	}
	c := &invocation{t: t, ctx: ctx, call: call}
	key, ref, err := c.resolve(*a.Path)
	if err != nil {
		return "", nil
	}
	blobs, err := t.store.List(ctx, key, 1)
	if err != nil {
		return "", fmt.Errorf("workspace fingerprint %s: %w", ref, err)
	}
	if len(blobs) != 1 || blobs[0].Key != key {
		return "", sb.E("workspace.fingerprint", sb.ENOTFOUND, ref+" does not exist")
	}
	return fmt.Sprintf("file %s of %d bytes, modified %s", ref, blobs[0].Size, blobs[0].Modified.UTC().Format(time.RFC3339Nano)), nil
}
