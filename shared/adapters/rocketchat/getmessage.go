package rocketchat

import (
	"context"
	"net/http"
	"net/url"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// GetMessage fetches one message by id (chat.getMessage?msgId=…): an
// outgoing-webhook delivery carries only the text, so the worker reads the
// message itself for mentions[], files and link previews.
// Errors: ENOTFOUND for an unknown message (the server answers a bare 400
// {"success":false}); EFORBIDDEN for a message in a room the user cannot
// access (400 "Not allowed [error-not-allowed]", getSingleMessage).
func (c *Client) GetMessage(ctx context.Context, msgID string) (sb.ChatMessage, error) {
	cl := api(http.MethodGet, "chat.getMessage")
	cl.message = msgID
	if msgID == "" {
		return sb.ChatMessage{}, sb.E("rocketchat.chat.getMessage", sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the message id is empty")
	}
	var w struct {
		Message wireMessage `json:"message"`
	}
	if err := c.do(ctx, request{call: cl, query: url.Values{"msgId": {msgID}}}, &w); err != nil {
		return sb.ChatMessage{}, err
	}
	m := toMessage(w.Message)
	if m.ID == "" {
		return sb.ChatMessage{}, sb.E("rocketchat.chat.getMessage", sb.ENOTFOUND, "Rocket.Chat "+cl.endpoint()+": no message "+msgID)
	}
	return m, nil
}
