package rctool

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// listRooms answers the agent's rooms from one subscriptions.get, filtered
// to allowedRooms.
func (c *invocation) listRooms() sb.Envelope {
	var a listRoomsArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.fail(err)
	}
	if c.preflight {
		return checked
	}
	subs, _, err := c.subscriptions(true)
	if err != nil {
		return c.fail(err)
	}
	rooms := []map[string]any{}
	hidden := 0
	for _, s := range subs {
		r := room{ID: s.RoomID, Name: s.Name, Type: s.Type}
		if !allowed(c.agent.AllowedRooms, r) {
			hidden++
			continue
		}
		// Names are identifiers (Rocket.Chat restricts them to letters,
		// digits, "-", "_" and "." by default); display names are free text
		// and stay out of the answer.
		rooms = append(rooms, map[string]any{
			"id":       s.RoomID,
			"name":     s.Name, // for a DM the counterpart's username, which the room argument takes
			"type":     typeName(s.Type),
			"unread":   s.Unread,
			"mentions": s.UserMentions + s.GroupMentions,
			"alert":    s.Alert,
		})
	}
	sort.SliceStable(rooms, func(i, j int) bool { return rooms[i]["name"].(string) < rooms[j]["name"].(string) })
	data := map[string]any{"rooms": rooms, "count": len(rooms)}
	if c.agent.DefaultRoom != "" {
		data["defaultRoom"] = c.agent.DefaultRoom
	}
	if hidden > 0 {
		data["note"] = fmt.Sprintf("%d more room(s) are not in this agent's allowedRooms and are not shown", hidden)
	}
	return sb.OK(data)
}

// readRoom renders a room's newest messages, oldest first, like the wake
// message, inside one untrusted frame. It never marks the room read.
func (c *invocation) readRoom() sb.Envelope {
	var a readRoomArgs
	roomArg, err := c.decodeRoomArgs(&a, &a.Room)
	if err != nil {
		return c.fail(err)
	}
	n := count(a.Count)
	threadID, err := c.id("threadId", a.ThreadID, false)
	if err != nil {
		return c.fail(err)
	}
	if c.preflight {
		return checked
	}
	r, err := c.checkedRoom(roomArg, false)
	if err != nil {
		return c.fail(err)
	}
	fetch := n
	if threadID != "" {
		// History has no thread filter: read the newest MaxCount messages
		// with thread replies and keep this thread's.
		fetch = MaxCount
	}
	msgs, err := c.agent.Client.History(c.ctx, r.Type, r.ID, time.Time{}, fetch, threadID != "")
	if err != nil {
		return c.fail(err)
	}
	full := len(msgs) == fetch
	if threadID != "" {
		kept := msgs[:0]
		for _, m := range msgs {
			if m.ID == threadID || m.ThreadID == threadID {
				kept = append(kept, m)
			}
		}
		msgs = kept
		if len(msgs) > n {
			msgs = msgs[len(msgs)-n:]
			full = true
		}
	}
	data := map[string]any{
		"roomId": r.ID,
		"room":   r.display(),
		"count":  len(msgs),
		"text":   frame(r, render(msgs)),
	}
	if threadID != "" {
		data["threadId"] = threadID
	}
	switch {
	case len(msgs) == 0 && threadID != "":
		data["note"] = fmt.Sprintf("no messages of thread %s among the newest %d of %s", threadID, MaxCount, r.display())
	case len(msgs) == 0:
		data["note"] = "the room has no messages"
	case full && threadID != "":
		data["note"] = fmt.Sprintf("only the newest messages are shown (the thread is looked for among the newest %d of the room)", MaxCount)
	case full:
		data["note"] = fmt.Sprintf("only the newest %d messages are shown; ask with a larger count (at most %d) for more", n, MaxCount)
	}
	return sb.OK(data)
}

func (c *invocation) markRead() sb.Envelope {
	var a markReadArgs
	roomArg, err := c.decodeRoomArgs(&a, &a.Room)
	if err != nil {
		return c.fail(err)
	}
	if c.preflight {
		return checked
	}
	r, err := c.checkedRoom(roomArg, false)
	if err != nil {
		return c.fail(err)
	}
	if err := c.agent.Client.MarkRead(c.ctx, r.ID); err != nil {
		return c.fail(err)
	}
	return sb.OK(map[string]any{"roomId": r.ID, "room": r.display(), "markedRead": true})
}

func (c *invocation) react() sb.Envelope {
	var a reactArgs
	if err := c.decodeArgs(&a); err != nil {
		return c.fail(err)
	}
	msgID, err := c.id("messageId", a.MessageID, true)
	if err != nil {
		return c.fail(err)
	}
	emoji, err := c.text("emoji", a.Emoji)
	if err != nil {
		return c.fail(err)
	}
	name := strings.Trim(strings.TrimSpace(emoji), ":")
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '+' || r == '-') {
			return c.failMsg(sb.EINVALID, "emoji %s is not an emoji name; use a name such as :+1: or :white_check_mark:", quote(emoji))
		}
	}
	if name == "" {
		return c.failMsg(sb.EINVALID, "emoji is empty; use a name such as :+1:")
	}
	if c.preflight {
		return checked
	}
	if err := c.agent.Client.React(c.ctx, msgID, name); err != nil {
		return c.fail(err)
	}
	return sb.OK(map[string]any{"messageId": msgID, "emoji": ":" + name + ":"})
}

// search finds messages in a room (chat.search), newest first, framed.
func (c *invocation) search() sb.Envelope {
	var a searchArgs
	roomArg, err := c.decodeRoomArgs(&a, &a.Room)
	if err != nil {
		return c.fail(err)
	}
	query, err := c.text("query", a.Query)
	if err != nil {
		return c.fail(err)
	}
	n := count(a.Count)
	if c.preflight {
		return checked
	}
	r, err := c.checkedRoom(roomArg, false)
	if err != nil {
		return c.fail(err)
	}
	msgs, err := c.agent.Client.Search(c.ctx, r.ID, query, n)
	if err != nil {
		return c.fail(err)
	}
	if len(msgs) > n {
		msgs = msgs[:n]
	}
	data := map[string]any{
		"roomId": r.ID,
		"room":   r.display(),
		"count":  len(msgs),
		"order":  "newest first",
		"text":   frame(r, render(msgs)),
	}
	if len(msgs) == 0 {
		data["note"] = "no message in " + r.display() + " matches"
	}
	return sb.OK(data)
}

// frame wraps rendered messages as untrusted text; the source names
// the room like the wake message does.
func frame(r room, text string) string {
	return untrusted.Frame("rocketchat:"+r.display(), text)
}

// render is the wake message's format (shared/usecases/wake.FormatMessages):
//
//	[HH:MM] @user (messageId: …): text
//	    File: name (type, size) — fileId: …
//	    Link: url — title
//
// with times in UTC, a "--- YYYY-MM-DD ---" line whenever the day changes
// (a room's history spans days, a wake does not), ", thread: tmid" inside
// the parentheses of thread replies, "[system: …]" for system messages, and
// "  | " before every further line of a multi-line text so that a sender
// cannot forge a message or file line.
func render(msgs []sb.ChatMessage) string {
	var b strings.Builder
	day := ""
	for _, m := range msgs {
		at := m.At.UTC()
		if d := at.Format("2006-01-02"); d != day {
			day = d
			fmt.Fprintf(&b, "--- %s ---\n", d)
		}
		ids := "messageId: " + m.ID
		if m.ThreadID != "" {
			ids += ", thread: " + m.ThreadID
		}
		sys := ""
		if m.SystemType != "" {
			sys = " [system: " + systemLabel(m.SystemType) + "]"
		}
		fmt.Fprintf(&b, "[%s] @%s (%s)%s: %s\n", at.Format("15:04"), m.User.Username, ids, sys, indentContinuation(m.Text))
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
	return strings.TrimRight(b.String(), "\n")
}

// systemLabel explains the system message types that appear in history
// ("uj" when a user joins).
func systemLabel(t string) string {
	labels := map[string]string{
		"uj": "user joined", "ul": "user left", "au": "user added", "ru": "user removed",
		"ujt": "user joined team", "ult": "user left team", "r": "room renamed",
		"room_changed_topic": "topic changed", "room_changed_description": "description changed",
		"room_changed_announcement": "announcement changed", "room_changed_privacy": "privacy changed",
		"rm": "message removed", "user-muted": "user muted", "user-unmuted": "user unmuted",
		"subscription-role-added": "role added", "subscription-role-removed": "role removed",
		"discussion-created": "discussion created", "message_pinned": "message pinned",
	}
	if l, ok := labels[t]; ok {
		return l + " (" + t + ")"
	}
	return t
}

func indentContinuation(s string) string {
	return strings.ReplaceAll(newlines.Replace(s), "\n", "\n  | ")
}

// newlines maps every line break a reader might honour to "\n".
var newlines = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u0085", "\n", "\u2028", "\n", "\u2029", "\n")

// oneLine keeps a file name, type or link title on its line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
