package rocketchat

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// isoMillis is how dates go out: what JavaScript's Date.toISOString writes.
const isoMillis = "2006-01-02T15:04:05.000Z07:00"

// Info returns the server's version from GET /api/info, which needs no
// login; the health check uses it. Without the view-statistics
// permission the server tells only major.minor, e.g. "8.7".
// Errors: EUNAVAILABLE when the server cannot be reached or fails;
// EINTERNAL when the answer is not Rocket.Chat's.
func (c *Client) Info(ctx context.Context) (string, error) {
	cl := call{name: "info", method: http.MethodGet, path: "/api/info", epath: "/api/info"}
	var w struct {
		Version string `json:"version"`
	}
	if err := c.do(ctx, request{call: cl}, &w); err != nil {
		return "", err
	}
	if w.Version == "" {
		return "", sb.E("rocketchat.info", sb.EINTERNAL,
			fmt.Sprintf("Rocket.Chat %s: the answer has no version; check that RocketChat.baseUrl (%s) points at Rocket.Chat", cl.endpoint(), c.where))
	}
	return w.Version, nil
}

// Subscriptions returns the user's rooms with their counters in one call
// (subscriptions.get). With a non-zero updatedSince only rooms whose
// subscription changed after it come back; a new message in a room changes
// the subscription of every other member (alert), so this is the cheap "is
// there news" question of a poll tick. Counters: see switchboard.ChatSubscription.
// Errors: EUNAUTHORIZED, ERATELIMITED, EUNAVAILABLE.
func (c *Client) Subscriptions(ctx context.Context, updatedSince time.Time) ([]sb.ChatSubscription, error) {
	q := url.Values{}
	if !updatedSince.IsZero() {
		q.Set("updatedSince", updatedSince.UTC().Format(isoMillis))
	}
	var w struct {
		Update []wireSubscription `json:"update"`
	}
	if err := c.do(ctx, request{call: api(http.MethodGet, "subscriptions.get"), query: q}, &w); err != nil {
		return nil, err
	}
	out := make([]sb.ChatSubscription, 0, len(w.Update))
	for _, s := range w.Update {
		out = append(out, toSubscription(s))
	}
	return out, nil
}

// MarkRead marks room rid read for the user (subscriptions.read): unread,
// userMentions and alert drop to zero and ls moves to now. The
// poll marks a room read only after its messages were collected.
// Errors: ENOTFOUND when the user has no subscription to rid.
func (c *Client) MarkRead(ctx context.Context, rid string) error {
	cl := api(http.MethodPost, "subscriptions.read")
	cl.room = rid
	if rid == "" {
		return sb.E("rocketchat.subscriptions.read", sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the room id is empty")
	}
	return c.postJSON(ctx, cl, markReadBody{RID: rid}, nil)
}

// historyEndpoint picks the history endpoint by room type.
func historyEndpoint(t sb.RoomType) (string, bool) {
	switch t {
	case sb.RoomChannel:
		return "channels.history", true
	case sb.RoomGroup:
		return "groups.history", true
	case sb.RoomDirect:
		return "im.history", true
	}
	return "", false
}

// History returns messages of room rid newer than oldest (exclusive; zero
// means no lower bound), at most count (0 means the server's default of 20),
// OLDEST FIRST. The server answers newest first and, when more than count
// messages are newer than oldest, returns the newest count of them:
// when len(result) == count there may be a gap between oldest and the
// first message returned. Thread replies come only with withThreads (or when
// their author also sent them to the room); system messages such as "uj"
// come too. The endpoint follows roomType: channels.history,
// groups.history or im.history.
// Errors: ENOTFOUND for an unknown room (or a room of another type);
// EFORBIDDEN without access; EINVALID for a room type without history.
func (c *Client) History(ctx context.Context, roomType sb.RoomType, rid string, oldest time.Time, count int, withThreads bool) ([]sb.ChatMessage, error) {
	name, ok := historyEndpoint(roomType)
	if !ok {
		return nil, sb.E("rocketchat.history", sb.EINVALID,
			fmt.Sprintf("Rocket.Chat history of room %s: room type %q has no history endpoint; use c (channel), p (group) or d (direct message)", rid, roomType))
	}
	cl := api(http.MethodGet, name)
	cl.room = rid
	if rid == "" {
		return nil, sb.E("rocketchat."+name, sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the room id is empty")
	}
	q := url.Values{"roomId": {rid}}
	if !oldest.IsZero() {
		q.Set("oldest", oldest.UTC().Format(isoMillis))
	}
	if count > 0 {
		q.Set("count", strconv.Itoa(count))
	}
	if withThreads {
		q.Set("showThreadMessages", "true")
	}
	var w struct {
		Messages []wireMessage `json:"messages"`
	}
	if err := c.do(ctx, request{call: cl, query: q}, &w); err != nil {
		return nil, err
	}
	msgs := toMessages(w.Messages)
	slices.Reverse(msgs) // newest first on the wire; equal timestamps keep their order
	slices.SortStableFunc(msgs, func(a, b sb.ChatMessage) int { return a.At.Compare(b.At) })
	return msgs, nil
}

// PostMessage posts text as the user (chat.postMessage) into
// roomIDOrChannel: a room id, a room name, "#name", or "@username" (which
// opens the DM if needed). A non-empty tmid answers in that thread.
// Returns the stored message and the server's time. The text is scrubbed
// before it leaves (see New).
// Errors: ENOTFOUND "unknown room" (the server says 400 invalid-channel);
// EFORBIDDEN when the user may not post there; EINVALID for an empty or
// over-long text.
func (c *Client) PostMessage(ctx context.Context, roomIDOrChannel, text, tmid string) (sb.ChatSent, error) {
	cl := api(http.MethodPost, "chat.postMessage")
	cl.room = roomIDOrChannel
	switch {
	case strings.TrimSpace(roomIDOrChannel) == "":
		return sb.ChatSent{}, sb.E("rocketchat.chat.postMessage", sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": no room given; name a room id, #channel or @username")
	case strings.TrimSpace(text) == "":
		return sb.ChatSent{}, sb.E("rocketchat.chat.postMessage", sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the text is empty")
	}
	var w struct {
		TS      rcTime      `json:"ts"` // epoch ms, a number
		Message wireMessage `json:"message"`
	}
	if err := c.postJSON(ctx, cl, postMessageBody{RoomID: roomIDOrChannel, Text: c.scrub(ctx, text), TMID: tmid}, &w); err != nil {
		return sb.ChatSent{}, err
	}
	s := sb.ChatSent{ChatMessage: toMessage(w.Message), ServerTime: w.TS.Time}
	if s.At.IsZero() {
		s.At = s.ServerTime
	}
	if s.ID == "" {
		return sb.ChatSent{}, sb.E("rocketchat.chat.postMessage", sb.EINTERNAL, "Rocket.Chat "+cl.endpoint()+": the answer carries no message id")
	}
	return s, nil
}

// React sets the reaction emoji (":+1:" or "+1") on message msgID
// (chat.react with shouldReact true, so a repeated call keeps it set).
// Errors: ENOTFOUND for an unknown message; EINVALID for an emoji the server
// does not know.
func (c *Client) React(ctx context.Context, msgID, emoji string) error {
	cl := api(http.MethodPost, "chat.react")
	cl.message = msgID
	name := strings.Trim(strings.TrimSpace(emoji), ":")
	switch {
	case msgID == "":
		return sb.E("rocketchat.chat.react", sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the message id is empty")
	case name == "":
		return sb.E("rocketchat.chat.react", sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the emoji is empty; use a name like :+1: or :white_check_mark:")
	}
	return c.postJSON(ctx, cl, reactBody{MessageID: msgID, Emoji: ":" + name + ":", ShouldReact: true}, nil)
}

// CreateDM opens (or finds) the direct message with username (im.create) and
// returns its room id. A leading "@" is ignored.
// Errors: ENOTFOUND for an unknown user.
func (c *Client) CreateDM(ctx context.Context, username string) (string, error) {
	cl := api(http.MethodPost, "im.create")
	u := strings.TrimPrefix(strings.TrimSpace(username), "@")
	cl.user = u
	if u == "" {
		return "", sb.E("rocketchat.im.create", sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the username is empty")
	}
	var w struct {
		Room struct {
			ID  string `json:"_id"`
			RID string `json:"rid"`
		} `json:"room"`
	}
	if err := c.postJSON(ctx, cl, createDMBody{Username: u}, &w); err != nil {
		return "", err
	}
	rid := firstOf(w.Room.RID, w.Room.ID)
	if rid == "" {
		return "", sb.E("rocketchat.im.create", sb.EINTERNAL, "Rocket.Chat "+cl.endpoint()+": the answer carries no room id")
	}
	return rid, nil
}

// UploadFile sends a file into room rid in the two steps Rocket.Chat 6.x+
// needs (rooms.upload is gone in 8.x and answers a bare HTML
// 404): POST rooms.media/:rid with the file as multipart field "file", which
// stores it invisibly, then POST rooms.mediaConfirm/:rid/:fileId, which
// publishes it as a message with description as its text, in thread tmid
// when set; name and description are scrubbed (see New), the file's bytes
// are not. size is the exact number of bytes r yields (-1 when unknown: the
// body is then sent chunked). contentType "" means
// application/octet-stream. Returns the published message.
// Errors: EFORBIDDEN without access to rid (the server answers 403 for
// unknown rooms too); EINVALID when r yields a different size or the server
// refuses the file; after a failed second step the message says that the
// upload exists but is not shown (the server drops it after about 24 h).
func (c *Client) UploadFile(ctx context.Context, rid, name, contentType string, r io.Reader, size int64, description, tmid string) (sb.ChatMessage, error) {
	const op = "rocketchat.rooms.media"
	if err := segment(op, "POST /api/v1/rooms.media/:rid", "room id", rid); err != nil {
		return sb.ChatMessage{}, err
	}
	if strings.TrimSpace(name) == "" {
		return sb.ChatMessage{}, sb.E(op, sb.EINVALID, "Rocket.Chat POST /api/v1/rooms.media/"+rid+": the file name is empty")
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}

	cl := api(http.MethodPost, "rooms.media", rid)
	cl.room = rid
	name, description = c.scrub(ctx, name), c.scrub(ctx, description)
	body, length, ctype, err := multipartFile(name, contentType, r, size)
	if err != nil {
		return sb.ChatMessage{}, sb.Wrap(op, sb.EINTERNAL, "Rocket.Chat "+cl.endpoint()+": the upload body could not be built", err)
	}
	var media struct {
		File struct {
			ID  string `json:"_id"`
			URL string `json:"url"`
		} `json:"file"`
	}
	if err := c.do(ctx, request{call: cl, body: body, length: length, contentType: ctype}, &media); err != nil {
		return sb.ChatMessage{}, err
	}
	if err := segment(op, cl.endpoint(), "file id", media.File.ID); err != nil {
		return sb.ChatMessage{}, sb.E(op, sb.EINTERNAL, "Rocket.Chat "+cl.endpoint()+": the answer carries no usable file id")
	}

	confirm := api(http.MethodPost, "rooms.mediaConfirm", rid, media.File.ID)
	confirm.room, confirm.file = rid, media.File.ID
	confirm.hint = fmt.Sprintf("the file was uploaded (id %s) but is not shown in the room; the server drops it after about 24 h", media.File.ID)
	var w struct {
		Message wireMessage `json:"message"`
	}
	if err := c.postJSON(ctx, confirm, mediaConfirmBody{Msg: description, TMID: tmid}, &w); err != nil {
		return sb.ChatMessage{}, err
	}
	return toMessage(w.Message), nil
}

// multipartFile builds the rooms.media body without holding the file in
// memory: the part header and the closing boundary are small buffers around
// r, so the Content-Length is exact when size is known.
func multipartFile(name, contentType string, r io.Reader, size int64) (io.Reader, int64, string, error) {
	var head, tail bytes.Buffer
	sw := &switchWriter{w: &head}
	mw := multipart.NewWriter(sw)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s"`, quoteEscaper.Replace(name)))
	h.Set("Content-Type", contentType)
	if _, err := mw.CreatePart(h); err != nil {
		return nil, 0, "", err
	}
	sw.w = &tail
	if err := mw.Close(); err != nil {
		return nil, 0, "", err
	}
	length := int64(-1)
	if size >= 0 {
		length = int64(head.Len()) + size + int64(tail.Len())
	}
	return io.MultiReader(&head, r, &tail), length, mw.FormDataContentType(), nil
}

// quoteEscaper is what mime/multipart's CreateFormFile applies to names.
var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "%0D", "\n", "%0A")

type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

// Download starts fetching file fileID (GET /file-upload/{id}/{name}) with
// the user's auth headers, which FileUpload_ProtectFiles requires.
// The server finds the file by id; name is only the last path segment
// and defaults to "download". The caller closes Body and enforces its own
// size limit while reading.
// Errors: EFORBIDDEN (403 with an empty body: wrong credentials or no
// access); ENOTFOUND for an unknown id.
func (c *Client) Download(ctx context.Context, fileID, name string) (*sb.ChatDownload, error) {
	const op = "rocketchat.file-upload"
	if name == "" {
		name = "download"
	}
	if err := segment(op, "GET /file-upload/:id/:name", "file id", fileID); err != nil {
		return nil, err
	}
	if err := segment(op, "GET /file-upload/:id/:name", "file name", name); err != nil {
		return nil, err
	}
	cl := call{name: "file-upload", method: http.MethodGet,
		path: "/file-upload/" + fileID + "/" + name, epath: "/file-upload/" + url.PathEscape(fileID) + "/" + url.PathEscape(name), file: fileID}
	resp, err := c.send(ctx, request{call: cl}, "*/*")
	if err != nil {
		return nil, err
	}
	return &sb.ChatDownload{Body: resp.Body, Size: resp.ContentLength, ContentType: resp.Header.Get("Content-Type")}, nil
}

// Search finds messages in room rid that match query (chat.search), at most
// count (0: the server's default). The order is the server's: newest first.
// Errors: ENOTFOUND for a room that does not exist or that the user cannot
// access (the server answers a bare 400 {"success":false} for both).
func (c *Client) Search(ctx context.Context, rid, query string, count int) ([]sb.ChatMessage, error) {
	cl := api(http.MethodGet, "chat.search")
	cl.room = rid
	switch {
	case rid == "":
		return nil, sb.E("rocketchat.chat.search", sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the room id is empty")
	case strings.TrimSpace(query) == "":
		return nil, sb.E("rocketchat.chat.search", sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the search text is empty")
	}
	q := url.Values{"roomId": {rid}, "searchText": {query}}
	if count > 0 {
		q.Set("count", strconv.Itoa(count))
	}
	var w struct {
		Messages []wireMessage `json:"messages"`
	}
	if err := c.do(ctx, request{call: cl, query: q}, &w); err != nil {
		return nil, err
	}
	return toMessages(w.Messages), nil
}

// RoomInfo describes a room by id or name (rooms.info). "#name" asks by name
// only; anything else is asked by id first and, when no room has that id, by
// name (a second call).
// Errors: ENOTFOUND for an unknown room; EFORBIDDEN without access.
func (c *Client) RoomInfo(ctx context.Context, ridOrName string) (sb.ChatRoom, error) {
	v := strings.TrimSpace(ridOrName)
	if v == "" {
		return sb.ChatRoom{}, sb.E("rocketchat.rooms.info", sb.EINVALID, "Rocket.Chat GET /api/v1/rooms.info: no room given")
	}
	if name, ok := strings.CutPrefix(v, "#"); ok {
		return c.roomInfo(ctx, "roomName", name, ridOrName)
	}
	room, err := c.roomInfo(ctx, "roomId", v, ridOrName)
	if sb.ErrorCode(err) == sb.ENOTFOUND {
		return c.roomInfo(ctx, "roomName", v, ridOrName)
	}
	return room, err
}

func (c *Client) roomInfo(ctx context.Context, param, value, asked string) (sb.ChatRoom, error) {
	cl := api(http.MethodGet, "rooms.info")
	cl.room = asked
	var w struct {
		Room wireRoom `json:"room"`
	}
	if err := c.do(ctx, request{call: cl, query: url.Values{param: {value}}}, &w); err != nil {
		return sb.ChatRoom{}, err
	}
	return toRoom(w.Room), nil
}
