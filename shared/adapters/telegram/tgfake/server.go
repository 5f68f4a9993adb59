// Package tgfake is a stateful fake Telegram Bot API for tests: an
// httptest.Server on 127.0.0.1 serving /bot<token>/<method> with the shapes
// and answers of the real server (from the Bot API docs and
// tdlib/telegram-bot-api):
//
//   - success {"ok":true,"result":…}; failure {"ok":false,"error_code":N,
//     "description":"…"} with "parameters" where Telegram sends them;
//   - parameters as query string, form, multipart or JSON body; GET or POST;
//     method names case-insensitive; an unknown method or path shape 404
//     {"ok":false,"error_code":404,"description":"Not Found"};
//   - a token that is not one of the valid ones 401 "Unauthorized" (a
//     malformed one "Unauthorized: invalid token specified",
//     telegram-bot-api ClientManager.cpp);
//   - sendMessage: chat_id as number or @username, unknown chat 400 "Bad
//     Request: chat not found", text 1–4096 characters after entity parsing
//     and trimming ("message text is empty", "message is too long"), inline
//     buttons need exactly one action and callback_data of 1–64 BYTES
//     ("BUTTON_DATA_INVALID");
//   - editMessageText: "message to edit not found", "message can't be
//     edited", "message is not modified: …"; no reply_markup removes the
//     buttons;
//   - answerCallbackQuery: an unknown, answered or expired query 400 "query
//     is too old and response timeout expired or query ID is invalid";
//   - getUpdates: offset confirms, a negative offset keeps the last -offset,
//     limit 1–100, long polls up to timeout (capped by SetLongPollCap for
//     tests), wakes when an update arrives, a newer poll ends the older one
//     with 409 "Conflict: terminated by other getUpdates request; …", and
//     with a webhook set 409 "Conflict: can't use getUpdates method while
//     webhook is active; …";
//   - setWebhook/deleteWebhook/getWebhookInfo with secret_token checked
//     against [A-Za-z0-9_-]{1,256}; PushUpdate/PushPending POST updates to
//     the webhook with X-Telegram-Bot-Api-Secret-Token;
//   - 429 {"description":"Too Many Requests: retry after N",
//     "parameters":{"retry_after":N}} AND the header Retry-After: N.
//
// Deviations, on purpose: webhook URLs may be http and any port (the real
// server wants https on 443/80/88/8443, a local-mode server does not);
// message ids are unique across chats (they still grow in each chat);
// Markdown parse modes are not parsed (their text counts as sent); HTML is
// parsed just enough to count characters and refuse unbalanced or unknown
// tags; only the methods above exist (others answer 404). Error wordings
// beyond those documented come from public bot code quoting Telegram and are
// marked [U] where they were not confirmed.
//
// Setup helpers (AddChat, InjectCallback, …) panic on misuse, such as an
// unknown chat: they are test code, and a panic points at the broken line.
//
// Every request is recorded (Requests, Calls). Dates come from SetClock
// (default time.Now); long polls and SetDelay wait in real time.
package tgfake

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/waittest"
)

// DefaultToken is the valid token until SetTokens. Its bot id is 7000000001.
const DefaultToken = "7000000001:AAHtgfake-default-token_0123456789abc"

// DefaultLongPollCap bounds how long one getUpdates waits, whatever
// timeout it asks for, so that tests stay fast.
const DefaultLongPollCap = 2 * time.Second

// DefaultCallbackTTL is how long a callback query can be answered. Telegram
// documents no number; bots report "query is too old" after some seconds
// to minutes [U].
const DefaultCallbackTTL = 15 * time.Second

// tokenShape is what ClientManager.cpp accepts before asking Telegram: a
// positive bot id, ":", no "/", at most 80 characters, no leading 0.
var tokenShape = regexp.MustCompile(`^[1-9][0-9]*:[^/]+$`)

// Server is the fake. Its methods are safe for concurrent use with the
// requests it serves.
type Server struct {
	// URL is the API base, http://127.0.0.1:port, without a trailing slash:
	// the value for telegram.apiBaseUrl.
	URL string

	srv    *httptest.Server
	hook   *http.Client    // for webhook pushes
	served waittest.Signal // notified after every request

	mu      sync.Mutex
	now     func() time.Time
	rng     *rand.Rand
	tokens  map[string]bool
	bot     User
	chats   map[int64]*chat
	names   map[string]int64 // lower-case username → chat id
	msgs    []*Message       // all chats, in order
	byID    map[int64]*Message
	nextMsg int64

	callbacks   map[string]*callback
	callbackTTL time.Duration

	pending    []Update
	nextUpdate int64
	allowed    []string // nil: the default kinds
	pollGen    int
	changed    chan struct{} // closed and replaced on every change pollers care about
	pollWaits  int           // getUpdates requests that went into a long wait
	pollWaited chan struct{} // closed and replaced when pollWaits grows
	pollCap    time.Duration
	closed     bool

	webhook      Webhook
	lastErrDate  time.Time
	lastErrMsg   string
	autoPush     bool
	deliveries   []Delivery
	rateLimit    int
	rateBuckets  map[int64]*bucket
	down         bool
	delay        time.Duration
	failNext     map[string][]injected
	requests     []Request
	calls        map[string]int
	edits        []Edit
	answers      []Answer
	chatInstance map[int64]string
}

type chat struct {
	Chat
	blocked bool
}

type callback struct {
	q        CallbackQuery
	created  time.Time
	answered bool
}

type bucket struct {
	second int64
	count  int
}

type injected struct {
	status      int
	retryAfter  int
	description string
}

// New starts a fake on 127.0.0.1 that accepts DefaultToken. Close it when
// done (t.Cleanup(s.Close)).
func New() *Server {
	s := &Server{
		now:          time.Now,
		rng:          rand.New(rand.NewPCG(7, 11)), // fixed: ids repeat from run to run
		chats:        map[int64]*chat{},
		names:        map[string]int64{},
		byID:         map[int64]*Message{},
		nextMsg:      1,
		callbacks:    map[string]*callback{},
		callbackTTL:  DefaultCallbackTTL,
		nextUpdate:   100000001,
		changed:      make(chan struct{}),
		pollWaited:   make(chan struct{}),
		pollCap:      DefaultLongPollCap,
		rateBuckets:  map[int64]*bucket{},
		failNext:     map[string][]injected{},
		calls:        map[string]int{},
		chatInstance: map[int64]string{},
		hook:         &http.Client{Timeout: 10 * time.Second},
	}
	s.setTokens(DefaultToken)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Until waits until cond holds, checking it now and after every request
// the fake has answered, and fails t, naming what, after timeout. Tests
// wait with it for what a bot under test does through the fake (a message
// sent) instead of sleeping.
func (s *Server) Until(t waittest.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	s.served.Until(t, timeout, what, cond)
}

// Close shuts the server down, ending long polls.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.notify()
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Client returns an *http.Client for the server (httptest's).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// SetClock replaces the clock for message dates, callback expiry and rate
// windows.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// SetTokens replaces the valid tokens (all of one bot, as after /revoke in
// @BotFather); the bot's id is the first token's prefix. Panics on a token
// the real server would call malformed.
func (s *Server) SetTokens(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setTokens(tokens...)
}

func (s *Server) setTokens(tokens ...string) {
	if len(tokens) == 0 {
		panic("tgfake: SetTokens needs at least one token")
	}
	for _, t := range tokens {
		if !wellFormed(t) {
			panic(fmt.Sprintf("tgfake: token %q is malformed (<bot id>:<secret>)", t))
		}
	}
	s.tokens = map[string]bool{}
	for _, t := range tokens {
		s.tokens[t] = true
	}
	id, _ := strconv.ParseInt(tokens[0][:strings.IndexByte(tokens[0], ':')], 10, 64)
	s.bot = User{ID: id, IsBot: true, FirstName: "Switchboard", Username: "switchboard_test_bot"}
}

func wellFormed(token string) bool {
	if len(token) > 80 || !tokenShape.MatchString(token) {
		return false
	}
	id, err := strconv.ParseInt(token[:strings.IndexByte(token, ':')], 10, 64)
	return err == nil && id > 0 && id < 1<<54
}

// Bot returns the bot's user (getMe).
func (s *Server) Bot() User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bot
}

// LongPollWaits is how many getUpdates requests so far found nothing to
// deliver and went into a long wait.
func (s *Server) LongPollWaits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pollWaits
}

// AwaitLongPolls returns once n getUpdates requests in all have gone into a
// long wait (LongPollWaits() >= n), or with ctx's error: a test injects an
// update after a poll is seen waiting instead of sleeping first.
func (s *Server) AwaitLongPolls(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		done, ch := s.pollWaits >= n, s.pollWaited
		s.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// SetLongPollCap bounds how long one getUpdates waits (default
// DefaultLongPollCap); d <= 0 means no cap.
func (s *Server) SetLongPollCap(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pollCap = d
}

// SetCallbackTTL sets how long after InjectCallback a query can still be
// answered (default DefaultCallbackTTL), measured on the clock.
func (s *Server) SetCallbackTTL(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.callbackTTL = d
}

// SetRateLimit allows n sendMessage/editMessageText calls per chat and
// clock second; more answer 429 with retry_after until the next second.
// n <= 0 turns the limit off (the default). Telegram's own numbers (about
// one message per second per chat, 20 per minute in groups) are from its
// FAQ [U].
func (s *Server) SetRateLimit(perChatPerSecond int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimit = perChatPerSecond
	s.rateBuckets = map[int64]*bucket{}
}

// FailNext makes the next request to method (case-insensitive) fail once
// with status: 429 answers Telegram's 429 (description "Too Many Requests:
// retry after N", parameters.retry_after and the Retry-After header, N =
// retryAfter, at least 1); other statuses answer Telegram's envelope with a
// standard description, plus Retry-After when retryAfter > 0. Calls stack.
func (s *Server) FailNext(method string, status, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := canonical(method)
	s.failNext[m] = append(s.failNext[m], injected{status: status, retryAfter: retryAfter})
}

// PassNext queues a request to method that is served normally, so that
// failures queued after it hit a later request: PassNext then FailNext(429)
// lets the first sendMessage through and fails the second (the second part
// of a long text).
func (s *Server) PassNext(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := canonical(method)
	s.failNext[m] = append(s.failNext[m], injected{})
}

// FailNextWith makes the next request to method fail once with status and
// Telegram's description (e.g. 403, "Forbidden: bot was blocked by the
// user").
func (s *Server) FailNextWith(method string, status int, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := canonical(method)
	s.failNext[m] = append(s.failNext[m], injected{status: status, description: description})
}

// SetDown simulates an outage: every request is answered 502 with the HTML
// page of the nginx in front of api.telegram.org. Requests are still
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

// SetAutoPush makes every injected update go to the webhook at once (as
// Telegram does), when one is set: Inject* return after the delivery.
// Off by default: tests call PushPending or PushUpdate.
func (s *Server) SetAutoPush(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.autoPush = on
}

// --- chats and users ---

var chatTypes = []string{"private", "group", "supergroup", "channel"}

// AddChat creates a chat the bot can write to. typ is private (id > 0, the
// user's id: the person has started the bot), group, supergroup or channel
// (id < 0). Groups get the title "Chat <id>". Panics on a bad type or sign,
// or an id already added.
func (s *Server) AddChat(id int64, typ string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(chatTypes, typ) {
		panic(fmt.Sprintf("tgfake: AddChat(%d, %q): type must be one of %v", id, typ, chatTypes))
	}
	if (typ == "private") != (id > 0) || id == 0 {
		panic(fmt.Sprintf("tgfake: AddChat(%d, %q): private chats have positive ids, groups and channels negative ones", id, typ))
	}
	if s.chats[id] != nil {
		panic(fmt.Sprintf("tgfake: AddChat(%d): already added", id))
	}
	c := &chat{Chat: Chat{ID: id, Type: typ}}
	if typ == "private" {
		c.FirstName = "User" + strconv.FormatInt(id, 10)
	} else {
		c.Title = "Chat " + strconv.FormatInt(id, 10)
	}
	s.chats[id] = c
}

// AddUser adds the private chat of u (a person who started the bot), with
// u's names.
func (s *Server) AddUser(u User) {
	s.AddChat(u.ID, "private")
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[u.ID]
	c.FirstName, c.Username = u.FirstName, u.Username
	if u.Username != "" {
		s.names[strings.ToLower(u.Username)] = u.ID
	}
}

// SetChatUsername gives chat id a public username, so that chat_id
// "@username" reaches it. Panics on an unknown chat.
func (s *Server) SetChatUsername(id int64, username string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.mustChat(id)
	username = strings.TrimPrefix(username, "@")
	c.Username = username
	s.names[strings.ToLower(username)] = id
}

// SetBlocked makes sends to chat id fail with 403: "Forbidden: bot was
// blocked by the user" for a private chat, "Forbidden: bot was kicked from
// the group chat" (supergroup chat) for groups, "Forbidden: bot is not a
// member of the channel chat" for channels [U: wordings from bot code].
func (s *Server) SetBlocked(id int64, blocked bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustChat(id).blocked = blocked
}

func (s *Server) mustChat(id int64) *chat {
	c := s.chats[id]
	if c == nil {
		panic(fmt.Sprintf("tgfake: unknown chat %d; AddChat first", id))
	}
	return c
}

// --- inspection ---

// Messages returns the messages of chat id in order: the bot's and the
// injected ones (From tells them apart), as they are now (edits applied).
func (s *Server) Messages(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.msgs {
		if m.Chat.ID == chatID {
			out = append(out, cloneMessage(m))
		}
	}
	return out
}

// Message returns the message with id, as it is now.
func (s *Server) Message(id int64) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.byID[id]
	if m == nil {
		return Message{}, false
	}
	return cloneMessage(m), true
}

// Edits returns every successful editMessageText, oldest first.
func (s *Server) Edits() []Edit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.edits)
}

// Answers returns every successful answerCallbackQuery, oldest first.
func (s *Server) Answers() []Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.answers)
}

// Deliveries returns every webhook POST, oldest first.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.deliveries)
}

// Pending returns the updates not yet confirmed (getUpdates offset) or
// delivered (webhook 2xx), oldest first.
func (s *Server) Pending() []Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pending)
}

// Webhook returns the webhook state; URL is "" when none is set.
func (s *Server) Webhook() Webhook {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.webhook
	w.AllowedUpdates = slices.Clone(w.AllowedUpdates)
	return w
}

// Requests returns every request so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Calls returns how many requests reached method (case-insensitive), valid
// token or not.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[canonical(method)]
}

func cloneMessage(m *Message) Message {
	c := *m
	if m.From != nil {
		f := *m.From
		c.From = &f
	}
	if m.ReplyMarkup != nil {
		c.ReplyMarkup = cloneMarkup(m.ReplyMarkup)
	}
	if m.ReplyToMessage != nil {
		r := cloneMessage(m.ReplyToMessage)
		c.ReplyToMessage = &r
	}
	return c
}

func cloneMarkup(k *InlineKeyboardMarkup) *InlineKeyboardMarkup {
	if k == nil {
		return nil
	}
	out := &InlineKeyboardMarkup{InlineKeyboard: make([][]InlineKeyboardButton, len(k.InlineKeyboard))}
	for i, row := range k.InlineKeyboard {
		out.InlineKeyboard[i] = slices.Clone(row)
	}
	return out
}

// --- helpers ---

// notify wakes every long poll. s.mu is held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) clock() time.Time { return s.now() }

// newMessageID returns the next message id.
func (s *Server) newMessageID() int64 {
	id := s.nextMsg
	s.nextMsg++
	return id
}

func (s *Server) store(m *Message) {
	s.msgs = append(s.msgs, m)
	s.byID[m.MessageID] = m
}

// wireChat is the chat object a message carries.
func (c *chat) wire() Chat { return c.Chat }

// instance is the chat_instance of a chat's callback queries: stable per
// chat, random-looking.
func (s *Server) instance(chatID int64) string {
	if v, ok := s.chatInstance[chatID]; ok {
		return v
	}
	v := strconv.FormatInt(-int64(s.rng.Uint64()>>1), 10)
	s.chatInstance[chatID] = v
	return v
}

// ctxOrBackground is ctx, or a background context when nil.
func ctxOrBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
