package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

// Starter starts an execution of the document-pipeline machine
// (shared/adapters/sfntoken.Machine). Starting the same name with the same
// input again is no new execution (Step Functions answers the running
// one). Returns ENOTFOUND when no machine is configured, EUNAVAILABLE when
// the service cannot be reached.
type Starter interface {
	Start(ctx context.Context, name, input string) (executionARN string, err error)
}

// Tool is Documents: deliver starts the pipeline and answers at once.
type Tool struct {
	Machine Starter
	// KV keeps a public link's password out of the execution's input.
	KV sb.KV
	// Checks are the tools the steps call, by name (Nextcloud,
	// RocketChat): before the machine starts, each runs its own argument
	// checks (Preflight) on the call its step will make.
	Checks map[string]Preflighter
	// Workspace is the workspace store: the file to deliver must be in it.
	Workspace sb.BlobStore
	// Rooms returns an agent's Rocket.Chat room settings; ok is false when
	// the agent has no RocketChat block.
	Rooms func(agentID string) (r Rooms, ok bool)
	// Chains remembers each execution under its run's chain, so that
	// stopping the chain stops the delivery (control.Control); nil: a
	// stop leaves deliveries running.
	Chains ExecutionRecorder
	Log    *slog.Logger
}

// ExecutionRecorder remembers the pipeline executions a chain started
// (control.Control's RecordExecution).
type ExecutionRecorder interface {
	RecordExecution(ctx context.Context, rootRunID, executionARN string) error
}

// Preflighter is a tool's own check of a call (shared/tools.Preflighter):
// nil when the call can succeed as far as the tool can tell without acting.
type Preflighter interface {
	Preflight(ctx context.Context, call sb.ToolCall) error
}

// Rooms are an agent's Rocket.Chat room settings (its RocketChat block).
type Rooms struct {
	AllowedRooms []string // empty: every room
	DefaultRoom  string
}

var _ sb.Tool = (*Tool)(nil)

type shareArgs struct {
	With       *string `json:"with" schema:"minLength=1,maxLength=255" doc:"a Nextcloud user id (or group id with group: true) to share with"`
	Group      *bool   `json:"group" doc:"with names a group"`
	PublicLink *bool   `json:"publicLink" doc:"create a public link (needs a human's approval)"`
	ExpireDays *int    `json:"expireDays" schema:"minimum=1,maximum=3650" doc:"days until the share ends"`
	Password   *string `json:"password" schema:"minLength=1,maxLength=200" doc:"link password (public links only)"`
}

// deliverArgs are deliver's flat arguments; share is an object, which
// toolargs does not describe, so Spec adds its schema (shareArgs) by hand.
type deliverArgs struct {
	LocalPath *string `json:"localPath" required:"true" schema:"minLength=1,maxLength=600" doc:"the workspace file to deliver (personal:<path> or shared:<path>)"`
	Format    *string `json:"format" schema:"enum=pdf|xlsx|docx" doc:"convert to this format first (via Collabora)"`
	Folder    *string `json:"folder" schema:"maxLength=1024" doc:"Nextcloud folder inside your folder; default: your reports folder"`
	Room      *string `json:"room" schema:"minLength=1,maxLength=256" doc:"Rocket.Chat room for the link; default: your default room"`
	Tmid      *string `json:"tmid" schema:"minLength=1,maxLength=64" pattern:"^[A-Za-z0-9_-]+$" doc:"thread to post the link into"`
	Message   *string `json:"message" schema:"maxLength=4000" doc:"text posted with the link"`
}

// Spec implements switchboard.Tool.
func (t *Tool) Spec() sb.ToolSpec {
	return sb.ToolSpec{
		Name: ToolName,
		Description: "Deliver a document end to end: convert a workspace file (optional), upload it to Nextcloud, share it, " +
			"and post the link in Rocket.Chat. Runs in the background with retries; you are told the outcome in a later run.",
		Actions: []sb.ActionSpec{{
			Name:        "deliver",
			Description: "Start a delivery; answers at once with its executionId and status running. The outcome (or what failed, and what was done) comes to you in a follow-up run.",
			Parameters:  deliverSchema(),
		}},
	}
}

const deliverOp = "Documents.deliver"

func deliverSchema() map[string]any {
	s := toolargs.Schema(deliverArgs{}, toolargs.Vocab{})
	share := toolargs.Schema(shareArgs{}, toolargs.Vocab{})
	share["description"] = "share the uploaded file: with a user or group, or as a public link"
	s["properties"].(map[string]any)["share"] = share
	return s
}

// callArgs are all of deliver's arguments, decoded strictly (the executor
// has checked them against the schema already).
type callArgs struct {
	deliverArgs
	Share *shareArgs `json:"share"`
}

// Invoke implements switchboard.Tool.
func (t *Tool) Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope {
	if call.Action != "deliver" {
		return sb.FailErr(toolargs.UnknownAction(deliverOp, ToolName, call.Action, []string{"deliver"}))
	}
	d, err := t.delivery(call)
	if err == nil {
		err = t.check(ctx, call, d)
	}
	if err != nil {
		return sb.FailErr(err)
	}
	if t.Machine == nil {
		return sb.FailErr(sb.E(deliverOp, sb.EUNAVAILABLE, "document delivery is not set up on this instance (no state machine); use Nextcloud.upload and Nextcloud.share instead"))
	}
	in, _ := json.Marshal(State{Delivery: d})
	name := executionName(call, in)
	if sh := d.Share; sh != nil && sh.Password != "" {
		if t.KV == nil {
			return sb.FailErr(sb.E(deliverOp, sb.EUNAVAILABLE, "a link password cannot be kept on this instance; leave password out"))
		}
		if err := t.KV.Put(ctx, passwordKey(name), sh.Password, time.Now().Add(markerKeep)); err != nil {
			t.log().ErrorContext(ctx, "Documents.deliver: keeping the link password failed", "agent", call.AgentID, "run", call.Run.RunID, "err", err)
			return sb.FailErr(sb.E(deliverOp, sb.EUNAVAILABLE, "the delivery could not be started right now; try once more later"))
		}
		sh.Password, sh.PasswordKept = "", true
		in, _ = json.Marshal(State{Delivery: d})
	}
	arn, err := t.Machine.Start(ctx, name, string(in))
	if err != nil {
		t.log().ErrorContext(ctx, "Documents.deliver: the state machine did not start", "agent", call.AgentID, "run", call.Run.RunID, "err", err)
		return sb.FailErr(sb.E(deliverOp, sb.EUNAVAILABLE, "the delivery could not be started right now; try once more later, or use Nextcloud.upload and Nextcloud.share"))
	}
	if t.Chains != nil {
		// The delivery runs either way; only a later stop of the chain
		// would miss it.
		if err := t.Chains.RecordExecution(ctx, d.Run.RootRunID, arn); err != nil {
			t.log().ErrorContext(ctx, "Documents.deliver: the execution was not recorded under its chain; stopping the chain will not stop it",
				"agent", call.AgentID, "run", call.Run.RunID, "root", d.Run.RootRunID, "execution", arn, "err", err)
		}
	}
	return sb.OK(map[string]any{"executionId": name, "executionArn": arn, "status": "running",
		"message": "the delivery runs in the background; you will be told the outcome in a follow-up run. Do not start it again."})
}

// Preflight refuses, before the staging policy and before any execution
// starts, a delivery that can only fail (delivery and check); the executor
// calls it (shared/tools.Preflighter) and Invoke checks the same again.
func (t *Tool) Preflight(ctx context.Context, call sb.ToolCall) error {
	if call.Action != "deliver" {
		return nil // Invoke names the actions
	}
	d, err := t.delivery(call)
	if err != nil {
		return err
	}
	return t.check(ctx, call, d)
}

// notStarted begins every refusal of a delivery before it starts.
const notStarted = "Documents.deliver did not start (nothing was done): "

// check runs every check of d that needs no third party, before the
// machine starts: a delivery failing one would only fail in a step later,
// after telling the human. In order: the workspace path
// (workspace.Resolve); then each step's tool call through that tool's own
// Preflight — Nextcloud.convert (a format needs the agent's collaboraUrl),
// Nextcloud.upload (the folder inside the agent's rootPath, or its shared
// reports folder), Nextcloud.share (the share's shape, allowPublicShares),
// RocketChat.send_message (the room or a defaultRoom, the text, tmid); the
// room against allowedRooms; and last that the workspace file exists (one
// listing of the store, as RocketChat.send_file's preflight does; a store
// that cannot answer is no reason to refuse: the upload says it then).
// What only a server knows (a Nextcloud user, a room's existence when
// every room is allowed) is left to the steps.
func (t *Tool) check(ctx context.Context, call sb.ToolCall, d Delivery) error {
	refuse := func(code, msg string) error { return sb.E(deliverOp, code, notStarted+msg) }
	key, err := workspace.Resolve(d.AgentID, d.LocalPath)
	if err != nil {
		return refuse(sb.ErrorCode(err), "localPath: "+sb.ErrorMessage(err))
	}
	name := path.Base(key)
	folder := targetFolder(d.Folder)
	preflight := func(tool, action, what string, args any) error {
		p := t.Checks[tool]
		if p == nil {
			return nil
		}
		raw, _ := json.Marshal(args)
		err := p.Preflight(ctx, sb.ToolCall{AgentID: d.AgentID, Tool: tool, Action: action, Args: raw, Run: d.Run, Origin: sb.OriginAgent})
		if err != nil {
			return refuse(sb.ErrorCode(err), what+": "+sb.ErrorMessage(err))
		}
		return nil
	}
	if d.Format != "" {
		if err := preflight("Nextcloud", "convert", fmt.Sprintf("format %q", d.Format), sb.ConvertArgs{LocalPath: d.LocalPath, Format: d.Format}); err != nil {
			return err
		}
	}
	if err := preflight("Nextcloud", "upload", fmt.Sprintf("folder %q", d.Folder), sb.UploadArgs{LocalPath: d.LocalPath, RemotePath: folder + "/"}); err != nil {
		return err
	}
	if d.Share != nil {
		// The step shares the uploaded path; its name is only known then,
		// but any name in the folder meets the same checks.
		args := shareArgsOf(d.Share, folder+"/"+name)
		args.Password = d.Share.Password
		if err := preflight("Nextcloud", "share", "share", args); err != nil {
			return err
		}
	}
	post := sb.ChatPostArgs{Room: d.Room, Text: postText(d.Message, "https://nextcloud.invalid/f/1"), Tmid: d.Tmid}
	if err := preflight("RocketChat", "send_message", "posting the link", post); err != nil {
		return err
	}
	if t.Rooms != nil {
		rooms, ok := t.Rooms(d.AgentID)
		room := d.Room
		if room == "" {
			room = rooms.DefaultRoom
		}
		switch {
		case !ok:
			return refuse(sb.EINVALID, "this agent has no RocketChat block, so the link cannot be posted; use Nextcloud.upload and Nextcloud.share, or ask the operator for a RocketChat block")
		case len(rooms.AllowedRooms) > 0 && !roomListed(rooms.AllowedRooms, room):
			hint := "name one of those as listed"
			if rooms.DefaultRoom != "" {
				hint += ", or leave room out to post into " + rooms.DefaultRoom
			}
			return refuse(sb.EFORBIDDEN, fmt.Sprintf("room %q is not in this agent's allowedRooms (%s); %s", room, strings.Join(rooms.AllowedRooms, ", "), hint))
		}
	}
	if t.Workspace != nil {
		list, err := t.Workspace.List(ctx, key, 1)
		switch {
		case err != nil:
			t.log().WarnContext(ctx, "Documents.deliver: the workspace file could not be checked; the upload step will", "agent", d.AgentID, "run", d.Run.RunID, "err", err)
		case len(list) == 0 || list[0].Key != key:
			return refuse(sb.ENOTFOUND, fmt.Sprintf("localPath: there is no file %q in your workspace; Workspace.list shows your files (write it first, or name the right one)", d.LocalPath))
		}
	}
	return nil
}

// roomListed reports whether room is an allowedRooms entry as written
// (names case-insensitively, a leading # or @ ignored on both sides): the
// first test of rctool's own (unexported) list check. A delivery posts
// unattended, so it names its room as the list does; the tool's lookup of
// ids and DM counterparts needs Rocket.Chat.
func roomListed(list []string, room string) bool {
	bare := func(s string) string {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "#") || strings.HasPrefix(s, "@") {
			s = strings.TrimSpace(s[1:])
		}
		return s
	}
	r := bare(room)
	if r == "" {
		return false
	}
	for _, e := range list {
		if strings.EqualFold(bare(e), r) {
			return true
		}
	}
	return false
}

// delivery checks the arguments and builds the machine's input.
func (t *Tool) delivery(call sb.ToolCall) (Delivery, error) {
	var a callArgs
	dec := json.NewDecoder(bytes.NewReader(call.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return Delivery{}, sb.E(deliverOp, sb.EINVALID, "args of Documents.deliver are wrong ("+err.Error()+`); it needs {"localPath": "<workspace file>", …}; see GET /tools`)
	}
	if call.Run.RunID == "" {
		return Delivery{}, sb.E(deliverOp, sb.EINVALID, "Documents.deliver works only inside an agent run: the outcome comes back to the run that started it")
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return strings.TrimSpace(*p)
	}
	d := Delivery{AgentID: call.AgentID, Run: call.Run, LocalPath: str(a.LocalPath), Format: str(a.Format),
		Folder: str(a.Folder), Room: str(a.Room), Tmid: str(a.Tmid), Message: str(a.Message)}
	if d.LocalPath == "" {
		return Delivery{}, sb.E(deliverOp, sb.EINVALID, `Documents.deliver needs {"localPath": "<workspace file>"}`)
	}
	if a.Room != nil && d.Room == "" {
		return Delivery{}, sb.E(deliverOp, sb.EINVALID, "room is blank; name the room to post the link into, or leave room out for your default room")
	}
	if strings.Contains(d.Folder, "..") {
		return Delivery{}, sb.E(deliverOp, sb.EINVALID, "folder must stay inside your Nextcloud folder; leave it out for your reports folder")
	}
	if call.ReplyTo.Routable() {
		d.ReplyTo = call.ReplyTo.Clone()
	}
	if d.Run.RootRunID == "" {
		d.Run.RootRunID = d.Run.RunID
	}
	if a.Share != nil {
		s := Share{With: str(a.Share.With), Password: str(a.Share.Password)}
		s.Group = a.Share.Group != nil && *a.Share.Group
		s.PublicLink = a.Share.PublicLink != nil && *a.Share.PublicLink
		if a.Share.ExpireDays != nil {
			s.ExpireDays = *a.Share.ExpireDays
		}
		switch {
		case s.PublicLink && s.With != "":
			return Delivery{}, sb.E(deliverOp, sb.EINVALID, "share takes either with (a user or group) or publicLink: true, not both")
		case !s.PublicLink && s.With == "":
			return Delivery{}, sb.E(deliverOp, sb.EINVALID, `share needs {"with": "<user>"} or {"publicLink": true}`)
		case !s.PublicLink && s.Password != "":
			return Delivery{}, sb.E(deliverOp, sb.EINVALID, "password is for public links only")
		}
		d.Share, d.HasShare = &s, true
		d.PublicLink = s.PublicLink
	}
	return d, nil
}

// executionName names the execution after the run and the arguments: the
// same call repeated in the same run starts no second delivery. Step
// Functions allows 80 characters of [A-Za-z0-9-_].
func executionName(call sb.ToolCall, input []byte) string {
	h := sha256.Sum256(append([]byte(call.Run.RunID+"\x00"), input...))
	return fmt.Sprintf("doc-%s-%s", safeName(call.AgentID, 24), hex.EncodeToString(h[:12]))
}

func safeName(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= max {
			break
		}
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func (t *Tool) log() *slog.Logger {
	if t.Log != nil {
		return t.Log
	}
	return slog.Default()
}
