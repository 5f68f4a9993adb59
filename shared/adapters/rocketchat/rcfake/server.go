// Package rcfake is a stateful fake Rocket.Chat 8.x server for tests: an
// httptest.Server on 127.0.0.1 with users, channels, private groups, direct
// messages, messages, subscriptions and uploads, speaking the REST shapes of
// the real server (read from the Rocket.Chat sources) and reproducing what
// a live Rocket.Chat 8.7 was measured to do:
//
//   - history is newest first and leaves out thread replies unless
//     showThreadMessages=true (or the reply was also sent to the room);
//     system messages (t, e.g. "uj" when a user joins) are part of it;
//   - unread counts only mentions in channels and groups (all messages in
//     DMs), userMentions stays up until subscriptions.read, and a plain
//     message only sets alert;
//   - chat.postMessage answers ts as epoch milliseconds (a number) and
//     message.ts as an ISO string;
//   - rooms.upload answers a bare HTML 404 (gone in 8.x); uploads take
//     rooms.media then rooms.mediaConfirm;
//   - /file-upload without credentials answers 403 with an empty body;
//   - an unknown room answers 400 {"success":false,"error":"[invalid-channel]",
//     "errorType":"invalid-channel"} (error-room-not-found on
//     channels/groups.history and rooms.info);
//   - 401 has the ≥ 8.0 body {"success":false,"error":"You must be logged in to do this."};
//   - a rate limiter of 10 calls per 60 s per route and user, answering 429
//     with X-RateLimit-Limit/-Remaining/-Reset (epoch ms) and no
//     Retry-After; admins bypass it. SetRateLimit changes or disables it.
//
// Setup helpers (AddUser, AddChannel, …) panic on misuse such as an unknown
// username: they are test code, and a panic points at the broken line. Post
// and the inspection helpers return errors or ok flags.
//
// Every request is recorded (Requests, Calls). Time comes from SetClock
// (default time.Now), truncated to milliseconds like MongoDB dates; a frozen
// clock gives equal timestamps, and history's oldest is exclusive as in the
// real server, so advance the clock between posts that a poll must tell
// apart.
package rcfake

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/waittest"
)

// Version is what the fake reports as its version (an admin sees it whole,
// everyone else major.minor).
const Version = "8.7.0"

// DefaultWebhookToken is the outgoing-webhook token until SetWebhookToken.
const DefaultWebhookToken = "rcfake-outgoing-webhook-token"

// Server is the fake. Its methods are safe for concurrent use with the
// requests it serves.
type Server struct {
	// URL is the base URL, http://127.0.0.1:port, without a trailing slash.
	URL string

	srv *httptest.Server

	mu           sync.Mutex
	now          func() time.Time
	rng          *rand.Rand
	webhookToken string

	users   map[string]*user // by id
	byName  map[string]*user // by username
	byToken map[string]*user
	rooms   map[string]*room // by id
	subs    map[string]map[string]*subscription
	msgs    []*message // all rooms, in insertion order
	msgByID map[string]*message
	uploads map[string]*upload

	limit   int
	window  time.Duration
	buckets map[string]*bucket
	limited []RateLimitHit

	webApp string // SetWebApp: where the web client's room links lead

	down     bool
	delay    time.Duration
	failNext map[string][]injected
	dropNext map[string]int
	dropping map[string]bool

	requests []Request
	served   waittest.Signal // notified after every request
	calls    map[string]int

	adm *adminState // provisioning endpoints (admin.go); built on first use
}

type user struct {
	id, username, name, token string
	roles                     []string
}

func (u *user) has(role string) bool { return slices.Contains(u.roles, role) }

type room struct {
	id, t, name, fname, topic string
	members                   []string // user ids, in join order
	ts, updatedAt             time.Time
	msgs                      int
	ro, archived              bool
}

func (r *room) member(uid string) bool { return slices.Contains(r.members, uid) }

type subscription struct {
	id, rid, uid, t, name, fname        string
	unread, userMentions, groupMentions int
	alert, open                         bool
	ts, ls, updatedAt                   time.Time
}

type mention struct{ id, username, name string }

type link struct{ url, title, description string }

type message struct {
	id, rid, msg, uid, t, tmid string
	tshow, bot                 bool
	ts, updatedAt, editedAt    time.Time
	mentions                   []mention
	fileIDs                    []string // originals, then thumbnails
	attachments                []map[string]any
	urls                       []link
	reactions                  map[string][]string // emoji → usernames
	tcount                     int
	replies                    []string // user ids of thread participants
}

type upload struct {
	id, name, typ, rid, uid, description string
	data                                 []byte
	confirmed                            bool
	thumbOf                              string
}

type bucket struct {
	start time.Time
	count int
}

type injected struct {
	status int
	body   string
}

// Request is one recorded request.
type Request struct {
	Method string
	Path   string // unescaped, without query
	Route  string // as counted by Calls
	Query  url.Values
	Header http.Header
	Body   []byte
}

// New starts a fake on 127.0.0.1. Close it when done (t.Cleanup(s.Close)).
func New() *Server {
	s := &Server{
		now:          time.Now,
		rng:          rand.New(rand.NewPCG(1, 2)), // fixed: ids repeat from run to run
		webhookToken: DefaultWebhookToken,
		users:        map[string]*user{},
		byName:       map[string]*user{},
		byToken:      map[string]*user{},
		rooms:        map[string]*room{},
		subs:         map[string]map[string]*subscription{},
		msgByID:      map[string]*message{},
		uploads:      map[string]*upload{},
		limit:        10,
		window:       60 * time.Second,
		buckets:      map[string]*bucket{},
		failNext:     map[string][]injected{},
		dropNext:     map[string]int{},
		dropping:     map[string]bool{},
		calls:        map[string]int{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Until waits until cond holds, checking it now and after every request
// the fake has answered, and fails t, naming what, after timeout. Tests
// wait with it for what a server under test does through the fake (a
// reply posted) instead of sleeping.
func (s *Server) Until(t waittest.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	s.served.Until(t, timeout, what, cond)
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Client returns an *http.Client for the server (httptest's).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// SetClock replaces the clock for timestamps and rate-limit windows.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// SetRateLimit sets the limiter to n calls per window per route and user;
// n <= 0 turns it off. The default is Rocket.Chat's: 10 per 60 s.
// Windows already running are dropped.
func (s *Server) SetRateLimit(n int, window time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit, s.window = n, window
	s.buckets = map[string]*bucket{}
}

// SetDown simulates an outage: while down, every request is answered 503
// with the HTML page of the reverse proxy (nginx) that usually sits in front
// of Rocket.Chat. This is the outage the fake picks; a refused connection is
// what a closed server gives (Close). Requests made while down are still
// recorded.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// SetDelay makes every answer wait d (real time) first, or until the client
// gives up; for timeout tests.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// FailNext makes the next request to route (as Calls names it) answer
// status with body (as JSON if it starts with "{"), once. Calls stack.
func (s *Server) FailNext(route string, status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext[route] = append(s.failNext[route], injected{status: status, body: body})
}

// DropNext makes the next request to route (as Calls names it) end without
// an answer: the fake reads it, records it and closes the connection, as a
// server that crashes or a proxy that resets mid-request does. The request
// is not served, so nothing it asked for happens. Calls stack.
func (s *Server) DropNext(route string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropNext[route]++
}

// SetDropping makes every request to route end without an answer, as
// DropNext does, until it is called with false. Go's transport replays an
// idempotent request (GET) on a new connection when a reused one closes,
// so one DropNext on a GET route may go unnoticed; this does not.
func (s *Server) SetDropping(route string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropping[route] = on
}

// SetWebhookToken sets the token OutgoingWebhookPayload puts into payloads.
func (s *Server) SetWebhookToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhookToken = token
}

// Requests returns every request so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Calls returns how many requests reached route: "chat.postMessage",
// "subscriptions.get", "chat.getMessage", "rooms.media", "rooms.mediaConfirm", "rooms.upload",
// "file-upload", "info", … (the path segment after /api/v1/, without
// parameters).
func (s *Server) Calls(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[route]
}

// --- ids and time ---

const meteorAlphabet = "23456789ABCDEFGHJKLMNPQRSTWXYZabcdefghijkmnopqrstuvwxyz"

// newID returns a Meteor-style 17-character id.
func (s *Server) newID() string { return s.randomString(meteorAlphabet, 17) }

func (s *Server) randomString(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[s.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// newFileID returns a 24-hex id like Rocket.Chat's upload ids.
func (s *Server) newFileID() string { return s.randomString("0123456789abcdef", 24) }

// clock is now in UTC with millisecond precision, like a MongoDB date.
func (s *Server) clock() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// --- setup ---

// AddUser creates a user and returns its id and a personal access token for
// X-User-Id / X-Auth-Token. roles default to "user"; "admin" bypasses the
// rate limiter and sees the full version in /api/info. The display name is
// the username with a capital first letter.
func (s *Server) AddUser(username string, roles ...string) (id, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if username == "" || s.byName[username] != nil {
		panic(fmt.Sprintf("rcfake: AddUser(%q): empty or taken", username))
	}
	if len(roles) == 0 {
		roles = []string{"user"}
	}
	u := &user{id: s.newID(), username: username, name: strings.ToUpper(username[:1]) + username[1:],
		token: s.randomString("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 43), roles: roles}
	s.users[u.id], s.byName[username], s.byToken[u.token] = u, u, u
	return u.id, u.token
}

// AddChannel creates a public channel with the given members (usernames) and
// returns its id.
func (s *Server) AddChannel(name string, members ...string) string {
	return s.addRoom("c", name, members)
}

// AddGroup creates a private group with the given members and returns its id.
func (s *Server) AddGroup(name string, members ...string) string {
	return s.addRoom("p", name, members)
}

// DeleteRoom removes a room with its subscriptions, as an admin's
// rooms.delete does: its id and name then resolve to nothing.
func (s *Server) DeleteRoom(rid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rooms, rid)
	delete(s.subs, rid)
}

func (s *Server) addRoom(t, name string, members []string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == "" || s.roomByName(name) != nil {
		panic(fmt.Sprintf("rcfake: room %q: empty or taken", name))
	}
	now := s.clock()
	id := s.newID()
	if t == "c" && name == "general" && s.rooms["GENERAL"] == nil {
		id = "GENERAL" // a real server's default channel has this id
	}
	r := &room{id: id, t: t, name: name, fname: name, ts: now, updatedAt: now}
	s.rooms[r.id] = r
	for _, m := range members {
		s.addMember(r, s.mustUser(m), now)
	}
	return r.id
}

// AddDM creates the direct message between two users (or returns the
// existing one) and returns its id: the two user ids, sorted and joined, as
// Rocket.Chat builds it.
func (s *Server) AddDM(a, b string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dm(s.mustUser(a), s.mustUser(b)).id
}

// Join adds username to channel or group rid with the "uj" system message a
// real join leaves in history.
func (s *Server) Join(username, rid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, r := s.byName[username], s.rooms[rid]
	switch {
	case u == nil:
		return fmt.Errorf("rcfake: unknown user %q", username)
	case r == nil || r.t == "d":
		return fmt.Errorf("rcfake: %q is no channel or group", rid)
	case r.member(u.id):
		return nil
	}
	s.join(r, u)
	return nil
}

func (s *Server) mustUser(username string) *user {
	u := s.byName[username]
	if u == nil {
		panic(fmt.Sprintf("rcfake: unknown user %q; AddUser first", username))
	}
	return u
}

func (s *Server) roomByName(name string) *room {
	for _, r := range s.rooms {
		if r.t != "d" && r.name == name {
			return r
		}
	}
	return nil
}

func (s *Server) roomByIDOrName(v string) *room {
	if r := s.rooms[v]; r != nil {
		return r
	}
	return s.roomByName(v)
}

// addMember adds u to channel or group r with a fresh subscription (DMs
// are built by dm).
func (s *Server) addMember(r *room, u *user, now time.Time) {
	if r.member(u.id) {
		return
	}
	r.members = append(r.members, u.id)
	sub := &subscription{id: s.newID(), rid: r.id, uid: u.id, t: r.t, name: r.name, fname: r.fname,
		open: true, ts: now, ls: now, updatedAt: now}
	if s.subs[r.id] == nil {
		s.subs[r.id] = map[string]*subscription{}
	}
	s.subs[r.id][u.id] = sub
}

// join is a member joining an existing room: member, subscription and the
// "uj" system message.
func (s *Server) join(r *room, u *user) {
	now := s.clock()
	s.addMember(r, u, now)
	s.store(&message{id: s.newID(), rid: r.id, msg: u.username, uid: u.id, t: "uj", ts: now, updatedAt: now})
}

// dm finds or creates the DM of a and b.
func (s *Server) dm(a, b *user) *room {
	ids := []string{a.id, b.id}
	sort.Strings(ids)
	rid := ids[0] + ids[1]
	if a.id == b.id {
		rid = a.id
	}
	if r := s.rooms[rid]; r != nil {
		return r
	}
	now := s.clock()
	r := &room{id: rid, t: "d", ts: now, updatedAt: now}
	s.rooms[rid] = r
	r.members = append(r.members, a.id)
	if a.id != b.id {
		r.members = append(r.members, b.id)
	}
	for _, id := range r.members {
		u := s.users[id]
		other := b
		if u.id == b.id {
			other = a
		}
		sub := &subscription{id: s.newID(), rid: rid, uid: u.id, t: "d", name: other.username, fname: other.name,
			open: true, ts: now, ls: now, updatedAt: now}
		if s.subs[rid] == nil {
			s.subs[rid] = map[string]*subscription{}
		}
		s.subs[rid][u.id] = sub
	}
	return r
}

// --- traffic ---

// PostOptions shapes a message that Post injects.
type PostOptions struct {
	// Mentions are the usernames the message mentions ("all", "here" for
	// group mentions). nil derives them from the text like the server does
	// (@name of an existing user, @all, @here).
	Mentions []string
	// Tmid makes the message a thread reply; TShow also sends it to the room.
	Tmid  string
	TShow bool
	// Files are attached as by rooms.mediaConfirm (files[], file,
	// attachments; images also get a thumbnail entry in files[]).
	Files []FileSpec
	// URLs become urls[] with their previews in meta. nil derives bare URLs
	// (no meta) from the text.
	URLs []Link
	// SystemType makes a system message (t), e.g. "uj", "ul", "au".
	SystemType string
	// Bot marks the message as posted by an integration (bot: {"i": …}).
	Bot bool
}

// FileSpec is a file attached by Post.
type FileSpec struct {
	Name    string
	Type    string // MIME type; "" means application/octet-stream
	Content []byte
}

// Link is a URL with the preview Rocket.Chat would have fetched.
type Link struct {
	URL, Title, Description string
}

// Message is a stored message as tests see it.
type Message struct {
	ID         string
	RoomID     string
	Text       string
	ThreadID   string
	SystemType string
	At         time.Time
	UserID     string
	Username   string
	Mentions   []string
	Bot        bool
	Edited     bool
	FileIDs    []string // originals only
}

// MustPost is Post for tests: a refused post fails t.
func (s *Server) MustPost(t testing.TB, asUser, rid, text string, opts PostOptions) Message {
	t.Helper()
	m, err := s.Post(asUser, rid, text, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Post stores a message from asUser (a username, who must be a member of
// rid) exactly as if it had been sent, updating every member's subscription
// the way Rocket.Chat 8.x does.
func (s *Server) Post(asUser, rid, text string, opts PostOptions) (Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, r := s.byName[asUser], s.rooms[rid]
	switch {
	case u == nil:
		return Message{}, fmt.Errorf("rcfake: unknown user %q", asUser)
	case r == nil:
		return Message{}, fmt.Errorf("rcfake: unknown room %q", rid)
	case !r.member(u.id):
		return Message{}, fmt.Errorf("rcfake: %q is not a member of %q", asUser, rid)
	}
	now := s.clock()
	m := &message{id: s.newID(), rid: rid, msg: text, uid: u.id, t: opts.SystemType, tmid: opts.Tmid,
		tshow: opts.TShow, bot: opts.Bot, ts: now, updatedAt: now}
	if opts.Mentions != nil {
		for _, name := range opts.Mentions {
			m.mentions = append(m.mentions, s.mentionOf(name))
		}
	} else if opts.SystemType == "" {
		m.mentions = s.parseMentions(text)
	}
	if opts.URLs != nil {
		for _, l := range opts.URLs {
			m.urls = append(m.urls, link{url: l.URL, title: l.Title, description: l.Description})
		}
	} else if opts.SystemType == "" {
		m.urls = parseURLs(text)
	}
	for _, f := range opts.Files {
		up := &upload{id: s.newFileID(), name: f.Name, typ: f.Type, rid: rid, uid: u.id, data: slices.Clone(f.Content), confirmed: true}
		if up.typ == "" {
			up.typ = "application/octet-stream"
		}
		s.uploads[up.id] = up
		s.attach(m, up)
	}
	s.store(m)
	return s.export(m), nil
}

// Edit changes a message's text and sets editedAt, as chat.update does.
func (s *Server) Edit(msgID, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.msgByID[msgID]
	if m == nil {
		return fmt.Errorf("rcfake: unknown message %q", msgID)
	}
	now := s.clock()
	m.msg, m.editedAt, m.updatedAt = text, now, now
	return nil
}

// Messages returns the messages of room rid in the order they were stored,
// thread replies and system messages included.
func (s *Server) Messages(rid string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.msgs {
		if m.rid == rid {
			out = append(out, s.export(m))
		}
	}
	return out
}

// Subscription is a user's subscription state for assertions.
type Subscription struct {
	RoomID        string
	Unread        int
	UserMentions  int
	GroupMentions int
	Alert         bool
	Open          bool
	LastSeen      time.Time
	UpdatedAt     time.Time
}

// Subscription returns username's subscription to rid.
func (s *Server) Subscription(username, rid string) (Subscription, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.byName[username]
	if u == nil {
		return Subscription{}, false
	}
	sub := s.subs[rid][u.id]
	if sub == nil {
		return Subscription{}, false
	}
	return Subscription{RoomID: rid, Unread: sub.unread, UserMentions: sub.userMentions, GroupMentions: sub.groupMentions,
		Alert: sub.alert, Open: sub.open, LastSeen: sub.ls, UpdatedAt: sub.updatedAt}, true
}

// Upload is a stored file for assertions.
type Upload struct {
	ID, RoomID, UserID, Name, Type string
	Content                        []byte
	Confirmed                      bool // published by rooms.mediaConfirm (or Post)
}

// Upload returns the file with id fileID.
func (s *Server) Upload(fileID string) (Upload, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	up := s.uploads[fileID]
	if up == nil {
		return Upload{}, false
	}
	return Upload{ID: up.id, RoomID: up.rid, UserID: up.uid, Name: up.name, Type: up.typ,
		Content: slices.Clone(up.data), Confirmed: up.confirmed}, true
}

// Reactions returns the usernames per emoji on message msgID.
func (s *Server) Reactions(msgID string) map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	if m := s.msgByID[msgID]; m != nil {
		for k, v := range m.reactions {
			out[k] = slices.Clone(v)
		}
	}
	return out
}

func (s *Server) export(m *message) Message {
	u := s.users[m.uid]
	out := Message{ID: m.id, RoomID: m.rid, Text: m.msg, ThreadID: m.tmid, SystemType: m.t, At: m.ts,
		UserID: m.uid, Bot: m.bot, Edited: !m.editedAt.IsZero()}
	if u != nil {
		out.Username = u.username
	}
	for _, mn := range m.mentions {
		out.Mentions = append(out.Mentions, mn.username)
	}
	for _, id := range m.fileIDs {
		if up := s.uploads[id]; up != nil && up.thumbOf == "" {
			out.FileIDs = append(out.FileIDs, id)
		}
	}
	return out
}
