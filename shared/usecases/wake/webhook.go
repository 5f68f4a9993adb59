package wake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Claims are once-only markers that can be given back when the work they
// guard could not be done (the throttle's log line, notices).
type Claims interface {
	Claim(ctx context.Context, key string, expires time.Time) (bool, error)
	Unclaim(ctx context.Context, key string) error
}

// WebhookPayload is the body of a Rocket.Chat outgoing webhook, sendMessage
// event. The token travels only in the body.
type WebhookPayload struct {
	Token       string          `json:"token"`
	Bot         json.RawMessage `json:"bot"` // false, or (on saved messages) an object
	ChannelID   string          `json:"channel_id"`
	ChannelName string          `json:"channel_name"` // missing for DMs
	MessageID   string          `json:"message_id"`
	Timestamp   string          `json:"timestamp"`
	UserID      string          `json:"user_id"`
	UserName    string          `json:"user_name"`
	Text        string          `json:"text"`
	TMID        string          `json:"tmid"`
	IsEdited    bool            `json:"isEdited"`
	TriggerWord string          `json:"trigger_word"`
	SiteURL     string          `json:"siteUrl"`
	Alias       string          `json:"alias"`
}

// IsBot reports whether Rocket.Chat marked the message as a bot's.
func (p WebhookPayload) IsBot() bool {
	b := bytes.TrimSpace(p.Bot)
	return len(b) > 0 && !bytes.Equal(b, []byte("false")) && !bytes.Equal(b, []byte("null"))
}

// WebhookAgent is what the receiver needs to know about one agent.
type WebhookAgent struct {
	ID                string
	UserID            string
	Username          string
	AgentUsernames    []string
	RespondToAllRooms []string
	MentionOnly       bool // false: every message may concern it; the worker decides
	// MaxWakesPerHour is the room's hourly wake limit (0: none): a
	// message in a room that has used it up is turned away here.
	MaxWakesPerHour int
}

// Receiver takes Rocket.Chat outgoing-webhook deliveries (POST
// /hooks/rocketchat, served by shared/httpapi). It checks the body token
// against every configured token in constant time (Authorized), ignores
// bot, own and other agents' messages (Rocket.Chat does not filter its own
// bot posts), picks the agents the message may concern, claims (agent,
// message) once, and queues a job per agent (Receive).
type Receiver struct {
	tokens   [][32]byte
	agents   []WebhookAgent
	claims   WakeStore
	dispatch sb.WakeDispatcher
	// ClaimFor is how long a queued wake stays in progress before a retry
	// or the poll counts its run as gone and takes it over.
	ClaimFor time.Duration
	// Counters and Markers, when set, turn away a message in a room whose
	// hourly wake limit is used up before any claim or job: one read of
	// the room's count and one once-only marker for the log line, and no
	// Rocket.Chat call. Without them the worker's throttle decides.
	Counters sb.Counters
	Markers  Claims
	log      *slog.Logger
	now      func() time.Time
}

// ClaimTTL is how long a delivered message id is remembered.
const ClaimTTL = 7 * 24 * time.Hour

// DefaultClaimFor is the in-progress window when none is configured.
const DefaultClaimFor = 15 * time.Minute

// NewReceiver builds a receiver. With no tokens every delivery is refused.
func NewReceiver(tokens []string, agents []WebhookAgent, claims WakeStore, d sb.WakeDispatcher, log *slog.Logger) *Receiver {
	r := &Receiver{agents: agents, claims: claims, dispatch: d, log: log, now: time.Now, ClaimFor: DefaultClaimFor}
	for _, t := range tokens {
		if t != "" {
			r.tokens = append(r.tokens, sha256.Sum256([]byte(t)))
		}
	}
	return r
}

// Authorized reports whether token is one of the configured webhook
// tokens, comparing with every one in constant time. With no tokens
// configured nothing is.
func (r *Receiver) Authorized(token string) bool {
	g := sha256.Sum256([]byte(token))
	match := 0
	for _, d := range r.tokens {
		match |= subtle.ConstantTimeCompare(d[:], g[:])
	}
	return match == 1 && token != ""
}

// Receive claims and queues the wakes of one authorized delivery. An error
// is temporary (the store or the queue failed): nothing that failed was
// kept, and Rocket.Chat's retry of the delivery tries again.
func (r *Receiver) Receive(ctx context.Context, p WebhookPayload) error {
	queued, err := r.deliver(ctx, p)
	if err != nil {
		r.log.WarnContext(ctx, "rocketchat webhook: temporary failure", "message", p.MessageID, "err", err)
		return err
	}
	r.log.InfoContext(ctx, "rocketchat webhook", "message", p.MessageID, "room", p.ChannelID, "queued", queued)
	return nil
}

// deliver queues one job per concerned agent and reports their ids.
func (r *Receiver) deliver(ctx context.Context, p WebhookPayload) ([]string, error) {
	var queued []string
	for _, a := range r.agents {
		if !r.concerns(a, p) {
			continue
		}
		key, owner := ClaimKey(a.ID, p.MessageID), sb.NewID(r.now())
		if p.IsEdited {
			// The payload's isEdited and text are the sender's word only:
			// the worker fetches the message and claims the edit by its
			// editedAt, so a forged or repeated edit wakes nobody.
			job := sb.WakeJob{AgentID: a.ID, Source: "rocketchat-webhook",
				Pending: &sb.PendingMessage{RoomID: p.ChannelID, MessageID: p.MessageID, ThreadID: p.TMID, Edited: true},
				Claim:   &sb.WakeJobClaim{Owner: owner}}
			if err := r.dispatch.Dispatch(ctx, job); err != nil {
				return queued, err
			}
			queued = append(queued, a.ID)
			continue
		}
		if over, err := r.overLimit(ctx, a, p.ChannelID); err != nil || over {
			if err != nil {
				return queued, err
			}
			continue
		}
		// A claim whose run is gone (its in-progress window passed) is
		// taken over here: Rocket.Chat's retry recovers the wake.
		_, ok, err := r.claims.Take(ctx, key, owner, r.now().Add(r.ClaimFor))
		if err != nil {
			return queued, err
		}
		if !ok {
			continue // done, or a live run has it (a retry or the poll got here first)
		}
		job := sb.WakeJob{AgentID: a.ID, Source: "rocketchat-webhook",
			Pending: &sb.PendingMessage{RoomID: p.ChannelID, MessageID: p.MessageID, ThreadID: p.TMID},
			Claim:   &sb.WakeJobClaim{Keys: []string{key}, Owner: owner}}
		if err := r.dispatch.Dispatch(ctx, job); err != nil {
			if rerr := r.claims.Release(context.WithoutCancel(ctx), key, owner); rerr != nil {
				r.log.ErrorContext(ctx, "rocketchat webhook: could not release claim; the poll takes it over once it expires", "key", key, "err", rerr)
			}
			return queued, err
		}
		queued = append(queued, a.ID)
	}
	return queued, nil
}

// overLimit reports whether the room has used up a's hourly wakes. The
// count is only read: the worker counts the wakes that happen, so a
// message let through near the limit is still refused there. A message
// turned away is not claimed: the room stays silent for the agent until
// the next hour, and the poll, finding it, meets the same limit.
func (r *Receiver) overLimit(ctx context.Context, a WebhookAgent, room string) (bool, error) {
	if r.Counters == nil || r.Markers == nil || a.MaxWakesPerHour <= 0 {
		return false, nil
	}
	now := r.now()
	n, err := r.Counters.Peek(ctx, ThrottleKey(a.ID, room, now))
	if err != nil || n < a.MaxWakesPerHour {
		return false, err
	}
	logThrottleOnce(ctx, r.Markers, r.log, a.ID, room, a.MaxWakesPerHour, now)
	r.log.InfoContext(ctx, "rocketchat webhook: room over its hourly wake limit", "agent", a.ID, "room", room, "limit", a.MaxWakesPerHour)
	return true, nil
}

// concerns is the cheap pre-filter on the webhook payload. The payload has
// no mentions[] (only text), so the worker re-checks the full rules on
// the message it fetches; here we only drop what can never wake the agent.
func (r *Receiver) concerns(a WebhookAgent, p WebhookPayload) bool {
	if strings.EqualFold(p.UserName, a.Username) || p.UserID == a.UserID {
		return false // its own message
	}
	if p.IsBot() {
		return false // Rocket.Chat does not filter bot posts (its own replies included)
	}
	mentioned := mentionsInText(p.Text, a.Username)
	for _, other := range a.AgentUsernames {
		if strings.EqualFold(other, p.UserName) && !mentioned {
			return false // another agent, not addressing this one (loop guard)
		}
	}
	if mentioned || !a.MentionOnly || contains(a.RespondToAllRooms, p.ChannelID) || (p.ChannelName != "" && contains(a.RespondToAllRooms, p.ChannelName)) {
		return true
	}
	// A DM's room id is the two user ids concatenated, and a DM has no name.
	return p.ChannelName == "" && a.UserID != "" && strings.Contains(p.ChannelID, a.UserID)
}

// mentionsInText finds "@username" as a whole word.
func mentionsInText(text, username string) bool {
	if username == "" {
		return false
	}
	needle := "@" + strings.ToLower(username)
	lower := strings.ToLower(text)
	for i := 0; ; {
		j := strings.Index(lower[i:], needle)
		if j < 0 {
			return false
		}
		end := i + j + len(needle)
		// A dot may belong to a username (agent.hermes) or end the sentence
		// ("…, @agent-hermes."): it ends the name when no name character follows.
		if end == len(lower) || !isNameChar(lower[end]) ||
			(lower[end] == '.' && (end+1 == len(lower) || !isNameChar(lower[end+1]))) {
			return true
		}
		i = end
	}
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
