package tgfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	maxRequestBody = 16 << 20
	maxText        = 4096 // characters after entity parsing
	maxData        = 64   // callback_data bytes
)

// methods maps lower-case names to the canonical ones: Telegram matches
// method names case-insensitively.
var methods = map[string]string{}

func init() {
	for _, m := range []string{"getMe", "sendMessage", "editMessageText", "answerCallbackQuery",
		"getUpdates", "setWebhook", "deleteWebhook", "getWebhookInfo"} {
		methods[strings.ToLower(m)] = m
	}
}

// canonical is the known name of method, or its lower-case form.
func canonical(method string) string {
	if m, ok := methods[strings.ToLower(method)]; ok {
		return m
	}
	return strings.ToLower(method)
}

// apiError is a failed answer.
type apiError struct {
	status      int
	description string
	retryAfter  int // 429: parameters.retry_after and Retry-After
	migrateTo   int64
}

func badRequest(format string, a ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, description: "Bad Request: " + fmt.Sprintf(format, a...)}
}

// statusText is the description the fake gives an injected failure.
func statusText(status, retryAfter int) string {
	switch status {
	case http.StatusBadRequest:
		return "Bad Request"
	case http.StatusUnauthorized:
		return "Unauthorized"
	case http.StatusForbidden:
		return "Forbidden"
	case http.StatusNotFound:
		return "Not Found"
	case http.StatusConflict:
		return "Conflict"
	case http.StatusTooManyRequests:
		return "Too Many Requests: retry after " + strconv.Itoa(retryAfter)
	case http.StatusInternalServerError:
		return "Internal Server Error"
	case http.StatusBadGateway:
		return "Bad Gateway"
	}
	return http.StatusText(status)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	defer s.served.Notify()
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	token, method, shapeOK := splitPath(r.URL.Path)
	name := canonical(method)
	params, perr := parseParams(r, body)

	s.mu.Lock()
	s.requests = append(s.requests, Request{HTTPMethod: r.Method, Path: r.URL.Path, Token: token, Method: name,
		Params: params, Header: r.Header.Clone(), Body: body, At: s.clock()})
	if shapeOK {
		s.calls[name]++
	}
	down, delay := s.down, s.delay
	var inj *injected
	if q := s.failNext[name]; shapeOK && len(q) > 0 {
		inj = &q[0]
		s.failNext[name] = q[1:]
		if inj.status == 0 { // PassNext
			inj = nil
		}
	}
	s.mu.Unlock()

	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	if down {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Server", "nginx/1.18.0")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n")
		return
	}
	if !shapeOK {
		writeError(w, &apiError{status: http.StatusNotFound, description: "Not Found"})
		return
	}
	if inj != nil {
		e := &apiError{status: inj.status, description: inj.description}
		if e.description == "" {
			if inj.status == http.StatusTooManyRequests && inj.retryAfter < 1 {
				inj.retryAfter = 1
			}
			e.description = statusText(inj.status, inj.retryAfter)
		}
		e.retryAfter = inj.retryAfter
		writeError(w, e)
		return
	}
	// The token is checked before the method is looked at
	// (ClientManager::send, then Client).
	s.mu.Lock()
	valid := s.tokens[token]
	s.mu.Unlock()
	switch {
	case !wellFormed(token):
		writeError(w, &apiError{status: http.StatusUnauthorized, description: "Unauthorized: invalid token specified"})
		return
	case !valid:
		writeError(w, &apiError{status: http.StatusUnauthorized, description: "Unauthorized"})
		return
	case methods[strings.ToLower(method)] == "":
		writeError(w, &apiError{status: http.StatusNotFound, description: "Not Found"})
		return
	case perr != nil:
		writeError(w, badRequest("%s", perr.Error()))
		return
	}
	p := params
	if name == "getUpdates" {
		s.getUpdates(w, r, p) // takes the lock itself: it waits
		return
	}
	s.mu.Lock()
	var (
		result any
		desc   string
		err    *apiError
	)
	switch name {
	case "getMe":
		result = botInfo{User: s.bot, CanJoinGroups: true}
	case "sendMessage":
		result, err = s.sendMessage(p)
	case "editMessageText":
		result, err = s.editMessageText(p)
	case "answerCallbackQuery":
		result, err = s.answerCallbackQuery(p)
	case "setWebhook":
		result, desc, err = s.setWebhook(p)
	case "deleteWebhook":
		result, desc, err = s.deleteWebhook(p)
	case "getWebhookInfo":
		result = s.webhookInfo()
	}
	s.mu.Unlock()
	if err != nil {
		writeError(w, err)
		return
	}
	writeOK(w, result, desc)
}

// botInfo is getMe's result.
type botInfo struct {
	User
	CanJoinGroups           bool `json:"can_join_groups"`
	CanReadAllGroupMessages bool `json:"can_read_all_group_messages"`
	SupportsInlineQueries   bool `json:"supports_inline_queries"`
}

// splitPath reads /bot<token>/<method>. Anything else has no valid shape.
func splitPath(p string) (token, method string, ok bool) {
	rest, found := strings.CutPrefix(p, "/bot")
	if !found {
		return "", "", false
	}
	token, method, found = strings.Cut(rest, "/")
	if !found || token == "" || method == "" || strings.Contains(method, "/") {
		return token, method, false
	}
	return token, method, true
}

// okEnvelope and errorEnvelope keep the field order of the real server.
type okEnvelope struct {
	OK          bool   `json:"ok"`
	Result      any    `json:"result"`
	Description string `json:"description,omitempty"`
}

type errorEnvelope struct {
	OK          bool           `json:"ok"`
	ErrorCode   int            `json:"error_code"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

func writeOK(w http.ResponseWriter, result any, description string) {
	writeJSON(w, http.StatusOK, okEnvelope{OK: true, Result: result, Description: description})
}

func writeError(w http.ResponseWriter, e *apiError) {
	env := errorEnvelope{ErrorCode: e.status, Description: e.description}
	switch {
	case e.status == http.StatusTooManyRequests:
		env.Parameters = map[string]any{"retry_after": e.retryAfter}
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	case e.migrateTo != 0:
		env.Parameters = map[string]any{"migrate_to_chat_id": e.migrateTo}
	case e.retryAfter > 0:
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	writeJSON(w, e.status, env)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// --- parameters ---

// params are a request's parameters as the real server sees them: strings,
// with JSON objects and arrays as their JSON text.
type params map[string]string

// parseParams merges the query string with a JSON, form or multipart body.
func parseParams(r *http.Request, body []byte) (params, error) {
	p := params{}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			p[k] = v[0]
		}
	}
	if len(body) == 0 {
		return p, nil
	}
	ct, mp, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			return p, errors.New("can't parse JSON object") // [U]
		}
		for k, raw := range obj {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				p[k] = s
			} else if string(raw) != "null" {
				p[k] = string(raw)
			}
		}
	case "application/x-www-form-urlencoded":
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return p, errors.New("can't parse form") // [U]
		}
		for k, v := range q {
			p[k] = v[0]
		}
	case "multipart/form-data":
		mr := multipart.NewReader(bytes.NewReader(body), mp["boundary"])
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return p, errors.New("can't parse multipart form") // [U]
			}
			v, _ := io.ReadAll(part)
			p[part.FormName()] = string(v)
		}
	}
	return p, nil
}

func (p params) has(k string) bool { _, ok := p[k]; return ok }

// int reads an integer parameter; absent is 0.
func (p params) int(k string) (int64, *apiError) {
	v, ok := p[k]
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, badRequest("invalid %s specified", k) // [U]
	}
	return n, nil
}

// bool reads a Boolean parameter as the Bot API does ("true" or "1").
func (p params) bool(k string) bool {
	v := strings.ToLower(strings.TrimSpace(p[k]))
	return v == "true" || v == "1"
}

// chatParam resolves chat_id: a number or @username.
func (s *Server) chatParam(p params) (*chat, *apiError) {
	v := strings.TrimSpace(p["chat_id"])
	if v == "" {
		return nil, badRequest("chat_id is empty")
	}
	if strings.HasPrefix(v, "@") {
		if id, ok := s.names[strings.ToLower(v[1:])]; ok {
			return s.chats[id], nil
		}
		return nil, badRequest("chat not found")
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || s.chats[id] == nil {
		return nil, badRequest("chat not found")
	}
	return s.chats[id], nil
}

// forbidden is the 403 for a chat that blocked or removed the bot.
func forbidden(c *chat) *apiError {
	d := "Forbidden: bot was blocked by the user"
	switch c.Type {
	case "group":
		d = "Forbidden: bot was kicked from the group chat"
	case "supergroup":
		d = "Forbidden: bot was kicked from the supergroup chat"
	case "channel":
		d = "Forbidden: bot is not a member of the channel chat"
	}
	return &apiError{status: http.StatusForbidden, description: d}
}

// text checks and parses the text of sendMessage/editMessageText: Telegram
// trims it, parses entities and counts characters.
func textParam(p params) (raw, parsed, mode string, err *apiError) {
	raw = p["text"]
	mode = p["parse_mode"]
	switch strings.ToLower(mode) {
	case "", "html", "markdown", "markdownv2":
	default:
		return "", "", "", badRequest("unsupported parse_mode") // [U]
	}
	if !utf8.ValidString(raw) {
		return "", "", "", badRequest("strings must be encoded in UTF-8") // [U]
	}
	parsed = raw
	if strings.EqualFold(mode, "html") {
		var perr error
		if parsed, perr = parseHTML(raw); perr != nil {
			return "", "", "", badRequest("can't parse entities: %s", perr.Error())
		}
	}
	parsed = strings.TrimSpace(parsed)
	switch {
	case parsed == "":
		return "", "", "", badRequest("message text is empty")
	case utf8.RuneCountInString(parsed) > maxText:
		return "", "", "", badRequest("message is too long")
	}
	return raw, parsed, mode, nil
}

// markupParam parses reply_markup. Only inline keyboards are kept; each
// button needs text and an action; callback_data must be 1–64 bytes.
func markupParam(p params) (*InlineKeyboardMarkup, *apiError) {
	v, ok := p["reply_markup"]
	if !ok || v == "" {
		return nil, nil
	}
	var raw struct {
		InlineKeyboard [][]map[string]json.RawMessage `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(v), &raw); err != nil || raw.InlineKeyboard == nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object") // [U]
	}
	out := &InlineKeyboardMarkup{InlineKeyboard: [][]InlineKeyboardButton{}}
	for _, row := range raw.InlineKeyboard {
		var r []InlineKeyboardButton
		for _, fields := range row {
			var b InlineKeyboardButton
			if json.Unmarshal(fields["text"], &b.Text) != nil {
				return nil, badRequest("can't parse inline keyboard button: Field \"text\" must be of type String") // [U]
			}
			_, hasURL := fields["url"]
			cd, hasData := fields["callback_data"]
			switch {
			case hasURL:
				// url wins when both are given (the server looks for it first).
				if json.Unmarshal(fields["url"], &b.URL) != nil || b.URL == "" {
					return nil, badRequest("can't parse inline keyboard button: Field \"url\" must be of type String") // [U]
				}
			case hasData:
				if json.Unmarshal(cd, &b.CallbackData) != nil || len(b.CallbackData) < 1 || len(b.CallbackData) > maxData {
					return nil, badRequest("BUTTON_DATA_INVALID")
				}
			default:
				return nil, badRequest("text buttons are unallowed in the inline keyboard") // [U]
			}
			r = append(r, b)
		}
		out.InlineKeyboard = append(out.InlineKeyboard, r)
	}
	return out, nil
}

// linkPreviewDisabled reads link_preview_options.is_disabled or the older
// disable_web_page_preview.
func linkPreviewDisabled(p params) bool {
	if v, ok := p["link_preview_options"]; ok {
		var o struct {
			IsDisabled bool `json:"is_disabled"`
		}
		if json.Unmarshal([]byte(v), &o) == nil {
			return o.IsDisabled
		}
	}
	return p.bool("disable_web_page_preview")
}

// rateLimited counts a send to chat id and answers 429 past the limit.
func (s *Server) rateLimited(id int64) *apiError {
	if s.rateLimit <= 0 {
		return nil
	}
	now := s.clock()
	sec := now.Unix()
	b := s.rateBuckets[id]
	if b == nil || b.second != sec {
		b = &bucket{second: sec}
		s.rateBuckets[id] = b
	}
	if b.count >= s.rateLimit {
		wait := int((time.Unix(sec+1, 0).Sub(now) + time.Second - 1) / time.Second)
		if wait < 1 {
			wait = 1
		}
		return &apiError{status: http.StatusTooManyRequests, description: "Too Many Requests: retry after " + strconv.Itoa(wait), retryAfter: wait}
	}
	b.count++
	return nil
}

// --- methods ---

func (s *Server) sendMessage(p params) (any, *apiError) {
	c, err := s.chatParam(p)
	if err != nil {
		return nil, err
	}
	if c.blocked {
		return nil, forbidden(c)
	}
	raw, parsed, mode, err := textParam(p)
	if err != nil {
		return nil, err
	}
	markup, err := markupParam(p)
	if err != nil {
		return nil, err
	}
	var replyTo *Message
	replyID, err := p.int("reply_to_message_id")
	if err != nil {
		return nil, err
	}
	allowNoReply := p.bool("allow_sending_without_reply")
	if v, ok := p["reply_parameters"]; ok {
		var rp struct {
			MessageID                int64 `json:"message_id"`
			AllowSendingWithoutReply bool  `json:"allow_sending_without_reply"`
		}
		if json.Unmarshal([]byte(v), &rp) != nil {
			return nil, badRequest("can't parse reply parameters JSON object") // [U]
		}
		replyID, allowNoReply = rp.MessageID, rp.AllowSendingWithoutReply
	}
	if replyID != 0 {
		if m := s.byID[replyID]; m != nil && m.Chat.ID == c.ID {
			r := cloneMessage(m)
			r.ReplyToMessage = nil
			replyTo = &r
		} else if !allowNoReply {
			return nil, badRequest("message to be replied not found")
		}
	}
	if err := s.rateLimited(c.ID); err != nil {
		return nil, err
	}
	bot := s.bot
	m := &Message{MessageID: s.newMessageID(), From: &bot, Chat: c.wire(), Date: s.clock().Unix(), Text: parsed,
		ReplyToMessage: replyTo, ReplyMarkup: markup, RawText: raw, ParseMode: mode, LinkPreviewDisabled: linkPreviewDisabled(p)}
	s.store(m)
	return cloneMessage(m), nil
}

func (s *Server) editMessageText(p params) (any, *apiError) {
	if p["inline_message_id"] != "" {
		return nil, badRequest("message to edit not found") // inline messages are not modelled
	}
	c, err := s.chatParam(p)
	if err != nil {
		return nil, err
	}
	id, err := p.int("message_id")
	if err != nil {
		return nil, err
	}
	if id == 0 {
		return nil, badRequest("message identifier is not specified") // [U]
	}
	m := s.byID[id]
	if m == nil || m.Chat.ID != c.ID {
		return nil, badRequest("message to edit not found")
	}
	if m.From == nil || m.From.ID != s.bot.ID {
		return nil, badRequest("message can't be edited")
	}
	raw, parsed, mode, err := textParam(p)
	if err != nil {
		return nil, err
	}
	markup, err := markupParam(p)
	if err != nil {
		return nil, err
	}
	if parsed == m.Text && raw == m.RawText && sameMarkup(markup, m.ReplyMarkup) {
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	if err := s.rateLimited(c.ID); err != nil {
		return nil, err
	}
	now := s.clock()
	m.Text, m.RawText, m.ParseMode, m.ReplyMarkup, m.EditDate = parsed, raw, mode, markup, now.Unix()
	m.LinkPreviewDisabled = linkPreviewDisabled(p)
	s.edits = append(s.edits, Edit{ChatID: c.ID, MessageID: id, Text: parsed, RawText: raw, ParseMode: mode,
		ReplyMarkup: cloneMarkup(markup), At: now})
	return cloneMessage(m), nil
}

func sameMarkup(a, b *InlineKeyboardMarkup) bool {
	empty := func(k *InlineKeyboardMarkup) bool { return k == nil || len(k.InlineKeyboard) == 0 }
	if empty(a) || empty(b) {
		return empty(a) && empty(b)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func (s *Server) answerCallbackQuery(p params) (any, *apiError) {
	id := p["callback_query_id"]
	if id == "" {
		return nil, badRequest("parameter \"callback_query_id\" is required") // [U]
	}
	cb := s.callbacks[id]
	now := s.clock()
	if cb == nil || cb.answered || (s.callbackTTL > 0 && now.Sub(cb.created) > s.callbackTTL) {
		return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
	}
	cacheTime, err := p.int("cache_time")
	if err != nil {
		return nil, err
	}
	cb.answered = true
	s.answers = append(s.answers, Answer{CallbackQueryID: id, Text: p["text"], ShowAlert: p.bool("show_alert"),
		URL: p["url"], CacheTime: int(cacheTime), At: now})
	return true, nil
}

// --- HTML entities ---

// htmlTags are the tags Telegram's HTML parse mode supports.
var htmlTags = map[string]bool{"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true, "a": true, "code": true,
	"pre": true, "blockquote": true, "tg-emoji": true}

// parseHTML returns the text of an HTML-mode message: tags removed,
// entities decoded. It refuses unknown and unbalanced tags, as Telegram
// does with "can't parse entities: …" [U: the wording after the colon].
func parseHTML(s string) (string, error) {
	var out strings.Builder
	var stack []string
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			j := strings.IndexByte(s[i:], '>')
			if j < 0 {
				return "", fmt.Errorf("unclosed start tag at byte offset %d", i)
			}
			tag := s[i+1 : i+j]
			if closing, ok := strings.CutPrefix(tag, "/"); ok {
				name := strings.ToLower(strings.TrimSpace(closing))
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return "", fmt.Errorf("unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", i, top(stack), name)
				}
				stack = stack[:len(stack)-1]
			} else {
				name := strings.ToLower(strings.Fields(tag + " ")[0])
				if !htmlTags[name] {
					return "", fmt.Errorf("unsupported start tag \"%s\" at byte offset %d", name, i)
				}
				stack = append(stack, name)
			}
			i += j + 1
		case '&':
			j := strings.IndexByte(s[i:], ';')
			if j > 0 && j <= 10 {
				if r, ok := entity(s[i+1 : i+j]); ok {
					out.WriteRune(r)
					i += j + 1
					continue
				}
			}
			out.WriteByte('&')
			i++
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("can't find end tag corresponding to start tag \"%s\"", top(stack))
	}
	return out.String(), nil
}

func top(stack []string) string {
	if len(stack) == 0 {
		return ""
	}
	return stack[len(stack)-1]
}

func entity(name string) (rune, bool) {
	switch name {
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "amp":
		return '&', true
	case "quot":
		return '"', true
	}
	if n, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if h, ok := strings.CutPrefix(strings.ToLower(n), "x"); ok {
			n, base = h, 16
		}
		if v, err := strconv.ParseInt(n, base, 32); err == nil && utf8.ValidRune(rune(v)) {
			return rune(v), true
		}
	}
	return 0, false
}
