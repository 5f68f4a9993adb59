package rctool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// The arguments of every action, declared once: Spec derives the JSON
// Schema offered to models from these tags and decodeArgs enforces the same
// limits (see toolargs). Lengths count characters, as JSON Schema does. A
// Rocket.Chat id is letters, digits, '-' and '_' (Meteor ids and 24-hex
// upload ids); anything else could change which endpoint a path names.
type (
	sendMessageArgs struct {
		Room *string `json:"room" schema:"minLength=1,maxLength=256"`
		Text *string `json:"text" required:"true" schema:"minLength=1,maxLength=5000" doc:"the message text (Markdown), at most 5000 characters"` // Rocket.Chat's default Message_MaxAllowedSize
		Tmid *string `json:"tmid" schema:"minLength=1,maxLength=64" pattern:"^[A-Za-z0-9_-]+$" doc:"thread to answer in: the messageId of the thread's first message"`
	}
	replyArgs struct {
		Room *string `json:"room" required:"true" schema:"minLength=1,maxLength=256"`
		Tmid *string `json:"tmid" required:"true" schema:"minLength=1,maxLength=64" pattern:"^[A-Za-z0-9_-]+$" doc:"the messageId of the thread's first message"`
		Text *string `json:"text" required:"true" schema:"minLength=1,maxLength=5000" doc:"the message text (Markdown), at most 5000 characters"`
	}
	sendFileArgs struct {
		Room        *string `json:"room" required:"true" schema:"minLength=1,maxLength=256"`
		LocalPath   *string `json:"localPath" required:"true" schema:"minLength=1,maxLength=600" doc:"workspace path: personal:<path> (or no prefix) or shared:<path>; no .., no leading /"` // prefix plus workspace.MaxPathBytes
		FileName    *string `json:"fileName" schema:"minLength=1,maxLength=255" doc:"name shown in the chat; default the file's own name"`
		Description *string `json:"description" schema:"maxLength=5000" doc:"text shown with the file"`
		Tmid        *string `json:"tmid" schema:"minLength=1,maxLength=64" pattern:"^[A-Za-z0-9_-]+$" doc:"thread to send the file into"`
	}
	listRoomsArgs struct{}
	readRoomArgs  struct {
		Room     *string `json:"room" required:"true" schema:"minLength=1,maxLength=256"`
		Count    *int    `json:"count" schema:"minimum=1,maximum=100,default=20" doc:"how many messages, 1 to 100 (default 20)"`
		ThreadID *string `json:"threadId" schema:"minLength=1,maxLength=64" pattern:"^[A-Za-z0-9_-]+$" doc:"show only this thread (the messageId of its first message)"`
	}
	markReadArgs struct {
		Room *string `json:"room" required:"true" schema:"minLength=1,maxLength=256"`
	}
	downloadArgs struct {
		FileID   *string `json:"fileId" required:"true" schema:"minLength=1,maxLength=64" pattern:"^[A-Za-z0-9_-]+$" doc:"the fileId shown next to the file"`
		FileName *string `json:"fileName" required:"true" schema:"minLength=1,maxLength=255" doc:"the file's name as shown; only its last part is used"`
		Target   *string `json:"target" schema:"maxLength=600" doc:"folder only: personal: (default) or shared:, optionally with a folder such as shared:reports/"`
	}
	reactArgs struct {
		MessageID *string `json:"messageId" required:"true" schema:"minLength=1,maxLength=64" pattern:"^[A-Za-z0-9_-]+$" doc:"the message to react to"`
		Emoji     *string `json:"emoji" required:"true" schema:"minLength=1,maxLength=64" pattern:"^:?[A-Za-z0-9_+-]+:?$" doc:"emoji name such as :+1:"`
	}
	searchArgs struct {
		Room  *string `json:"room" required:"true" schema:"minLength=1,maxLength=256"`
		Query *string `json:"query" required:"true" schema:"minLength=1,maxLength=500" doc:"text to look for"`
		Count *int    `json:"count" schema:"minimum=1,maximum=100,default=20" doc:"how many messages, 1 to 100 (default 20)"`
	}
)

// decodeLoose reads what it can (for Condition, which must not fail).
func decodeLoose(raw json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return json.Unmarshal(raw, dst)
}

// id checks an id argument (message, thread, file): letters, digits, '-'
// and '_' only, as Rocket.Chat's Meteor ids and 24-hex upload ids are; a
// value with "/" or ".." would change which endpoint a path names.
func (c *invocation) id(name string, v *string, required bool) (string, error) {
	if v == nil && !required {
		return "", nil
	}
	s, err := c.text(name, v)
	if err != nil {
		return "", err
	}
	s = strings.TrimSpace(s)
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf(
				"argument %q is %s, which is not a Rocket.Chat id; copy the id from read_room or the wake message (letters and digits only)", name, quote(s)))
		}
	}
	return s, nil
}

// count is the message count; its range is checked by decodeArgs.
func count(v *int) int {
	if v == nil {
		return DefaultCount
	}
	return *v
}

// args checks this call's arguments (shared/tools/toolargs).
func (c *invocation) args() toolargs.Args { return toolargs.Args{Op: c.op, Action: c.call.Action} }

// decodeArgs decodes the call's args strictly into dst and checks the
// limits its tags declare (toolargs.Decode).
func (c *invocation) decodeArgs(dst any) error { return c.args().Decode(c.call.Args, dst) }

// decodeRoomArgs decodes the arguments into a, a tool's argument struct,
// and checks its required room argument, room (a pointer to a's Room).
func (c *invocation) decodeRoomArgs(a any, room **string) (string, error) {
	if err := c.decodeArgs(a); err != nil {
		return "", err
	}
	return c.text("room", *room)
}

// text checks a required string argument (toolargs.Text).
func (c *invocation) text(name string, v *string) (string, error) { return c.args().Text(name, v) }

// optional returns an optional string argument; nil is "".
func (c *invocation) optional(v *string) string { return c.args().Optional(v) }
