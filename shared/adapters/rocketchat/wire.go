package rocketchat

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Wire shapes of the Rocket.Chat REST API. Decoding is
// lenient on purpose: the server adds fields release by release, and one odd
// field must not fail a whole history page. Converters at the bottom turn
// them into the domain's chat types (switchboard.ChatMessage, …).

// wireEnvelope is the part every answer shares: success plus, on
// failure, error/errorType, and on pre-8.0 servers status/message.
type wireEnvelope struct {
	Success   *bool           `json:"success"`
	Error     json.RawMessage `json:"error"` // usually a string; tolerate anything
	ErrorType string          `json:"errorType"`
	Status    string          `json:"status"`
	Message   json.RawMessage `json:"message"` // pre-8.0 error text; the posted message object on success
}

type wireUser struct {
	ID       string `json:"_id"`
	Username string `json:"username"`
	Name     string `json:"name"`
}

type wireMention struct {
	ID       string `json:"_id"`
	Username string `json:"username"`
	Name     string `json:"name"`
	Type     string `json:"type"` // "user", "team", or absent (also for all/here)
}

type wireFile struct {
	ID   string  `json:"_id"`
	Name string  `json:"name"`
	Type string  `json:"type"`
	Size flexInt `json:"size"`
}

// wireAttachment is a file attachment as sendFileMessage builds it.
type wireAttachment struct {
	Title     string  `json:"title"`
	TitleLink string  `json:"title_link"`
	FileID    string  `json:"fileId"`
	Size      flexInt `json:"size"`
	ImageType string  `json:"image_type"`
	ImageSize flexInt `json:"image_size"`
	AudioType string  `json:"audio_type"`
	AudioSize flexInt `json:"audio_size"`
	VideoType string  `json:"video_type"`
	VideoSize flexInt `json:"video_size"`
}

type wireURL struct {
	URL  string         `json:"url"`
	Meta map[string]any `json:"meta"`
}

type wireMessage struct {
	ID          string           `json:"_id"`
	RID         string           `json:"rid"`
	Msg         string           `json:"msg"`
	TS          rcTime           `json:"ts"`
	U           wireUser         `json:"u"`
	Mentions    []wireMention    `json:"mentions"`
	T           string           `json:"t"`
	TMID        string           `json:"tmid"`
	Bot         json.RawMessage  `json:"bot"` // an object {"i":…} from integrations; presence is what counts
	EditedAt    rcTime           `json:"editedAt"`
	File        *wireFile        `json:"file"`
	Files       []wireFile       `json:"files"`
	Attachments []wireAttachment `json:"attachments"`
	URLs        []wireURL        `json:"urls"`
}

type wireSubscription struct {
	RID           string `json:"rid"`
	T             string `json:"t"`
	Name          string `json:"name"`
	FName         string `json:"fname"`
	Unread        int    `json:"unread"`
	UserMentions  int    `json:"userMentions"`
	GroupMentions int    `json:"groupMentions"`
	Alert         bool   `json:"alert"`
	Open          bool   `json:"open"`
	LS            rcTime `json:"ls"`
	UpdatedAt     rcTime `json:"_updatedAt"`
}

type wireRoom struct {
	ID         string   `json:"_id"`
	T          string   `json:"t"`
	Name       string   `json:"name"`
	FName      string   `json:"fname"`
	Topic      string   `json:"topic"`
	RO         bool     `json:"ro"`
	Archived   bool     `json:"archived"`
	Usernames  []string `json:"usernames"`
	UsersCount int      `json:"usersCount"`
}

// Request bodies. Field order is the order on the wire (golden tests).

type postMessageBody struct {
	// roomId, never channel: the server resolves "#name", "@user", ids and
	// names from either field the same way (processWebhookMessage), but only
	// the roomId variant of the schema allows tmid.
	RoomID string `json:"roomId"`
	Text   string `json:"text"`
	TMID   string `json:"tmid,omitempty"`
}

type reactBody struct {
	MessageID string `json:"messageId"`
	Emoji     string `json:"emoji"`
	// ShouldReact true sets the reaction; without it chat.react toggles, so
	// a repeated call would take it away again.
	ShouldReact bool `json:"shouldReact"`
}

type markReadBody struct {
	RID string `json:"rid"` // accepted by 6.x–8.x
}

type createDMBody struct {
	Username string `json:"username"`
}

// mediaConfirmBody is checked with a strict Match on the server: unknown
// keys fail with 400. The caption goes into msg, where a reader
// (and our own poll) finds it next to files[].
type mediaConfirmBody struct {
	Msg  string `json:"msg,omitempty"`
	TMID string `json:"tmid,omitempty"`
}

// rcTime reads the date forms Rocket.Chat uses: ISO strings in REST bodies,
// epoch milliseconds (chat.postMessage's top-level ts) and EJSON
// {"$date": ms}. null and "" leave it zero.
type rcTime struct{ time.Time }

func (t *rcTime) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" {
			return nil
		}
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return err
		}
		t.Time = v.UTC()
		return nil
	case b[0] == '{':
		var d struct {
			Date json.RawMessage `json:"$date"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			return err
		}
		return t.UnmarshalJSON(d.Date)
	default:
		ms, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			return err
		}
		t.Time = time.UnixMilli(int64(ms)).UTC()
		return nil
	}
}

// flexInt reads a size that may come as a number (also 1.5e3) or a numeric
// string; anything else reads as 0 rather than failing the whole answer.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		*n = flexInt(f)
	}
	return nil
}

// errorText returns the envelope's error as a string: a string as is, any
// other JSON value as its raw text.
func (e wireEnvelope) errorText() string {
	if len(e.Error) == 0 || string(e.Error) == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal(e.Error, &s); err == nil {
		return s
	}
	return string(e.Error)
}

// messageText returns message when it is a string (pre-8.0 error bodies).
func (e wireEnvelope) messageText() string {
	var s string
	if json.Unmarshal(e.Message, &s) == nil {
		return s
	}
	return ""
}

// decodeEnvelope reads the shared part of an answer.
func decodeEnvelope(body []byte) (wireEnvelope, error) {
	var env wireEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return env, err
	}
	return env, nil
}

// --- converters ---

func toMessage(w wireMessage) sb.ChatMessage {
	m := sb.ChatMessage{
		ID:         w.ID,
		RoomID:     w.RID,
		ThreadID:   w.TMID,
		Text:       w.Msg,
		At:         w.TS.Time,
		User:       sb.ChatUser{ID: w.U.ID, Username: w.U.Username, Name: w.U.Name},
		SystemType: w.T,
		Bot:        present(w.Bot),
		Edited:     !w.EditedAt.IsZero(),
		EditedAt:   w.EditedAt.Time,
		Files:      toFiles(w),
		Links:      toLinks(w.URLs),
	}
	for _, mn := range w.Mentions {
		// Team mentions name a team, not a user; all/here carry no type.
		if mn.Username != "" && (mn.Type == "" || mn.Type == "user") {
			m.Mentions = append(m.Mentions, mn.Username)
		}
	}
	return m
}

func toMessages(ws []wireMessage) []sb.ChatMessage {
	out := make([]sb.ChatMessage, 0, len(ws))
	for _, w := range ws {
		out = append(out, toMessage(w))
	}
	return out
}

// present reports whether a JSON field was sent with a value: bot is an
// object ({"i": integrationId}) on messages, a boolean elsewhere.
func present(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null" && s != "false"
}

// toFiles collects a message's files. files[] is the list; for an
// image it also holds the thumbnail, which no attachment names as its fileId,
// so when attachments carry fileIds only those entries count. Older messages
// have only the deprecated file, or only attachments.
func toFiles(w wireMessage) []sb.ChatFile {
	named := map[string]bool{}
	for _, a := range w.Attachments {
		if a.FileID != "" {
			named[a.FileID] = true
		}
	}
	var out []sb.ChatFile
	seen := map[string]bool{}
	add := func(f sb.ChatFile) {
		if f.ID == "" || seen[f.ID] {
			return
		}
		seen[f.ID] = true
		out = append(out, f)
	}
	for _, f := range w.Files {
		if len(named) == 0 || named[f.ID] {
			add(sb.ChatFile{ID: f.ID, Name: f.Name, Type: f.Type, Size: int64(f.Size)})
		}
	}
	if len(out) == 0 && w.File != nil {
		add(sb.ChatFile{ID: w.File.ID, Name: w.File.Name, Type: w.File.Type, Size: int64(w.File.Size)})
	}
	if len(out) == 0 {
		for _, a := range w.Attachments {
			id := a.FileID
			if id == "" {
				id = fileIDFromLink(a.TitleLink)
			}
			add(sb.ChatFile{ID: id, Name: a.Title, Type: firstOf(a.ImageType, a.AudioType, a.VideoType),
				Size: int64(max(a.Size, a.ImageSize, a.AudioSize, a.VideoSize))})
		}
	}
	return out
}

// fileIDFromLink reads the id out of "/file-upload/<id>/<name>".
func fileIDFromLink(link string) string {
	rest, ok := strings.CutPrefix(link, "/file-upload/")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	return id
}

// toLinks reads link previews. meta holds the page's <title> as pageTitle
// and its meta tags camel-cased (ogTitle, ogDescription, description,
// twitterTitle …); the first present wins.
func toLinks(us []wireURL) []sb.ChatLink {
	var out []sb.ChatLink
	for _, u := range us {
		if u.URL == "" {
			continue
		}
		out = append(out, sb.ChatLink{
			URL:         u.URL,
			Title:       metaString(u.Meta, "ogTitle", "twitterTitle", "pageTitle", "title"),
			Description: metaString(u.Meta, "ogDescription", "twitterDescription", "description"),
		})
	}
	return out
}

func metaString(meta map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := meta[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func toSubscription(w wireSubscription) sb.ChatSubscription {
	return sb.ChatSubscription{
		RoomID:        w.RID,
		Type:          sb.RoomType(w.T),
		Name:          w.Name,
		DisplayName:   w.FName,
		Unread:        w.Unread,
		UserMentions:  w.UserMentions,
		GroupMentions: w.GroupMentions,
		Alert:         w.Alert,
		Open:          w.Open,
		LastSeen:      w.LS.Time,
		UpdatedAt:     w.UpdatedAt.Time,
	}
}

func toRoom(w wireRoom) sb.ChatRoom {
	return sb.ChatRoom{
		ID:          w.ID,
		Type:        sb.RoomType(w.T),
		Name:        w.Name,
		DisplayName: w.FName,
		Topic:       w.Topic,
		ReadOnly:    w.RO,
		Archived:    w.Archived,
		Usernames:   w.Usernames,
		MemberCount: w.UsersCount,
	}
}
