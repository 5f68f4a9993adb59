package rcfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// maxRequestBody caps what the fake reads of a request.
const maxRequestBody = 128 << 20

// routeName is the Calls key of a path: the segment after /api/v1/ without
// parameters, "info" for /api/info, "file-upload" for downloads.
func routeName(p string) string {
	switch {
	case p == "/api/info":
		return "info"
	case strings.HasPrefix(p, "/api/v1/"):
		name, _, _ := strings.Cut(strings.TrimPrefix(p, "/api/v1/"), "/")
		return name
	case strings.HasPrefix(p, "/file-upload/"):
		return "file-upload"
	}
	return p
}

// rateLimited lists the /api/v1 routes the fake serves; the limiter applies
// to them (Rocket.Chat applies its default to every REST route).
var known = map[string]bool{
	"subscriptions.get": true, "subscriptions.read": true,
	"channels.history": true, "groups.history": true, "im.history": true, "dm.history": true,
	"chat.postMessage": true, "chat.react": true, "chat.search": true, "chat.getMessage": true,
	"im.create": true, "dm.create": true,
	"rooms.media": true, "rooms.mediaConfirm": true, "rooms.info": true,
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	defer s.served.Notify()
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	route := routeName(r.URL.Path)

	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Route: route,
		Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
	s.calls[route]++
	down, delay := s.down, s.delay
	var inj *injected
	if q := s.failNext[route]; len(q) > 0 {
		inj = &q[0]
		s.failNext[route] = q[1:]
	}
	drop := s.dropping[route]
	if !drop && s.dropNext[route] > 0 {
		drop = true
		s.dropNext[route]--
	}
	s.mu.Unlock()

	if drop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // HTTP/2: reset the stream
	}

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
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
		return
	}
	if inj != nil {
		if strings.HasPrefix(inj.body, "{") {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(inj.status)
		io.WriteString(w, inj.body)
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	x := &exchange{s: s, w: w, r: r, body: body, route: route}
	x.handle()
}

// exchange is one request being answered, with the server locked.
type exchange struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	body  []byte
	route string
	user  *user // the authenticated user, if any
}

func (x *exchange) handle() {
	p := x.r.URL.Path
	x.user = x.s.authenticate(x.r.Header.Get("X-User-Id"), x.r.Header.Get("X-Auth-Token"))
	if x.serveAdmin() { // settings, users.*, login, logout: admin.go
		return
	}
	switch {
	case p == "/api/info" && x.r.Method == http.MethodGet:
		x.info()
		return
	case strings.HasPrefix(p, "/file-upload/") && x.r.Method == http.MethodGet:
		x.download()
		return
	case x.webRoomLink():
		return
	case !known[x.route] || !x.methodOK():
		x.htmlNotFound()
		return
	}
	if !x.rateLimit() {
		return
	}
	// Typed routes (API.v1.get with a query schema) check their input
	// before the login.
	if x.route == "channels.history" && !x.checkHistoryQuery() {
		return
	}
	if x.user == nil {
		x.json(http.StatusUnauthorized, map[string]any{"success": false, "error": "You must be logged in to do this."})
		return
	}
	switch x.route {
	case "subscriptions.get":
		x.subscriptionsGet()
	case "subscriptions.read":
		x.subscriptionsRead()
	case "channels.history":
		x.channelsHistory()
	case "groups.history":
		x.groupsHistory()
	case "im.history", "dm.history":
		x.imHistory()
	case "chat.postMessage":
		x.postMessage()
	case "chat.react":
		x.react()
	case "chat.search":
		x.search()
	case "chat.getMessage":
		x.getMessage()
	case "im.create", "dm.create":
		x.imCreate()
	case "rooms.media":
		x.roomsMedia()
	case "rooms.mediaConfirm":
		x.roomsMediaConfirm()
	case "rooms.info":
		x.roomsInfo()
	}
}

func (x *exchange) methodOK() bool {
	switch x.route {
	case "subscriptions.get", "channels.history", "groups.history", "im.history", "dm.history", "chat.search", "chat.getMessage", "rooms.info":
		return x.r.Method == http.MethodGet
	}
	return x.r.Method == http.MethodPost
}

func (s *Server) authenticate(uid, token string) *user {
	if uid == "" || token == "" {
		return nil
	}
	if u := s.byToken[token]; u != nil && u.id == uid {
		return u
	}
	return nil
}

// --- answers ---

func (x *exchange) json(status int, v map[string]any) {
	x.w.Header().Set("Content-Type", "application/json")
	x.w.WriteHeader(status)
	x.w.Write(marshal(v))
}

// ok is API.v1.success: the data merged with success:true.
func (x *exchange) ok(v map[string]any) {
	if v == nil {
		v = map[string]any{}
	}
	v["success"] = true
	x.json(http.StatusOK, v)
}

// meteorError is a Meteor.Error thrown in a route: 400 with error
// "<reason> [<code>]" (or "[<code>]" without reason) and errorType <code>.
func (x *exchange) meteorError(code, reason string) {
	text := "[" + code + "]"
	if reason != "" {
		text = reason + " " + text
	}
	x.json(http.StatusBadRequest, map[string]any{"success": false, "error": text, "errorType": code})
}

// plainError is a plain Error thrown in a route or API.v1.failure(text):
// 400 with only error.
func (x *exchange) plainError(text string) {
	x.json(http.StatusBadRequest, map[string]any{"success": false, "error": text})
}

func (x *exchange) forbidden() {
	x.json(http.StatusForbidden, map[string]any{"success": false, "error": "forbidden"})
}

func (x *exchange) invalidParams(reason string) {
	x.json(http.StatusBadRequest, map[string]any{"success": false, "error": reason + " [invalid-params]", "errorType": "invalid-params"})
}

// htmlNotFound is what Rocket.Chat 8.x answers for a route it does not have,
// such as rooms.upload: a bare HTML 404.
func (x *exchange) htmlNotFound() {
	x.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	x.w.Header().Set("X-Content-Type-Options", "nosniff")
	x.w.WriteHeader(http.StatusNotFound)
	fmt.Fprintf(x.w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot %s %s</pre>\n</body>\n</html>\n",
		x.r.Method, htmlEscape(x.r.URL.Path))
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// --- rate limiter ---

// maxLimitedKept caps the refusals RateLimited remembers (the newest).
const maxLimitedKept = 1000

// rateLimit counts the call and answers 429 when the window is used up. The
// key is route plus user (the X-User-Id header, or the client address
// without one); Rocket.Chat keys on IP and route, but every test client is
// 127.0.0.1, and per user keeps agents in one test apart. Users with the
// admin role bypass it (on 8.7, 14 quick admin calls were not limited).
func (x *exchange) rateLimit() bool {
	s := x.s
	if s.limit <= 0 || (x.user != nil && x.user.has("admin")) {
		return true
	}
	who := x.r.Header.Get("X-User-Id")
	if who == "" {
		who = x.r.RemoteAddr
	}
	key := x.route + "|" + who
	now := s.now()
	b := s.buckets[key]
	if b == nil || !now.Before(b.start.Add(s.window)) {
		b = &bucket{start: now}
		s.buckets[key] = b
	}
	b.count++
	reset := b.start.Add(s.window)
	h := x.w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(0, s.limit-b.count)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.UnixMilli(), 10)) // epoch MILLISECONDS
	if b.count <= s.limit {
		return true
	}
	if len(s.limited) >= maxLimitedKept {
		s.limited = s.limited[1:]
	}
	s.limited = append(s.limited, RateLimitHit{At: now, Route: x.route, UserID: x.r.Header.Get("X-User-Id")})
	secs := int(math.Ceil(float64(reset.Sub(now)) / float64(time.Second)))
	x.json(http.StatusTooManyRequests, map[string]any{"success": false, "error": fmt.Sprintf(
		"Error, too many requests. Please slow down. You must wait %d seconds before trying this endpoint again. [error-too-many-requests]", secs)})
	return false
}

// --- /api/info, downloads ---

func (x *exchange) info() {
	v := Version[:strings.LastIndex(Version, ".")] // major.minor without view-statistics
	out := map[string]any{"version": v,
		"minimumClientVersions": map[string]any{"desktop": "3.9.6", "mobile": "4.39.0"},
		"supportedVersions":     "eyJhbGciOiJIUzI1NiJ9.e30.rcfake"}
	if x.user != nil && x.user.has("admin") {
		out["version"] = Version
		out["info"] = map[string]any{"version": Version}
	}
	x.ok(out)
}

// download is GET /file-upload/:id/:name with FileUpload_ProtectFiles on:
// credentials from headers, rc_uid/rc_token query or cookies;
// without them 403 with an empty body, an unknown id 404 empty.
func (x *exchange) download() {
	rest := strings.TrimPrefix(x.r.URL.Path, "/file-upload/")
	id, _, _ := strings.Cut(rest, "/")
	u := x.user
	if u == nil {
		q := x.r.URL.Query()
		u = x.s.authenticate(q.Get("rc_uid"), q.Get("rc_token"))
	}
	if u == nil {
		uid, _ := x.r.Cookie("rc_uid")
		tok, _ := x.r.Cookie("rc_token")
		if uid != nil && tok != nil {
			u = x.s.authenticate(uid.Value, tok.Value)
		}
	}
	if u == nil {
		x.w.WriteHeader(http.StatusForbidden)
		return
	}
	up := x.s.uploads[id]
	if up == nil {
		x.w.WriteHeader(http.StatusNotFound)
		return
	}
	h := x.w.Header()
	h.Set("Content-Type", up.typ)
	h.Set("Content-Length", strconv.Itoa(len(up.data)))
	h.Set("Content-Disposition", "inline; filename=\""+encodeURI(up.name)+"\"")
	h.Set("Content-Security-Policy", "default-src 'none'")
	h.Set("Cache-Control", "max-age=31536000")
	x.w.WriteHeader(http.StatusOK)
	x.w.Write(up.data)
}

// --- subscriptions ---

func (x *exchange) subscriptionsGet() {
	var since time.Time
	if v := x.r.URL.Query().Get("updatedSince"); v != "" {
		t, err := parseJSDate(v)
		if err != nil {
			x.meteorError("error-updatedSince-param-invalid", `The "updatedSince" query parameter must be a valid date.`)
			return
		}
		since = t
	}
	update := []any{}
	for _, sub := range x.s.userSubs(x.user.id) {
		if since.IsZero() || sub.updatedAt.After(since) {
			update = append(update, x.s.wireSubscription(sub))
		}
	}
	x.ok(map[string]any{"update": update, "remove": []any{}})
}

func (s *Server) userSubs(uid string) []*subscription {
	var out []*subscription
	for _, byUser := range s.subs {
		if sub := byUser[uid]; sub != nil {
			out = append(out, sub)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rid < out[j].rid })
	return out
}

func (s *Server) wireSubscription(sub *subscription) map[string]any {
	u := s.users[sub.uid]
	return map[string]any{
		"_id": sub.id, "rid": sub.rid, "t": sub.t, "name": sub.name, "fname": sub.fname,
		"unread": sub.unread, "userMentions": sub.userMentions, "groupMentions": sub.groupMentions,
		"alert": sub.alert, "open": sub.open, "ts": iso(sub.ts), "ls": iso(sub.ls), "lr": iso(sub.ls),
		"u": map[string]any{"_id": u.id, "username": u.username, "name": u.name}, "_updatedAt": iso(sub.updatedAt),
		"tunread": []any{}, "tunreadUser": []any{}, "tunreadGroup": []any{},
	}
}

func (x *exchange) subscriptionsRead() {
	var in struct {
		RID    string `json:"rid"`
		RoomID string `json:"roomId"`
	}
	if err := json.Unmarshal(x.body, &in); err != nil {
		x.invalidParams("must be object")
		return
	}
	rid := in.RID
	if rid == "" {
		rid = in.RoomID
	}
	sub := x.s.subs[rid][x.user.id]
	if sub == nil {
		x.plainError("error-invalid-subscription") // a plain Error: no errorType
		return
	}
	now := x.s.clock()
	sub.unread, sub.userMentions, sub.groupMentions, sub.alert = 0, 0, 0, false
	sub.ls, sub.updatedAt = now, now
	x.ok(nil)
}

// --- history ---

var channelsHistoryParams = map[string]bool{"roomId": true, "roomName": true, "latest": true, "oldest": true,
	"inclusive": true, "count": true, "offset": true, "unreads": true, "showThreadMessages": true}

// checkHistoryQuery is channels.history's query schema
// (additionalProperties: false).
func (x *exchange) checkHistoryQuery() bool {
	for k := range x.r.URL.Query() {
		if !channelsHistoryParams[k] {
			x.json(http.StatusBadRequest, map[string]any{"success": false, "errorType": "error-invalid-params", "error": "must NOT have additional properties"})
			return false
		}
	}
	return true
}

func (x *exchange) channelsHistory() {
	q := x.r.URL.Query()
	if q.Get("roomId") == "" && q.Get("roomName") == "" {
		x.meteorError("error-roomid-param-not-provided", `The parameter "roomId" or "roomName" is required`)
		return
	}
	r := x.s.roomByIDOrName(firstNonEmpty(q.Get("roomId"), q.Get("roomName")))
	if r == nil || r.t != "c" {
		x.meteorError("error-room-not-found", `The required "roomId" or "roomName" param provided does not match any channel`)
		return
	}
	x.history(r) // public channels are readable without being a member
}

func (x *exchange) groupsHistory() {
	q := x.r.URL.Query()
	if q.Get("roomId") == "" && q.Get("roomName") == "" {
		x.meteorError("error-room-param-not-provided", `The parameter "roomId" or "roomName" is required`)
		return
	}
	r := x.s.roomByIDOrName(firstNonEmpty(q.Get("roomId"), q.Get("roomName")))
	// findPrivateGroupByIdOrName looks up the user's own subscription.
	if r == nil || r.t != "p" || x.s.subs[r.id][x.user.id] == nil {
		x.meteorError("error-room-not-found", `The required "roomId" or "roomName" param provided does not match any group`)
		return
	}
	x.history(r)
}

func (x *exchange) imHistory() {
	id := x.r.URL.Query().Get("roomId")
	if id == "" {
		x.meteorError("error-room-param-not-provided", `Query param "roomId" is required`)
		return
	}
	// getRoomByNameOrIdWithOptionToJoin(type 'd'): a user id or name opens
	// (or creates) the DM; an unknown id is invalid-channel.
	var r *room
	if other := x.s.userByIDOrName(id); other != nil {
		r = x.s.dm(x.user, other)
	} else if rr := x.s.rooms[id]; rr != nil && rr.t == "d" {
		r = rr
	}
	if r == nil {
		x.meteorError("invalid-channel", "")
		return
	}
	if !r.member(x.user.id) {
		x.forbidden()
		return
	}
	x.history(r)
}

func (s *Server) userByIDOrName(v string) *user {
	if u := s.users[v]; u != nil {
		return u
	}
	return s.byName[v]
}

// history is getChannelHistory: newest first, oldest/latest exclusive
// unless inclusive, thread replies only with showThreadMessages=true (or
// tshow), then offset and count (default 20).
func (x *exchange) history(r *room) {
	q := x.r.URL.Query()
	// latest defaults to the request time in Rocket.Chat; nothing is newer
	// than that, so no bound stands in for it here: with a frozen test clock
	// "now" would otherwise hide the message just posted.
	var latest time.Time
	if v := q.Get("latest"); v != "" {
		if t, err := parseJSDate(v); err == nil {
			latest = t
		}
	}
	var oldest time.Time
	if v := q.Get("oldest"); v != "" {
		if t, err := parseJSDate(v); err == nil {
			oldest = t
		}
	}
	inclusive := q.Get("inclusive") == "true"
	threads := q.Get("showThreadMessages") == "true"
	count, offset := pagination(q)
	var out []*message
	for i := len(x.s.msgs) - 1; i >= 0; i-- {
		m := x.s.msgs[i]
		if m.rid != r.id || (m.tmid != "" && !m.tshow && !threads) {
			continue
		}
		if inclusive {
			if (!latest.IsZero() && m.ts.After(latest)) || (!oldest.IsZero() && m.ts.Before(oldest)) {
				continue
			}
		} else if (!latest.IsZero() && !m.ts.Before(latest)) || (!oldest.IsZero() && !m.ts.After(oldest)) {
			continue
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ts.After(out[j].ts) })
	x.ok(map[string]any{"messages": x.page(out, offset, count)})
}

func (x *exchange) page(ms []*message, offset, count int) []any {
	res := []any{}
	for i := offset; i < len(ms) && len(res) < count; i++ {
		res = append(res, x.s.wireMessage(ms[i]))
	}
	return res
}

func pagination(q url.Values) (count, offset int) {
	count = 20
	if n, err := strconv.Atoi(q.Get("count")); err == nil && n > 0 {
		count = n
	}
	if n, err := strconv.Atoi(q.Get("offset")); err == nil && n > 0 {
		offset = n
	}
	return count, offset
}

// --- sending ---

var postMessageKeys = map[string]bool{"roomId": true, "channel": true, "text": true, "alias": true, "emoji": true,
	"avatar": true, "attachments": true, "tmid": true, "customFields": true}

const maxMessageSize = 5000 // Message_MaxAllowedSize default

func (x *exchange) postMessage() {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(x.body, &in); err != nil || in == nil {
		x.invalidParams("must be object")
		return
	}
	for k := range in {
		if !postMessageKeys[k] {
			x.invalidParams("must NOT have additional properties")
			return
		}
	}
	_, hasRoom := in["roomId"]
	_, hasChannel := in["channel"]
	_, hasTmid := in["tmid"]
	if hasRoom == hasChannel || (hasChannel && hasTmid) {
		// oneOf {roomId, …, tmid?} | {channel, …}: tmid only with roomId.
		x.invalidParams("must match exactly one schema in oneOf")
		return
	}
	var target, text, tmid string
	json.Unmarshal(in["roomId"], &target)
	if hasChannel {
		json.Unmarshal(in["channel"], &target)
	}
	json.Unmarshal(in["text"], &text)
	json.Unmarshal(in["tmid"], &tmid)
	if len([]rune(text)) > maxMessageSize {
		x.plainError("error-message-size-exceeded")
		return
	}
	r, errCode := x.s.resolveTarget(x.user, target)
	switch {
	case errCode != "":
		x.meteorError(errCode, "")
		return
	case !x.s.canAccess(r, x.user):
		x.plainError("error-not-allowed") // validateRoomMessagePermissions throws a plain Error
		return
	}
	if r.t == "c" && !r.member(x.user.id) {
		x.s.join(r, x.user) // processWebhookMessage joins public channels
	}
	now := x.s.clock()
	m := &message{id: x.s.newID(), rid: r.id, msg: strings.TrimSpace(text), uid: x.user.id, tmid: tmid, ts: now, updatedAt: now}
	m.mentions = x.s.parseMentions(m.msg)
	m.urls = parseURLs(m.msg)
	x.s.store(m)
	x.ok(map[string]any{
		"ts":      now.UnixMilli(), // a number, epoch ms, while message.ts is ISO
		"channel": target,
		"message": x.s.wireMessage(m),
	})
}

// resolveTarget is processWebhookMessage's room lookup: "#name" a channel or
// group by id or name, "@user" the DM with that user (created if needed),
// anything else a room by id or name, then a DM by user id.
func (s *Server) resolveTarget(u *user, target string) (*room, string) {
	switch {
	case strings.HasPrefix(target, "#"):
		if r := s.roomByIDOrName(target[1:]); r != nil {
			return r, ""
		}
	case strings.HasPrefix(target, "@"):
		if other := s.userByIDOrName(target[1:]); other != nil {
			return s.dm(u, other), ""
		}
		if r := s.rooms[target[1:]]; r != nil && r.t == "d" {
			return r, ""
		}
	case target != "":
		if r := s.roomByIDOrName(target); r != nil {
			return r, ""
		}
		if other := s.users[target]; other != nil {
			return s.dm(u, other), ""
		}
	}
	return nil, "invalid-channel"
}

// canAccess is canAccessRoom: public channels for everyone, other rooms for
// members.
func (s *Server) canAccess(r *room, u *user) bool {
	return r != nil && (r.t == "c" || r.member(u.id))
}

var emojiName = regexp.MustCompile(`^:[A-Za-z0-9_+-]+:$`)

func (x *exchange) react() {
	var in struct {
		MessageID   string `json:"messageId"`
		Emoji       string `json:"emoji"`
		Reaction    string `json:"reaction"`
		ShouldReact *bool  `json:"shouldReact"`
	}
	if err := json.Unmarshal(x.body, &in); err != nil {
		x.invalidParams("must be object")
		return
	}
	m := x.s.msgByID[in.MessageID]
	if m == nil {
		x.meteorError("error-message-not-found", `The provided "messageId" does not match any existing message.`)
		return
	}
	emoji := firstNonEmpty(in.Emoji, in.Reaction)
	if emoji == "" {
		x.meteorError("error-emoji-param-not-provided", `The required "emoji" param is missing.`)
		return
	}
	if !strings.HasPrefix(emoji, ":") {
		emoji = ":" + emoji + ":"
	}
	if !emojiName.MatchString(emoji) {
		x.meteorError("error-not-allowed", "Invalid emoji provided.")
		return
	}
	if !x.s.canAccess(x.s.rooms[m.rid], x.user) {
		x.meteorError("not-authorized", "Not Authorized")
		return
	}
	if m.reactions == nil {
		m.reactions = map[string][]string{}
	}
	names := m.reactions[emoji]
	has := slices.Contains(names, x.user.username)
	set := !has // no shouldReact: toggle
	if in.ShouldReact != nil {
		set = *in.ShouldReact
	}
	switch {
	case set && !has:
		m.reactions[emoji] = append(names, x.user.username)
	case !set && has:
		names = slices.DeleteFunc(names, func(n string) bool { return n == x.user.username })
		if len(names) == 0 {
			delete(m.reactions, emoji)
		} else {
			m.reactions[emoji] = names
		}
	}
	m.updatedAt = x.s.clock()
	x.ok(nil)
}

// search is chat.search: substring match on msg, removed messages left out,
// newest first; a room the user cannot access answers a bare failure.
func (x *exchange) search() {
	q := x.r.URL.Query()
	rid, text := q.Get("roomId"), q.Get("searchText")
	switch {
	case rid == "":
		x.meteorError("error-roomId-param-not-provided", `The required "roomId" query param is missing.`)
		return
	case text == "":
		x.meteorError("error-searchText-param-not-provided", `The required "searchText" query param is missing.`)
		return
	}
	r := x.s.rooms[rid]
	if !x.s.canAccess(r, x.user) {
		x.json(http.StatusBadRequest, map[string]any{"success": false}) // API.v1.failure() without arguments
		return
	}
	count, offset := pagination(q)
	needle := strings.ToLower(text)
	var hits []*message
	for i := len(x.s.msgs) - 1; i >= 0; i-- {
		m := x.s.msgs[i]
		if m.rid == rid && m.t != "rm" && strings.Contains(strings.ToLower(m.msg), needle) {
			hits = append(hits, m)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].ts.After(hits[j].ts) })
	x.ok(map[string]any{"messages": x.page(hits, offset, count)})
}

// getMessage is chat.getMessage with getSingleMessage: an unknown id gives
// API.v1.failure() without arguments, a room without access a Meteor error.
func (x *exchange) getMessage() {
	id := x.r.URL.Query().Get("msgId")
	if id == "" {
		x.plainError(`The "msgId" query parameter must be provided.`)
		return
	}
	m := x.s.msgByID[id]
	if m == nil {
		x.json(http.StatusBadRequest, map[string]any{"success": false})
		return
	}
	if !x.s.canAccess(x.s.rooms[m.rid], x.user) {
		x.json(http.StatusBadRequest, map[string]any{"success": false, "error": "Not allowed [error-not-allowed]",
			"errorType": "error-not-allowed", "details": map[string]any{"method": "getSingleMessage"}})
		return
	}
	x.ok(map[string]any{"message": x.s.wireMessage(m)})
}

func (x *exchange) imCreate() {
	var in struct {
		Username  string `json:"username"`
		Usernames string `json:"usernames"`
	}
	if err := json.Unmarshal(x.body, &in); err != nil {
		x.invalidParams("must be object")
		return
	}
	name := in.Username
	if name == "" {
		name, _, _ = strings.Cut(in.Usernames, ",")
		name = strings.TrimSpace(name)
	}
	if name == "" {
		x.meteorError("error-room-param-not-provided", `Body param "username" or "usernames" is required`)
		return
	}
	other := x.s.byName[name]
	if other == nil {
		x.json(http.StatusBadRequest, map[string]any{"success": false, "error": "Invalid user [error-invalid-user]",
			"errorType": "error-invalid-user", "details": map[string]any{"method": "createDirectMessage"}})
		return
	}
	r := x.s.dm(x.user, other)
	x.ok(map[string]any{"room": x.s.wireRoom(r, true)})
}

// wireRoom is IRoom; forCreate adds the rid im.create returns.
func (s *Server) wireRoom(r *room, forCreate bool) map[string]any {
	w := map[string]any{"_id": r.id, "t": r.t, "ts": iso(r.ts), "_updatedAt": iso(r.updatedAt),
		"msgs": r.msgs, "usersCount": len(r.members), "default": false, "ro": r.ro}
	if r.t == "d" {
		var names, uids []string
		for _, id := range r.members {
			names = append(names, s.users[id].username)
			uids = append(uids, id)
		}
		sort.Strings(names)
		w["usernames"], w["uids"] = names, uids
	} else {
		w["name"], w["fname"] = r.name, r.fname
		if r.topic != "" {
			w["topic"] = r.topic
		}
		if r.archived {
			w["archived"] = true
		}
	}
	if forCreate {
		w["rid"] = r.id
	}
	return w
}

// --- uploads ---

func (x *exchange) roomsMedia() {
	rid := strings.TrimPrefix(x.r.URL.Path, "/api/v1/rooms.media/")
	r := x.s.rooms[rid]
	if strings.Contains(rid, "/") || !x.s.canAccess(r, x.user) {
		x.forbidden() // canAccessRoomIdAsync: unknown rooms too
		return
	}
	name, typ, data, err := formFile(x.r.Header.Get("Content-Type"), x.body, "file")
	if err != nil {
		x.meteorError("invalid-field", "")
		return
	}
	up := &upload{id: x.s.newFileID(), name: name, typ: typ, rid: rid, uid: x.user.id, data: data}
	x.s.uploads[up.id] = up
	x.ok(map[string]any{"file": map[string]any{"_id": up.id, "url": fileURL(up)}})
}

// formFile reads the multipart field field: its file name, type and bytes.
func formFile(contentType string, body []byte, field string) (string, string, []byte, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return "", "", nil, errors.New("not multipart/form-data")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			return "", "", nil, err
		}
		if p.FormName() != field || p.FileName() == "" {
			continue
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return "", "", nil, err
		}
		typ := p.Header.Get("Content-Type")
		if typ == "" {
			typ = "application/octet-stream"
		}
		return p.FileName(), typ, data, nil
	}
}

// mediaConfirmKeys is sendFileMessage's strict Match plus description and
// fileName, which the route takes first.
var mediaConfirmKeys = map[string]bool{"msg": true, "description": true, "fileName": true, "tmid": true, "alias": true,
	"emoji": true, "avatar": true, "groupable": true, "customFields": true, "t": true, "content": true}

func (x *exchange) roomsMediaConfirm() {
	rest := strings.TrimPrefix(x.r.URL.Path, "/api/v1/rooms.mediaConfirm/")
	rid, fileID, _ := strings.Cut(rest, "/")
	r := x.s.rooms[rid]
	if !x.s.canAccess(r, x.user) {
		x.forbidden()
		return
	}
	up := x.s.uploads[fileID]
	if up == nil || up.thumbOf != "" {
		x.meteorError("invalid-file", "")
		return
	}
	var in map[string]json.RawMessage
	if len(bytes.TrimSpace(x.body)) > 0 {
		if err := json.Unmarshal(x.body, &in); err != nil {
			x.invalidParams("must be object")
			return
		}
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !mediaConfirmKeys[k] {
			x.json(http.StatusBadRequest, map[string]any{"success": false, "error": "Match error: Unknown key in field " + k, "errorType": "Match.Error"})
			return
		}
	}
	if v, ok := in["customFields"]; ok && (len(v) == 0 || v[0] != '"') {
		// customFields must be a JSON *string* here.
		x.json(http.StatusBadRequest, map[string]any{"success": false, "error": "Match error: Expected string, got object in field customFields", "errorType": "Match.Error"})
		return
	}
	var msg, description, tmid, fileName string
	json.Unmarshal(in["msg"], &msg)
	json.Unmarshal(in["description"], &description)
	json.Unmarshal(in["tmid"], &tmid)
	json.Unmarshal(in["fileName"], &fileName)
	if len([]rune(description)) > maxMessageSize {
		x.meteorError("error-message-size-exceeded", "")
		return
	}
	if fileName != "" {
		up.name = fileName
	}
	up.description, up.confirmed = description, true
	now := x.s.clock()
	m := &message{id: x.s.newID(), rid: rid, msg: msg, uid: x.user.id, tmid: tmid, ts: now, updatedAt: now}
	m.mentions = x.s.parseMentions(msg)
	x.s.attach(m, up)
	x.s.store(m)
	x.ok(map[string]any{"message": x.s.wireMessage(m)})
}

// --- rooms.info ---

func (x *exchange) roomsInfo() {
	q := x.r.URL.Query()
	var r *room
	switch {
	case q.Has("roomId"):
		r = x.s.rooms[q.Get("roomId")]
	case q.Has("roomName"):
		r = x.s.roomByName(q.Get("roomName"))
	default:
		x.meteorError("error-roomid-param-not-provided", `The parameter "roomId" or "roomName" is required`)
		return
	}
	if r == nil {
		x.meteorError("error-room-not-found", `The required "roomId" or "roomName" param provided does not match any channel`)
		return
	}
	if !x.s.canAccess(r, x.user) {
		// API.v1.failure('not-allowed', 'Not Allowed'): code in error, words in errorType.
		x.json(http.StatusBadRequest, map[string]any{"success": false, "error": "not-allowed", "errorType": "Not Allowed"})
		return
	}
	x.ok(map[string]any{"room": x.s.wireRoom(r, false)})
}

// --- helpers ---

// marshal is JSON.stringify: no HTML escaping of <, > and &.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// parseJSDate reads the date forms JavaScript's Date parses that clients
// send: ISO 8601 with or without fraction and zone, a date alone, or epoch
// milliseconds.
func parseJSDate(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("invalid date %q", v)
}
