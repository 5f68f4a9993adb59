package rctool

import (
	"fmt"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const roomDoc = "room id, channel or group name (#name for a channel only), or the username of a direct message's counterpart; " +
	"@username also starts a new direct message"

// Spec describes the actions and their argument schemas; the executor
// validates arguments against them before Invoke (which checks again).
func (t *Tool) Spec() sb.ToolSpec {
	str := func(min, max int, desc string) map[string]any {
		s := map[string]any{"type": "string", "maxLength": max, "description": desc}
		if min > 0 {
			s["minLength"] = min
		}
		return s
	}
	id := func(desc string) map[string]any {
		return map[string]any{"type": "string", "minLength": 1, "maxLength": maxIDLen, "pattern": "^[A-Za-z0-9_-]+$", "description": desc}
	}
	count := map[string]any{"type": "integer", "minimum": 1, "maximum": MaxCount, "default": DefaultCount,
		"description": fmt.Sprintf("how many messages, 1 to %d (default %d)", MaxCount, DefaultCount)}
	object := func(props map[string]any, required ...string) map[string]any {
		if required == nil {
			required = []string{}
		}
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	room := str(1, maxRoomLen, roomDoc)
	text := str(1, maxTextLen, "the message text (Markdown), at most 5000 characters")
	return sb.ToolSpec{
		Name: ToolName,
		Description: "Rocket.Chat as your own user: send messages and files, answer in threads, read rooms, search, react, " +
			"and download files people sent you into your workspace. Text others wrote comes back inside <untrusted_content>.",
		Actions: []sb.ActionSpec{
			{
				Name:        "send_message",
				Description: "Post a message into a room (your default room when room is left out); tmid answers in that thread. Answers roomId, messageId and ts.",
				Parameters: object(map[string]any{
					"room": room,
					"text": text,
					"tmid": id("thread to answer in: the messageId of the thread's first message"),
				}, "text"),
			},
			{
				Name:        "reply",
				Description: "Answer in a thread: tmid is the messageId of the thread's first message. Answers roomId, messageId and ts.",
				Parameters: object(map[string]any{
					"room": room,
					"tmid": id("the messageId of the thread's first message"),
					"text": text,
				}, "room", "tmid", "text"),
			},
			{
				Name: "send_file",
				Description: "Send a file from your workspace into a room or a direct message (maxUploadMb, default 25 MB). " +
					"Answers roomId, messageId, fileId, fileName and size.",
				Parameters: object(map[string]any{
					"room":        room,
					"localPath":   str(1, maxPathLen, "workspace path: personal:<path> (or no prefix) or shared:<path>; no .., no leading /"),
					"fileName":    str(1, maxFileNameLen, "name shown in the chat; default the file's own name"),
					"description": str(0, maxTextLen, "text shown with the file"),
					"tmid":        id("thread to send the file into"),
				}, "room", "localPath"),
			},
			{
				Name: "list_rooms",
				Description: "List the rooms you can use with id, name, type (channel, group, direct), unread, mentions and alert. " +
					"In Rocket.Chat 8 unread counts mentions only; alert means something new.",
				Parameters: object(map[string]any{}),
			},
			{
				Name: "read_room",
				Description: "Read the newest messages of a room, oldest first, with messageIds, files (with fileId for download_file) and links. " +
					"threadId shows one thread. Does not mark the room read.",
				Parameters: object(map[string]any{
					"room":     room,
					"count":    count,
					"threadId": id("show only this thread (the messageId of its first message)"),
				}, "room"),
			},
			{
				Name:        "mark_read",
				Description: "Mark a room read.",
				Parameters:  object(map[string]any{"room": room}, "room"),
			},
			{
				Name: "download_file",
				Description: "Save a file someone sent into your workspace by its fileId (from read_room or the wake message). " +
					"The name is reduced to a bare file name; executable endings are refused; an existing file is never overwritten " +
					"(the answer's path says where it went). Answers path, size and contentType.",
				Parameters: object(map[string]any{
					"fileId":   id("the fileId shown next to the file"),
					"fileName": str(1, maxFileNameLen, "the file's name as shown; only its last part is used"),
					"target":   str(0, maxPathLen, "folder only: personal: (default) or shared:, optionally with a folder such as shared:reports/"),
				}, "fileId", "fileName"),
			},
			{
				Name:        "react",
				Description: "Set an emoji reaction on a message, e.g. :+1: or :white_check_mark:.",
				Parameters: object(map[string]any{
					"messageId": id("the message to react to"),
					"emoji":     map[string]any{"type": "string", "minLength": 1, "maxLength": maxEmojiLen, "pattern": "^:?[A-Za-z0-9_+-]+:?$", "description": "emoji name such as :+1:"},
				}, "messageId", "emoji"),
			},
			{
				Name:        "search",
				Description: "Search a room's messages for text; newest first.",
				Parameters: object(map[string]any{
					"room":  room,
					"query": str(1, maxQueryLen, "text to look for"),
					"count": count,
				}, "room", "query"),
			},
		},
	}
}
