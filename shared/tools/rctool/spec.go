package rctool

import (
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

const roomDoc = "room id, channel or group name (#name for a channel only), or the username of a direct message's counterpart; " +
	"@username also starts a new direct message"

// vocab holds the room description every action shares.
var vocab = toolargs.Vocab{Docs: map[string]string{"room": roomDoc}}

// Spec describes the actions; each action's schema comes from its argument
// struct (args.go). The executor validates arguments against it before
// Invoke, which checks again.
func (t *Tool) Spec() sb.ToolSpec {
	action := func(name, desc string, args any) sb.ActionSpec {
		return sb.ActionSpec{Name: name, Description: desc, Parameters: toolargs.Schema(args, vocab)}
	}
	return sb.ToolSpec{
		Name: ToolName,
		Description: "Rocket.Chat as your own user: send messages and files, answer in threads, read rooms, search, react, " +
			"and download files people sent you into your workspace. Text others wrote comes back inside <untrusted_content>.",
		Actions: []sb.ActionSpec{
			action("send_message", "Post a message into a room (your default room when room is left out); tmid answers in that thread. Answers roomId, messageId and ts.",
				sendMessageArgs{}),
			action("reply", "Answer in a thread: tmid is the messageId of the thread's first message. Answers roomId, messageId and ts.",
				replyArgs{}),
			action("send_file", "Send a file from your workspace into a room or a direct message (maxUploadMb, default 25 MB). "+
				"Answers roomId, messageId, fileId, fileName and size.",
				sendFileArgs{}),
			action("list_rooms", "List the rooms you can use with id, name, type (channel, group, direct), unread, mentions and alert. "+
				"In Rocket.Chat 8 unread counts mentions only; alert means something new.",
				listRoomsArgs{}),
			action("read_room", "Read the newest messages of a room, oldest first, with messageIds, files (with fileId for download_file) and links. "+
				"threadId shows one thread. Does not mark the room read.",
				readRoomArgs{}),
			action("mark_read", "Mark a room read.", markReadArgs{}),
			action("download_file", "Save a file someone sent into your workspace by its fileId (from read_room or the wake message). "+
				"The name is reduced to a bare file name; executable endings are refused; an existing file is never overwritten "+
				"(the answer's path says where it went). Answers path, size and contentType.",
				downloadArgs{}),
			action("react", "Set an emoji reaction on a message, e.g. :+1: or :white_check_mark:.", reactArgs{}),
			action("search", "Search a room's messages for text; newest first.", searchArgs{}),
		},
	}
}
