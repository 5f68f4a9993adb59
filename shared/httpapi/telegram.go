package httpapi

import (
	"io"
	"net/http"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/tginbound"
)

// TelegramWebhook serves POST /hooks/telegram over the inbound. A wrong or
// missing secret answers 401 (fail closed, also when no secret is
// configured); everything else answers 200 once handled, because Telegram
// resends on any other status. A temporary failure answers 503 so that
// Telegram delivers again.
func TelegramWebhook(in *tginbound.Inbound) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !in.Authorized(r.Header.Get(telegram.SecretTokenHeader)) {
			WriteJSON(w, http.StatusUnauthorized, sb.Fail("wrong or missing X-Telegram-Bot-Api-Secret-Token; setWebhook with instance.telegram.webhookSecret"))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
		if err != nil || len(body) > MaxBody {
			WriteJSON(w, http.StatusBadRequest, sb.Fail("the update could not be read"))
			return
		}
		u, err := telegram.ParseUpdate(body)
		if err != nil {
			WriteJSON(w, http.StatusBadRequest, sb.Fail("the body is not a Telegram Update"))
			return
		}
		if err := in.Handle(r.Context(), u); err != nil {
			in.Log.WarnContext(r.Context(), "telegram update: temporary failure", "update", u.ID, "err", err)
			WriteJSON(w, http.StatusServiceUnavailable, sb.Fail("temporarily unable to take the update; Telegram will resend it"))
			return
		}
		WriteJSON(w, http.StatusOK, map[string]bool{"ok": true})
	})
}
