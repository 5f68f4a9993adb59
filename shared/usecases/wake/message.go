package wake

import (
	"fmt"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
)

// FormatMessages builds the wake message: one line per message
// `[HH:MM] @user (messageId: …): text`, then each file and link preview,
// all inside one untrusted frame (names, texts and previews are others'
// words), followed by where the answer goes. loc renders the times.
func FormatMessages(room Room, threadID string, msgs []sb.ChatMessage, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "[%s] @%s (messageId: %s): %s\n", m.At.In(loc).Format("15:04"), oneLine(m.User.Username), m.ID, continued(m.Text))
		for _, f := range m.Files {
			fmt.Fprintf(&b, "    File: %s (%s, %s) — fileId: %s\n", oneLine(f.Name), oneLine(f.Type), sb.HumanSize(f.Size), f.ID)
		}
		for _, l := range m.Links {
			line := "    Link: " + oneLine(l.URL)
			if l.Title != "" {
				line += " — " + oneLine(l.Title)
			}
			b.WriteString(line + "\n")
		}
	}
	where := describeRoom(room)
	head := fmt.Sprintf("New message(s) for you in %s (roomId: %s", where, room.ID)
	if threadID != "" {
		head += ", thread: " + threadID
	}
	head += "). Your final answer is posted there automatically; use RocketChat tools only for anything else.\n"
	return head + untrusted.Frame("rocketchat:"+where, strings.TrimRight(b.String(), "\n"))
}

// continued marks every further line of a message with "  | " so that a
// text cannot forge a line that looks like another message or a file
// (the RocketChat tool's read_room does the same).
func continued(text string) string {
	return strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\n  | ")
}

// oneLine flattens names and titles that others chose.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func describeRoom(r Room) string {
	switch {
	case r.Type == sb.RoomDirect:
		return "a direct message from @" + r.Name
	case r.Name != "":
		return "#" + r.Name
	}
	return "room " + r.ID
}
