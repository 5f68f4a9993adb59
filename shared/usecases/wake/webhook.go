package wake

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
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
}

// Receiver handles POST /hooks/rocketchat. It checks the body token
// against every configured token in constant time, ignores bot, own and
// other agents' messages (Rocket.Chat does not filter its own bot posts),
// picks the agents the message may concern, claims (agent, message) once,
// and queues a job per agent. It answers at once with a non-empty JSON body
// that posts nothing; a temporary failure answers 503 so that Rocket.Chat
// retries (a 500 with a body is never retried; a 200 with an empty body is).
type Receiver struct {
	tokens   [][32]byte
	agents   []WebhookAgent
	claims   WakeStore
	dispatch Dispatcher
	// ClaimFor is how long a queued wake stays in progress before a retry
	// or the poll counts its run as gone and takes it over.
	ClaimFor time.Duration
	log      *slog.Logger
	now      func() time.Time
}

// ClaimTTL is how long a delivered message id is remembered.
const ClaimTTL = 7 * 24 * time.Hour

// DefaultClaimFor is the in-progress window when none is configured.
const DefaultClaimFor = 15 * time.Minute

// NewReceiver builds a receiver. With no tokens every delivery is refused.
func NewReceiver(tokens []string, agents []WebhookAgent, claims WakeStore, d Dispatcher, log *slog.Logger) *Receiver {
	r := &Receiver{agents: agents, claims: claims, dispatch: d, log: log, now: time.Now, ClaimFor: DefaultClaimFor}
	for _, t := range tokens {
		if t != "" {
			r.tokens = append(r.tokens, sha256.Sum256([]byte(t)))
		}
	}
	return r
}

// okBody is non-empty JSON without text/attachments: Rocket.Chat counts the
// call as delivered and posts nothing.
var okBody = map[string]any{"success": true}

func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, httpapi.MaxBody+1))
	if err != nil || len(body) > httpapi.MaxBody {
		httpapi.WriteJSON(w, http.StatusBadRequest, sb.Fail("the body could not be read or is larger than 1 MiB"))
		return
	}
	var p WebhookPayload
	if err := json.Unmarshal(body, &p); err != nil {
		httpapi.WriteJSON(w, http.StatusBadRequest, sb.Fail("the body is not a Rocket.Chat outgoing-webhook JSON object"))
		return
	}
	if !httpapi.TokenMatches(r.tokens, p.Token) {
		httpapi.WriteJSON(w, http.StatusUnauthorized, sb.Fail("wrong or missing token; set the integration's token to one of instance.rocketchat.webhookTokens"))
		return
	}
	if p.MessageID == "" || p.ChannelID == "" {
		httpapi.WriteJSON(w, http.StatusBadRequest, sb.Fail("message_id and channel_id are required; configure the integration for the sendMessage event"))
		return
	}
	queued, err := r.deliver(req.Context(), p)
	if err != nil {
		r.log.WarnContext(req.Context(), "rocketchat webhook: temporary failure", "message", p.MessageID, "err", err)
		httpapi.WriteJSON(w, http.StatusServiceUnavailable, sb.Fail("temporarily unable to queue the message; Rocket.Chat will retry"))
		return
	}
	r.log.InfoContext(req.Context(), "rocketchat webhook", "message", p.MessageID, "room", p.ChannelID, "queued", queued)
	httpapi.WriteJSON(w, http.StatusOK, okBody)
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
			job := Job{AgentID: a.ID, Source: "rocketchat-webhook",
				Pending: &Pending{RoomID: p.ChannelID, MessageID: p.MessageID, ThreadID: p.TMID, Edited: true},
				Claim:   &JobClaim{Owner: owner}}
			if err := r.dispatch.Dispatch(ctx, job); err != nil {
				return queued, err
			}
			queued = append(queued, a.ID)
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
		job := Job{AgentID: a.ID, Source: "rocketchat-webhook",
			Pending: &Pending{RoomID: p.ChannelID, MessageID: p.MessageID, ThreadID: p.TMID},
			Claim:   &JobClaim{Keys: []string{key}, Owner: owner}}
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
