package switchboard

// ReplyTo is where a run's answer goes: the Rocket.Chat room (and thread)
// or the Telegram chat the run was woken from. The wake worker posts the
// final answer there, and an approval staged during the run keeps it so
// that the follow-up run after the human's decision answers in the same
// place.
type ReplyTo struct {
	// TelegramChatID, when set, sends the answer to that Telegram chat
	// instead of Rocket.Chat (a message that came in over Telegram).
	TelegramChatID string `json:"telegramChatId,omitempty"`
	RoomID         string `json:"roomId,omitempty"`
	RoomName       string `json:"roomName,omitempty"`
	RoomType       string `json:"roomType,omitempty"` // c, p or d: for links to the room
	ThreadID       string `json:"threadId,omitempty"`
}

// Routable reports whether r names somewhere to answer: a Rocket.Chat room
// or a Telegram chat. A nil ReplyTo is not routable.
func (r *ReplyTo) Routable() bool {
	return r != nil && (r.RoomID != "" || r.TelegramChatID != "")
}

// Clone returns a copy of r that shares nothing with it (nil for nil).
func (r *ReplyTo) Clone() *ReplyTo {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}
