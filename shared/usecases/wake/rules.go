package wake

import (
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Rules is what the wake decision needs to know about one agent.
type Rules struct {
	Username          string   // the agent's own Rocket.Chat user
	UserID            string   // its user id
	AgentUsernames    []string // our agents: ignored unless they mention this one
	AllowedRooms      []string // empty = all; DMs by the counterpart's username
	RespondToAllRooms []string // rooms where every message wakes
	MentionOnly       bool     // false: every message in an allowed room wakes
}

// Room is the room a message came from.
type Room struct {
	ID   string
	Name string      // for DMs: the counterpart's username
	Type sb.RoomType // channel, private group or direct message
}

// Verdict is the outcome of Decide; Reason is for logs and tests.
type Verdict struct {
	Wake   bool
	Reason string
}

// Decide applies the wake rules to one message. The mention check is
// on the message's mentions[] usernames, never on room counters: in
// Rocket.Chat 8.x `unread` counts only mentions and `userMentions` stays up
// until the room is read, so a counter would make every later
// plain message look addressed.
func (r Rules) Decide(room Room, m sb.ChatMessage) Verdict {
	switch {
	case strings.EqualFold(m.User.Username, r.Username) || (r.UserID != "" && m.User.ID == r.UserID):
		return Verdict{false, "own message"}
	case m.SystemType != "":
		return Verdict{false, "system message " + m.SystemType} // e.g. uj: a user joined
	}
	mentioned := r.mentioned(m)
	if !mentioned {
		if m.Bot {
			return Verdict{false, "bot message without a mention"}
		}
		if contains(r.AgentUsernames, m.User.Username) {
			return Verdict{false, "another agent without a mention"} // cross-agent loop guard
		}
	}
	if !r.allowed(room) {
		return Verdict{false, "room not in allowedRooms"}
	}
	switch {
	case room.Type == sb.RoomDirect:
		return Verdict{true, "direct message"}
	case mentioned:
		return Verdict{true, "mentioned"}
	case contains(r.RespondToAllRooms, room.ID) || contains(r.RespondToAllRooms, room.Name):
		return Verdict{true, "respondToAllRooms"}
	case !r.MentionOnly:
		return Verdict{true, "mentionOnly is off"}
	}
	return Verdict{false, "not addressed"}
}

func (r Rules) mentioned(m sb.ChatMessage) bool {
	for _, u := range m.Mentions {
		if strings.EqualFold(u, r.Username) {
			return true
		}
	}
	return false
}

// allowed applies allowedRooms to wakes too: an agent is not woken
// where it may not answer. A DM is allowed by the counterpart's username.
func (r Rules) allowed(room Room) bool {
	if len(r.AllowedRooms) == 0 {
		return true
	}
	return contains(r.AllowedRooms, room.Name) || contains(r.AllowedRooms, room.ID)
}
