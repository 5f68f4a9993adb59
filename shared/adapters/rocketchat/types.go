package rocketchat

import (
	"io"
	"time"
)

// RoomType is Rocket.Chat's room kind, the field t of rooms and
// subscriptions. It picks the history endpoint.
type RoomType string

// Room types this client knows. Livechat rooms (l) are listed by
// Subscriptions but have no history endpoint here.
const (
	Channel  RoomType = "c" // public channel: channels.history
	Group    RoomType = "p" // private group: groups.history
	Direct   RoomType = "d" // direct message: im.history
	Livechat RoomType = "l" // omnichannel room: not read by this client
)

// Subscription is one room as the agent's user sees it, from
// subscriptions.get. The counters are a cheap pre-filter only: in RC 8.x
// Unread counts only mentions in channels and groups (a plain message just
// sets Alert), and UserMentions stays up until MarkRead. Decide
// per message on Message.Mentions, never on these counters.
type Subscription struct {
	RoomID        string
	Type          RoomType
	Name          string // room name; for a DM the counterpart's username
	DisplayName   string // fname; for a DM the counterpart's display name
	Unread        int
	UserMentions  int
	GroupMentions int
	Alert         bool      // something new since the last read, mention or not
	Open          bool      // shown in the user's sidebar
	LastSeen      time.Time // ls: when the room was last marked read; zero if never
	UpdatedAt     time.Time // _updatedAt: what updatedSince compares against
}

// User is the author of a message.
type User struct {
	ID       string
	Username string
	Name     string // display name
}

// File is a file attached to a message; ID is what Download takes.
type File struct {
	ID   string
	Name string
	Type string // MIME type, e.g. text/csv
	Size int64  // bytes; 0 when the server did not say
}

// Link is a link in a message with the preview Rocket.Chat fetched for it
// (urls[].meta). Title and Description are the linked page's own text: treat
// them as untrusted like the message.
type Link struct {
	URL         string
	Title       string
	Description string
}

// Message is one chat message.
type Message struct {
	ID       string
	RoomID   string
	ThreadID string // tmid: the thread's first message; "" outside threads
	Text     string // msg: the raw markdown the author typed; may be "" for a file
	At       time.Time
	User     User
	// Mentions lists the usernames in mentions[] (users only, plus "all" and
	// "here" for group mentions); the server resolved them, so no text
	// parsing is needed.
	Mentions []string
	// SystemType is the field t of system messages ("uj" user joined, "ul"
	// left, "au" added, …); "" for a message a person or bot wrote. System
	// messages appear in history and must not wake an agent.
	SystemType string
	Bot        bool      // the field bot is set (integration or app message)
	Edited     bool      // editedAt is set
	EditedAt   time.Time // the last edit; zero when never edited
	Files      []File
	Links      []Link
}

// Sent is what chat.postMessage answers: the stored message plus the
// server's clock at the time it answered (the top-level ts, epoch
// milliseconds, while message.ts is an ISO string).
type Sent struct {
	Message
	ServerTime time.Time
}

// Room is a room as rooms.info describes it.
type Room struct {
	ID          string
	Type        RoomType
	Name        string // "" for a DM
	DisplayName string // fname
	Topic       string
	ReadOnly    bool
	Archived    bool
	Usernames   []string // members of a DM; nil for channels and groups
	MemberCount int      // usersCount
}

// FileStream is a download in progress. The caller must close Body. Size is
// the Content-Length, or -1 when the server did not send one (then check the
// size while reading).
type FileStream struct {
	Body        io.ReadCloser
	Size        int64
	ContentType string
}
