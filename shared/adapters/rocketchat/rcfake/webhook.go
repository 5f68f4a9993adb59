package rcfake

// outgoingPayload is the body Rocket.Chat POSTs to an outgoing webhook for
// the sendMessage event (triggerHandler mapEventArgsToData). Field
// order follows the ground truth's example; optional keys are left out when
// the message has no value for them, as JSON.stringify drops undefined.
type outgoingPayload struct {
	Token       string `json:"token"`
	Bot         bool   `json:"bot"`
	ChannelID   string `json:"channel_id"`
	ChannelName string `json:"channel_name,omitempty"` // DMs have no room name: absent
	MessageID   string `json:"message_id"`
	Timestamp   string `json:"timestamp"` // message.ts as ISO with ms and Z
	UserID      string `json:"user_id"`
	UserName    string `json:"user_name"`
	Text        string `json:"text"` // msg, raw markdown
	SiteURL     string `json:"siteUrl"`
	IsEdited    bool   `json:"isEdited,omitempty"` // only when editedAt is set
	TMID        string `json:"tmid,omitempty"`     // only for thread replies
}

// OutgoingWebhookPayload returns the JSON body an outgoing webhook
// integration would POST for msg (as returned by Post; its current state is
// used, so an Edit shows as isEdited). token is the server's webhook token
// (SetWebhookToken), the one place the token travels: Rocket.Chat sends it
// in the body, never in a header. bot is true when the message
// carries bot; no trigger_word is set (no trigger words configured).
func (s *Server) OutgoingWebhookPayload(msg Message) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := outgoingPayload{Token: s.webhookToken, SiteURL: s.URL,
		ChannelID: msg.RoomID, MessageID: msg.ID, Timestamp: iso(msg.At), UserID: msg.UserID,
		UserName: msg.Username, Text: msg.Text, Bot: msg.Bot, IsEdited: msg.Edited, TMID: msg.ThreadID}
	if m := s.msgByID[msg.ID]; m != nil {
		cur := s.export(m)
		p.ChannelID, p.Timestamp, p.UserID, p.UserName = cur.RoomID, iso(cur.At), cur.UserID, cur.Username
		p.Text, p.Bot, p.IsEdited, p.TMID = cur.Text, cur.Bot, cur.Edited, cur.ThreadID
	}
	if r := s.rooms[p.ChannelID]; r != nil && r.t != "d" {
		p.ChannelName = r.name
	}
	return marshal(p)
}
