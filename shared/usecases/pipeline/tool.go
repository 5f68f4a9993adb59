package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// Starter starts an execution of the document-pipeline machine
// (shared/adapters/sfn.Machine). Starting the same name with the same
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
	KV  sb.KV
	Log *slog.Logger
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
	return sb.OK(map[string]any{"executionId": name, "executionArn": arn, "status": "running",
		"message": "the delivery runs in the background; you will be told the outcome in a follow-up run. Do not start it again."})
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
