package httpapi

import (
	"encoding/json"
	"io"
	"net/http"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// rocketChatOK is non-empty JSON without text/attachments: Rocket.Chat
// counts the call as delivered and posts nothing.
var rocketChatOK = map[string]any{"success": true}

// RocketChatWebhook serves POST /hooks/rocketchat over the receiver. It
// answers at once with a non-empty JSON body that posts nothing; a
// temporary failure answers 503 so that Rocket.Chat retries (a 500 with a
// body is never retried; a 200 with an empty body is).
func RocketChatWebhook(r *wake.Receiver) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(io.LimitReader(req.Body, MaxBody+1))
		if err != nil || len(body) > MaxBody {
			WriteJSON(w, http.StatusBadRequest, sb.Fail("the body could not be read or is larger than 1 MiB"))
			return
		}
		var p wake.WebhookPayload
		if err := json.Unmarshal(body, &p); err != nil {
			WriteJSON(w, http.StatusBadRequest, sb.Fail("the body is not a Rocket.Chat outgoing-webhook JSON object"))
			return
		}
		if !r.Authorized(p.Token) {
			WriteJSON(w, http.StatusUnauthorized, sb.Fail("wrong or missing token; set the integration's token to one of instance.rocketchat.webhookTokens"))
			return
		}
		if p.MessageID == "" || p.ChannelID == "" {
			WriteJSON(w, http.StatusBadRequest, sb.Fail("message_id and channel_id are required; configure the integration for the sendMessage event"))
			return
		}
		if err := r.Receive(req.Context(), p); err != nil {
			WriteJSON(w, http.StatusServiceUnavailable, sb.Fail("temporarily unable to queue the message; Rocket.Chat will retry"))
			return
		}
		WriteJSON(w, http.StatusOK, rocketChatOK)
	})
}
