package rctool

import (
	"fmt"
	"mime"
	"path"
	"strings"
	"time"
	"unicode"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

const tsLayout = "2006-01-02T15:04:05.000Z07:00"

func (c *invocation) sendMessage() sb.Envelope { return c.posted(c.doSendMessage()) }

func (c *invocation) reply() sb.Envelope { return c.posted(c.doReply()) }

// post is a message send_message or reply posted; nil in a preflight.
type post struct {
	sent sb.ChatSent
	room room
	tmid string
}

func (c *invocation) doSendMessage() (*post, error) {
	var a sendMessageArgs
	if err := c.decodeArgs(&a); err != nil {
		return nil, err
	}
	roomArg := c.agent.DefaultRoom
	switch {
	case a.Room != nil:
		roomArg = *a.Room // an empty room is refused by resolve, not replaced
	case strings.TrimSpace(roomArg) == "":
		return nil, sb.E(c.op, sb.EINVALID, "no room given and this agent has no defaultRoom; name the room (list_rooms shows them)")
	}
	return c.post(roomArg, a.Text, a.Tmid, false)
}

func (c *invocation) doReply() (*post, error) {
	var a replyArgs
	if err := c.decodeArgs(&a); err != nil {
		return nil, err
	}
	if a.Room == nil {
		return nil, sb.E(c.op, sb.EINVALID, "missing argument \"room\"; reply takes {room, tmid, text}")
	}
	return c.post(*a.Room, a.Text, a.Tmid, true)
}

// post is send_message and reply: check, resolve, allow, post.
func (c *invocation) post(roomArg string, textArg, tmidArg *string, needThread bool) (*post, error) {
	text, err := c.text("text", textArg)
	if err != nil {
		return nil, err
	}
	tmid, err := c.id("tmid", tmidArg, needThread)
	if err != nil {
		return nil, err
	}
	if c.preflight {
		return nil, nil
	}
	r, err := c.checkedRoom(roomArg, true)
	if err != nil {
		return nil, err
	}
	sent, err := c.agent.Client.PostMessage(c.ctx, r.ID, text, tmid)
	if err != nil {
		return nil, err
	}
	return &post{sent: sent, room: r, tmid: tmid}, nil
}

// posted is the model's answer for a post.
func (c *invocation) posted(p *post, err error) sb.Envelope {
	if err != nil {
		return c.fail(err)
	}
	if p == nil {
		return checked
	}
	data := map[string]any{
		sb.PostedRoomIDKey:    p.roomID(),
		"room":                p.room.display(),
		sb.PostedMessageIDKey: p.sent.ID,
		"ts":                  rfc(p.sent.At),
	}
	if p.tmid != "" {
		data["tmid"] = p.tmid
	}
	return sb.OK(data)
}

// roomID is the room the message went to, as the server says it.
func (p *post) roomID() string { return firstNonEmpty(p.sent.RoomID, p.room.ID) }

// sendFile sends a workspace file into a room in two steps.
func (c *invocation) sendFile() sb.Envelope { return c.sentFile(c.doSendFile()) }

// sent is a file send_file posted; nil in a preflight.
type sent struct {
	msg  sb.ChatMessage
	room room
	name string
	size int64
	ref  string
}

func (c *invocation) doSendFile() (*sent, error) {
	var a sendFileArgs
	if err := c.decodeArgs(&a); err != nil {
		return nil, err
	}
	if a.LocalPath == nil {
		return nil, sb.E(c.op, sb.EINVALID, "missing argument \"localPath\"; send_file takes {room, localPath, fileName?, description?, tmid?} with a workspace path such as personal:reports/q3.md")
	}
	if a.Room == nil {
		return nil, sb.E(c.op, sb.EINVALID, "missing argument \"room\"; send_file takes {room, localPath, fileName?, description?, tmid?}")
	}
	roomArg, err := c.text("room", a.Room)
	if err != nil {
		return nil, err
	}
	localPath, err := c.text("localPath", a.LocalPath)
	if err != nil {
		return nil, err
	}
	description := c.optional(a.Description)
	tmid, err := c.id("tmid", a.Tmid, false)
	if err != nil {
		return nil, err
	}
	// Every path rule lives in workspace.Resolve: prefixes, "..", absolute
	// paths, colons, backslashes, control characters.
	key, err := workspace.Resolve(c.call.AgentID, localPath)
	if err != nil {
		return nil, err
	}
	ref := workspace.DisplayRef(c.call.AgentID, key)
	name := path.Base(key)
	if a.FileName != nil {
		if name, err = c.outgoingName(*a.FileName); err != nil {
			return nil, err
		}
	}
	limitMB := c.agent.MaxUploadMB
	if limitMB <= 0 {
		limitMB = DefaultMaxUploadMB
	}
	tooLarge := func(size int64) error {
		return sb.E(c.op, sb.EINVALID, fmt.Sprintf("%s is %s, more than this agent's upload limit of %d MB (RocketChat.maxUploadMb); send a smaller file, or upload it to Nextcloud and share a link",
			ref, sb.HumanSize(size), limitMB))
	}
	if c.preflight {
		return nil, c.fileThere(key, ref, int64(limitMB)<<20, tooLarge)
	}

	r, err := c.checkedRoom(roomArg, true)
	if err != nil {
		return nil, err
	}

	body, info, err := c.t.blobs.Get(c.ctx, key)
	if err != nil {
		if sb.ErrorCode(err) == sb.ENOTFOUND {
			return nil, sb.E(c.op, sb.ENOTFOUND, fmt.Sprintf("no file %s in the workspace; check the path (Workspace list shows the files)", ref))
		}
		return nil, c.storeError("read", ref, err)
	}
	defer body.Close()
	if info.Size > int64(limitMB)<<20 {
		return nil, tooLarge(info.Size)
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	msg, err := c.agent.Client.UploadFile(c.ctx, r.ID, name, ctype, body, info.Size, description, tmid)
	if err != nil {
		if sb.ErrorCode(err) == sb.EFORBIDDEN {
			// rooms.media answers 403 for rooms the user cannot post into.
			return nil, sb.Wrap(c.op, sb.EFORBIDDEN, fmt.Sprintf(
				"Rocket.Chat refused the upload into %s (403); the agent's user is probably not a member of that room", r.display()), err)
		}
		return nil, err
	}
	return &sent{msg: msg, room: r, name: name, size: info.Size, ref: ref}, nil
}

// sentFile is the model's answer for a sent file.
func (c *invocation) sentFile(f *sent, err error) sb.Envelope {
	if err != nil {
		return c.fail(err)
	}
	if f == nil {
		return checked
	}
	data := map[string]any{
		sb.PostedRoomIDKey:    f.roomID(),
		"room":                f.room.display(),
		sb.PostedMessageIDKey: f.msg.ID,
		"fileName":            f.name,
		"size":                f.size,
		"path":                f.ref,
	}
	if len(f.msg.Files) > 0 {
		data["fileId"] = f.msg.Files[0].ID
	}
	if !f.msg.At.IsZero() {
		data["ts"] = rfc(f.msg.At)
	}
	return sb.OK(data)
}

// roomID is the room the file went to, as the server says it.
func (f *sent) roomID() string { return firstNonEmpty(f.msg.RoomID, f.room.ID) }

// fileThere is send_file's preflight: the workspace file exists and is
// within the upload limit. It lists the store (there is no stat) with the
// key as prefix; a store that cannot answer is no reason to refuse.
func (c *invocation) fileThere(key, ref string, limit int64, tooLarge func(int64) error) error {
	list, err := c.t.blobs.List(c.ctx, key, 1)
	if err != nil {
		c.t.log.WarnContext(c.ctx, "rocketchat tool: preflight could not check the workspace", "agent", c.call.AgentID,
			"path", ref, "runId", c.call.Run.RunID, "err", err.Error())
		return nil
	}
	if len(list) == 0 || list[0].Key != key {
		return sb.E(c.op, sb.ENOTFOUND, fmt.Sprintf("no file %s in the workspace; check the path (Workspace list shows the files)", ref))
	}
	if list[0].Size > limit {
		return tooLarge(list[0].Size)
	}
	return nil
}

// outgoingName checks the name a sent file gets in the chat: a bare name.
func (c *invocation) outgoingName(v string) (string, error) {
	name, err := c.text("fileName", &v)
	if err != nil {
		return "", err
	}
	name = strings.TrimSpace(name)
	switch {
	case strings.ContainsAny(name, `/\:`):
		return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf("fileName %s contains / \\ or :; give a bare file name such as report.md", quote(name)))
	case name == "." || name == "..":
		return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf("fileName %s is not a file name; give one such as report.md", quote(name)))
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) || workspace.IsBidiControl(r) }) >= 0:
		return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf("fileName %s contains an invisible or control character; remove it", quote(name)))
	}
	return name, nil
}

// storeFailure logs err and answers with a caller-safe message.
func (c *invocation) storeFailure(verb, ref string, err error) sb.Envelope {
	return c.fail(c.storeError(verb, ref, err))
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// rfc is the answer form of a time.
func rfc(t time.Time) string { return t.UTC().Format(tsLayout) }
