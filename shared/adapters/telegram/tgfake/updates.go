package tgfake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// secretShape is what setWebhook accepts as secret_token.
var secretShape = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)

// defaultExcluded are the kinds an empty allowed_updates leaves out
// (Bot API docs, getUpdates).
var defaultExcluded = []string{"chat_member", "message_reaction", "message_reaction_count"}

// wants reports whether updates of kind are kept under the current
// allowed_updates.
func (s *Server) wants(kind string) bool {
	if len(s.allowed) > 0 {
		return slices.Contains(s.allowed, kind)
	}
	return !slices.Contains(defaultExcluded, kind)
}

// enqueue numbers u and queues it if its kind is wanted. s.mu is held.
func (s *Server) enqueue(u Update) Update {
	if u.UpdateID == 0 {
		u.UpdateID = s.nextUpdate
		s.nextUpdate++
	} else if u.UpdateID >= s.nextUpdate {
		s.nextUpdate = u.UpdateID + 1
	}
	if s.wants(u.Kind()) {
		s.pending = append(s.pending, u)
		s.notify()
	}
	return u
}

// InjectMessage stores text as a message from a person in chat chatID and
// queues the "message" update, as if from had sent it. In a private chat
// from must be the chat's user. It returns the update (with its id). Panics
// on an unknown chat.
func (s *Server) InjectMessage(chatID int64, from User, text string) Update {
	s.mu.Lock()
	c := s.chats[chatID]
	if c == nil {
		s.mu.Unlock()
		panic(fmt.Sprintf("tgfake: unknown chat %d; AddChat first", chatID))
	}
	if c.Type == "private" && from.ID != chatID {
		s.mu.Unlock()
		panic(fmt.Sprintf("tgfake: InjectMessage: only user %d writes in private chat %d, not %d", chatID, chatID, from.ID))
	}
	f := from
	m := &Message{MessageID: s.newMessageID(), From: &f, Chat: c.wire(), Date: s.clock().Unix(), Text: text, RawText: text}
	s.store(m)
	msg := cloneMessage(m)
	u := s.enqueue(Update{Message: &msg})
	s.mu.Unlock()
	s.maybePush()
	return u
}

// InjectCallback queues a "callback_query" update as if from had pressed
// the button with callback data on the bot's message messageID, and
// returns the query's id (a string, as Telegram's). The query can be
// answered once, within SetCallbackTTL. Panics when the message does not
// exist, is not the bot's, or has no button with that data: a real client
// can only press buttons that are there.
func (s *Server) InjectCallback(from User, messageID int64, data string) string {
	s.mu.Lock()
	m := s.byID[messageID]
	switch {
	case m == nil:
		s.mu.Unlock()
		panic(fmt.Sprintf("tgfake: InjectCallback: no message %d", messageID))
	case m.From == nil || m.From.ID != s.bot.ID:
		s.mu.Unlock()
		panic(fmt.Sprintf("tgfake: InjectCallback: message %d is not the bot's", messageID))
	case !hasButton(m.ReplyMarkup, data):
		s.mu.Unlock()
		panic(fmt.Sprintf("tgfake: InjectCallback: message %d has no button with callback_data %q", messageID, data))
	}
	id := strconv.FormatUint(s.rng.Uint64()>>1, 10)
	msg := cloneMessage(m)
	q := CallbackQuery{ID: id, From: from, Message: &msg, ChatInstance: s.instance(m.Chat.ID), Data: data}
	s.callbacks[id] = &callback{q: q, created: s.clock()}
	s.enqueue(Update{CallbackQuery: &q})
	s.mu.Unlock()
	s.maybePush()
	return id
}

func hasButton(k *InlineKeyboardMarkup, data string) bool {
	if k == nil {
		return false
	}
	for _, row := range k.InlineKeyboard {
		for _, b := range row {
			if b.CallbackData == data && b.URL == "" {
				return true
			}
		}
	}
	return false
}

// InjectUpdate queues any update as it is (for kinds the helpers do not
// build, or forged shapes); a zero UpdateID gets the next id. A callback
// query in it becomes answerable. It returns the update as queued.
func (s *Server) InjectUpdate(u Update) Update {
	s.mu.Lock()
	if q := u.CallbackQuery; q != nil && q.ID != "" {
		s.callbacks[q.ID] = &callback{q: *q, created: s.clock()}
	}
	u = s.enqueue(u)
	s.mu.Unlock()
	s.maybePush()
	return u
}

// --- getUpdates ---

func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, p params) {
	offset, err := p.int("offset")
	var limit, timeout int64
	if err == nil {
		limit, err = p.int("limit")
	}
	if err == nil {
		timeout, err = p.int("timeout")
	}
	var allowed []string
	setAllowed := false
	if err == nil && p.has("allowed_updates") {
		if v := p["allowed_updates"]; v != "" {
			if json.Unmarshal([]byte(v), &allowed) != nil {
				err = badRequest("can't parse allowed updates") // [U]
			}
		}
		setAllowed = true
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if limit < 1 || limit > 100 {
		limit = 100 // the server clamps; 0 and absent mean 100
	}
	if timeout < 0 {
		timeout = 0
	}

	s.mu.Lock()
	if s.webhook.URL != "" {
		s.mu.Unlock()
		writeError(w, webhookConflict())
		return
	}
	wait := time.Duration(timeout) * time.Second
	if s.pollCap > 0 && wait > s.pollCap {
		wait = s.pollCap
	}
	deadline := time.Now().Add(wait)
	// A newer poll ends the one already waiting.
	s.pollGen++
	gen := s.pollGen
	s.notify()
	if setAllowed {
		s.allowed = allowed
	}
	s.confirm(offset)
	for waited := false; ; waited = true {
		switch {
		case s.webhook.URL != "":
			s.mu.Unlock()
			writeError(w, webhookConflict())
			return
		case s.pollGen != gen:
			s.mu.Unlock()
			writeError(w, &apiError{status: http.StatusConflict,
				description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"})
			return
		}
		ups := s.deliverable(int(limit))
		left := time.Until(deadline)
		if len(ups) > 0 || left <= 0 || s.closed {
			s.mu.Unlock()
			writeOK(w, ups, "")
			return
		}
		ch := s.changed
		if !waited {
			s.pollWaits++
			close(s.pollWaited)
			s.pollWaited = make(chan struct{})
		}
		s.mu.Unlock()
		t := time.NewTimer(left)
		select {
		case <-ch:
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
		t.Stop()
		s.mu.Lock()
	}
}

func webhookConflict() *apiError {
	return &apiError{status: http.StatusConflict,
		description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
}

// confirm applies getUpdates' offset: positive forgets every update below
// it; negative keeps only the last -offset. s.mu is held.
func (s *Server) confirm(offset int64) {
	switch {
	case offset > 0:
		i := 0
		for i < len(s.pending) && s.pending[i].UpdateID < offset {
			i++
		}
		s.pending = slices.Clone(s.pending[i:])
	case offset < 0:
		if keep := int(-offset); keep < len(s.pending) {
			s.pending = slices.Clone(s.pending[len(s.pending)-keep:])
		}
	}
}

// deliverable drops pending updates of kinds no longer wanted and returns
// up to limit of the rest. s.mu is held.
func (s *Server) deliverable(limit int) []Update {
	kept := s.pending[:0:0]
	for _, u := range s.pending {
		if s.wants(u.Kind()) {
			kept = append(kept, u)
		}
	}
	s.pending = kept
	return append([]Update{}, s.pending[:min(limit, len(s.pending))]...) // [] rather than null
}

// --- webhook ---

func (s *Server) setWebhook(p params) (any, string, *apiError) {
	hook := strings.TrimSpace(p["url"])
	if hook == "" {
		return s.deleteWebhook(p)
	}
	u, err := url.Parse(hook)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", badRequest("invalid webhook URL specified") // [U]
	}
	secret := p["secret_token"]
	switch {
	case len(secret) > 256:
		return nil, "", badRequest("secret token is too long") // [U]
	case !secretShape.MatchString(secret):
		return nil, "", badRequest("secret token contains unallowed characters")
	}
	maxConn, aerr := p.int("max_connections")
	if aerr != nil {
		return nil, "", aerr
	}
	if maxConn == 0 {
		maxConn = 40
	}
	var allowed []string
	if v := p["allowed_updates"]; v != "" {
		if json.Unmarshal([]byte(v), &allowed) != nil {
			return nil, "", badRequest("can't parse allowed updates") // [U]
		}
	}
	if p.bool("drop_pending_updates") {
		s.pending = nil
	}
	if p.has("allowed_updates") {
		s.allowed = allowed
	}
	next := Webhook{URL: hook, SecretToken: secret, AllowedUpdates: s.allowed, MaxConnections: int(maxConn)}
	same := s.webhook.URL == next.URL && s.webhook.SecretToken == next.SecretToken &&
		s.webhook.MaxConnections == next.MaxConnections && slices.Equal(s.webhook.AllowedUpdates, next.AllowedUpdates)
	s.webhook = next
	s.notify() // a waiting getUpdates now conflicts
	if same {
		return true, "Webhook is already set", nil
	}
	s.lastErrDate, s.lastErrMsg = time.Time{}, ""
	return true, "Webhook was set", nil
}

func (s *Server) deleteWebhook(p params) (any, string, *apiError) {
	if p.bool("drop_pending_updates") {
		s.pending = nil
	}
	if s.webhook.URL == "" {
		return true, "Webhook is already deleted", nil
	}
	s.webhook = Webhook{}
	s.lastErrDate, s.lastErrMsg = time.Time{}, ""
	return true, "Webhook was deleted", nil
}

// webhookInfo is getWebhookInfo's result, in the real server's field order.
type webhookInfo struct {
	URL                  string   `json:"url"`
	HasCustomCertificate bool     `json:"has_custom_certificate"`
	PendingUpdateCount   int      `json:"pending_update_count"`
	LastErrorDate        int64    `json:"last_error_date,omitempty"`
	LastErrorMessage     string   `json:"last_error_message,omitempty"`
	MaxConnections       int      `json:"max_connections,omitempty"`
	AllowedUpdates       []string `json:"allowed_updates,omitempty"`
}

func (s *Server) webhookInfo() any {
	info := webhookInfo{URL: s.webhook.URL, PendingUpdateCount: len(s.pending)}
	if s.webhook.URL != "" {
		info.MaxConnections = s.webhook.MaxConnections
		info.AllowedUpdates = s.webhook.AllowedUpdates
		if !s.lastErrDate.IsZero() {
			info.LastErrorDate, info.LastErrorMessage = s.lastErrDate.Unix(), s.lastErrMsg
		}
	}
	return info
}

// ErrNoWebhook is returned by PushUpdate and PushPending when no webhook is
// set.
var ErrNoWebhook = errors.New("tgfake: no webhook is set; call setWebhook first")

// PushUpdate POSTs u to the webhook as Telegram does: the Update JSON with
// Content-Type application/json and, when a secret is set, the header
// X-Telegram-Bot-Api-Secret-Token. A zero UpdateID gets the next id. A 2xx
// answer delivers u (it leaves the pending queue, if it was there); any
// other answer is recorded as the webhook's last error, as getWebhookInfo
// shows it. The error is ErrNoWebhook, or the transport failure (also in
// Delivery.Err); a non-2xx status is not an error (see Delivery.OK).
func (s *Server) PushUpdate(ctx context.Context, u Update) (Delivery, error) {
	s.mu.Lock()
	hook := s.webhook
	if hook.URL == "" {
		s.mu.Unlock()
		return Delivery{}, ErrNoWebhook
	}
	if u.UpdateID == 0 {
		u.UpdateID = s.nextUpdate
		s.nextUpdate++
	}
	s.mu.Unlock()

	body, _ := json.Marshal(u)
	d := Delivery{UpdateID: u.UpdateID, URL: hook.URL, SecretToken: hook.SecretToken, Body: body}
	req, err := http.NewRequestWithContext(ctxOrBackground(ctx), http.MethodPost, hook.URL, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		if hook.SecretToken != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", hook.SecretToken)
		}
		var resp *http.Response
		if resp, err = s.hook.Do(req); err == nil {
			d.Status = resp.StatusCode
			d.Response, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	d.At = s.clock()
	switch {
	case err != nil:
		d.Err = err.Error()
		s.lastErrDate, s.lastErrMsg = d.At, "Connection refused" // Telegram's wording for an unreachable host [U]
	case d.OK():
		s.pending = slices.DeleteFunc(s.pending, func(p Update) bool { return p.UpdateID == u.UpdateID })
	default:
		s.lastErrDate, s.lastErrMsg = d.At, fmt.Sprintf("Wrong response from the webhook: %d %s", d.Status, http.StatusText(d.Status))
	}
	s.deliveries = append(s.deliveries, d)
	return d, err
}

// PushPending POSTs the pending updates to the webhook in order and stops
// at the first one the receiver does not accept (Telegram retries that one
// later and delivers nothing past it meanwhile). It returns the deliveries
// made.
func (s *Server) PushPending(ctx context.Context) ([]Delivery, error) {
	var out []Delivery
	for {
		s.mu.Lock()
		if s.webhook.URL == "" {
			s.mu.Unlock()
			return out, ErrNoWebhook
		}
		ups := s.deliverable(1)
		s.mu.Unlock()
		if len(ups) == 0 {
			return out, nil
		}
		d, err := s.PushUpdate(ctx, ups[0])
		out = append(out, d)
		if err != nil || !d.OK() {
			return out, err
		}
	}
}

// maybePush delivers pending updates when SetAutoPush is on and a webhook
// is set. s.mu is not held.
func (s *Server) maybePush() {
	s.mu.Lock()
	on := s.autoPush && s.webhook.URL != ""
	s.mu.Unlock()
	if on {
		_, _ = s.PushPending(context.Background())
	}
}
