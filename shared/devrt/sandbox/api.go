package sandbox

import (
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
)

//go:embed page.html
var page []byte

// maxUpload caps a file the person attaches in the sandbox chat.
const maxUpload = 5 << 20

// Mount adds the sandbox page and its JSON API under /dev/sandbox/.
func (s *Sandbox) Mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /dev/sandbox/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(page)
	})
	mux.HandleFunc("GET /dev/sandbox", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/dev/sandbox/", http.StatusFound)
	})
	mux.HandleFunc("GET /dev/sandbox/api/state", s.state)
	mux.HandleFunc("GET /dev/sandbox/api/rooms/{rid}/messages", s.roomMessages)
	mux.HandleFunc("POST /dev/sandbox/api/rooms/{rid}/messages", s.post)
	mux.HandleFunc("GET /dev/sandbox/api/uploads/{id}", s.upload)
	mux.HandleFunc("GET /dev/sandbox/api/telegram", s.telegram)
	mux.HandleFunc("POST /dev/sandbox/api/telegram/messages", s.telegramWrite)
	mux.HandleFunc("POST /dev/sandbox/api/telegram/press", s.press)
	mux.HandleFunc("GET /dev/sandbox/api/nextcloud", s.files)
	mux.HandleFunc("GET /dev/sandbox/api/nextcloud/file", s.file)
}

type roomJSON struct {
	ID   string `json:"id"`
	Type string `json:"type"` // c, p, d
	Name string `json:"name"` // for a DM: the other member
}

func (s *Sandbox) state(w http.ResponseWriter, _ *http.Request) {
	out := map[string]any{"human": s.human, "agents": s.agents, "parts": s.Parts, "channel": Channel}
	console := map[string]any{"url": s.ConsoleURL(), "password": s.consolePassword}
	if len(s.agents) >= 2 {
		// The pair view: what the first two agents said to each other.
		console["pair"] = s.ConsoleURL() + "?a=" + url.QueryEscape(s.agents[0].ID) + "&b=" + url.QueryEscape(s.agents[1].ID)
	}
	out["console"] = console
	if s.RC != nil {
		out["rateLimited"] = s.rateLimited()
		rooms := []roomJSON{}
		for _, r := range s.RC.RoomsOf(s.human) {
			name := r.Name
			if r.Type == "d" {
				for _, m := range r.Members {
					if m != s.human {
						name = m
					}
				}
			}
			rooms = append(rooms, roomJSON{ID: r.ID, Type: r.Type, Name: name})
		}
		out["rooms"] = rooms
		out["rocketchat"] = s.RC.URL
	}
	if s.TG != nil {
		out["telegram"] = map[string]any{"url": s.TG.URL, "bot": s.TG.Bot(), "chatId": HumanTelegram}
	}
	if s.NC != nil {
		out["nextcloud"] = map[string]any{"url": s.NC.URL, "user": s.NC.User()}
	}
	writeJSON(w, http.StatusOK, out)
}

// rateLimitWindow is how far back the page shows the sandbox Rocket.Chat's
// refusals: its limiter's window (10 calls per 60 s per route and user).
const rateLimitWindow = time.Minute

type rateLimitJSON struct {
	At    time.Time `json:"at"`
	User  string    `json:"user"`
	Route string    `json:"route"`
}

// rateLimited lists the calls the sandbox Rocket.Chat refused for its rate
// limit within the last window: an agent's answer that Rocket.Chat would
// not take goes to the Telegram chat instead, and the page says why.
func (s *Sandbox) rateLimited() []rateLimitJSON {
	out := []rateLimitJSON{}
	for _, h := range s.RC.RateLimited(time.Now().Add(-rateLimitWindow)) {
		out = append(out, rateLimitJSON{At: h.At, User: s.RC.UsernameOf(h.UserID), Route: h.Route})
	}
	return out
}

type fileJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Size int    `json:"size"`
}

type messageJSON struct {
	ID       string     `json:"id"`
	User     string     `json:"user"`
	Text     string     `json:"text"`
	ThreadID string     `json:"tmid,omitempty"`
	At       time.Time  `json:"at"`
	Mine     bool       `json:"mine"`
	System   string     `json:"system,omitempty"`
	Files    []fileJSON `json:"files,omitempty"`
}

func (s *Sandbox) needRC(w http.ResponseWriter) bool {
	if s.RC == nil {
		writeError(w, http.StatusNotFound, "the sandbox Rocket.Chat is off: the config points at a real Rocket.Chat; use that server")
		return false
	}
	return true
}

// room returns rid when the person is a member of it.
func (s *Sandbox) room(w http.ResponseWriter, rid string) bool {
	for _, r := range s.RC.RoomsOf(s.human) {
		if r.ID == rid {
			return true
		}
	}
	writeError(w, http.StatusNotFound, "no such room in the sandbox; GET /dev/sandbox/api/state lists the rooms")
	return false
}

func (s *Sandbox) roomMessages(w http.ResponseWriter, r *http.Request) {
	rid := r.PathValue("rid")
	if !s.needRC(w) || !s.room(w, rid) {
		return
	}
	out := []messageJSON{}
	for _, m := range s.RC.Messages(rid) {
		mj := messageJSON{ID: m.ID, User: m.Username, Text: m.Text, ThreadID: m.ThreadID, At: m.At,
			Mine: m.Username == s.human, System: m.SystemType}
		for _, id := range m.FileIDs {
			if up, ok := s.RC.Upload(id); ok {
				mj.Files = append(mj.Files, fileJSON{ID: id, Name: up.Name, Type: up.Type, Size: len(up.Content)})
			}
		}
		out = append(out, mj)
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out})
}

type postRequest struct {
	Text string `json:"text"`
	TMID string `json:"tmid"`
	File *struct {
		Name string `json:"name"`
		Type string `json:"type"`
		Data string `json:"data"` // base64
	} `json:"file"`
}

// post stores the person's message in the fake Rocket.Chat and delivers
// the outgoing webhook for it, as the real server does after a message.
func (s *Sandbox) post(w http.ResponseWriter, r *http.Request) {
	rid := r.PathValue("rid")
	if !s.needRC(w) || !s.room(w, rid) {
		return
	}
	var req postRequest
	if !readJSON(w, r, &req) {
		return
	}
	req.Text = trimmed(req.Text)
	opts := rcfake.PostOptions{Tmid: req.TMID}
	if req.File != nil && req.File.Name != "" {
		data, err := base64.StdEncoding.DecodeString(req.File.Data)
		if err != nil {
			writeError(w, http.StatusBadRequest, `"file.data" must be base64`)
			return
		}
		if len(data) > maxUpload {
			writeError(w, http.StatusRequestEntityTooLarge, "the sandbox takes files up to 5 MB")
			return
		}
		opts.Files = []rcfake.FileSpec{{Name: path.Base(req.File.Name), Type: req.File.Type, Content: data}}
	}
	if req.Text == "" && len(opts.Files) == 0 {
		writeError(w, http.StatusBadRequest, `write a "text" or attach a "file"`)
		return
	}
	msg, err := s.RC.Post(s.human, rid, req.Text, opts)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	delivered := ""
	if err := s.DeliverWebhook(r.Context(), msg); err != nil {
		// The real server drops a failed webhook too (after its retries);
		// the poll job still finds the message.
		delivered = "the outgoing webhook failed (" + err.Error() + "); the rocketchat-poll job will pick the message up"
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": msg.ID, "webhook": delivered})
}

func (s *Sandbox) upload(w http.ResponseWriter, r *http.Request) {
	if !s.needRC(w) {
		return
	}
	up, ok := s.RC.Upload(r.PathValue("id"))
	if !ok || !up.Confirmed {
		writeError(w, http.StatusNotFound, "no such file")
		return
	}
	serveFile(w, up.Name, up.Type, up.Content)
}

type tgMessage struct {
	ID      int64                           `json:"id"`
	FromBot bool                            `json:"fromBot"`
	Text    string                          `json:"text"`
	Date    int64                           `json:"date"`
	Edited  bool                            `json:"edited"`
	Buttons [][]tgfake.InlineKeyboardButton `json:"buttons,omitempty"`
}

func (s *Sandbox) needTG(w http.ResponseWriter) bool {
	if s.TG == nil {
		writeError(w, http.StatusNotFound, "the sandbox Telegram is off: the config names a real bot; use Telegram")
		return false
	}
	return true
}

func (s *Sandbox) telegram(w http.ResponseWriter, _ *http.Request) {
	if !s.needTG(w) {
		return
	}
	out := []tgMessage{}
	bot := s.TG.Bot().ID
	for _, m := range s.TG.Messages(HumanTelegram) {
		tm := tgMessage{ID: m.MessageID, FromBot: m.From != nil && m.From.ID == bot, Text: m.Text, Date: m.Date, Edited: m.EditDate != 0}
		if m.ReplyMarkup != nil {
			tm.Buttons = m.ReplyMarkup.InlineKeyboard
		}
		out = append(out, tm)
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out})
}

func (s *Sandbox) person() tgfake.User {
	return tgfake.User{ID: HumanTelegram, FirstName: "You", Username: s.human}
}

// telegramWrite is the person writing to the bot (e.g. "/hermes hi").
func (s *Sandbox) telegramWrite(w http.ResponseWriter, r *http.Request) {
	if !s.needTG(w) {
		return
	}
	var req struct {
		Text string `json:"text"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if trimmed(req.Text) == "" {
		writeError(w, http.StatusBadRequest, `"text" is required`)
		return
	}
	// The fake pushes the update to the webhook before it returns, and
	// the webhook may run an agent: in the background, like a phone that
	// does not wait for the bot.
	go s.TG.InjectMessage(HumanTelegram, s.person(), trimmed(req.Text))
	writeJSON(w, http.StatusAccepted, map[string]any{"queued": true})
}

// press is the person pressing an inline button of a bot message.
func (s *Sandbox) press(w http.ResponseWriter, r *http.Request) {
	if !s.needTG(w) {
		return
	}
	var req struct {
		MessageID int64  `json:"messageId"`
		Data      string `json:"data"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	m, ok := s.TG.Message(req.MessageID)
	if !ok || m.ReplyMarkup == nil || !slices.ContainsFunc(slices.Concat(m.ReplyMarkup.InlineKeyboard...), func(b tgfake.InlineKeyboardButton) bool {
		return b.CallbackData == req.Data && b.CallbackData != ""
	}) {
		writeError(w, http.StatusConflict, "that message has no such button (any more); reload the inbox")
		return
	}
	go s.TG.InjectCallback(s.person(), req.MessageID, req.Data)
	writeJSON(w, http.StatusAccepted, map[string]any{"queued": true})
}

type entryJSON struct {
	Path     string    `json:"path"`
	Dir      bool      `json:"dir"`
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
	// Link is the file's Nextcloud link (/f/<fileid>), as the agents post
	// it; the sandbox Nextcloud redirects it to the file.
	Link       string   `json:"link,omitempty"`
	SharedWith []string `json:"sharedWith,omitempty"`
}

func (s *Sandbox) needNC(w http.ResponseWriter) bool {
	if s.NC == nil {
		writeError(w, http.StatusNotFound, "the sandbox Nextcloud is off: the config points at a real Nextcloud; look there")
		return false
	}
	return true
}

func (s *Sandbox) files(w http.ResponseWriter, _ *http.Request) {
	if !s.needNC(w) {
		return
	}
	out := []entryJSON{}
	for _, e := range s.NC.Tree(ncRootBase) {
		ej := entryJSON{Path: e.Path, Dir: e.Dir, Size: e.Size, Modified: e.Modified}
		if !e.Dir {
			if id := s.NC.FileID(e.Path); id != 0 {
				ej.Link = s.NC.URL + "/f/" + strconv.FormatInt(id, 10)
			}
			ej.SharedWith = s.NC.SharedWith(e.Path)
		}
		out = append(out, ej)
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": out})
}

func (s *Sandbox) file(w http.ResponseWriter, r *http.Request) {
	if !s.needNC(w) {
		return
	}
	p := path.Clean("/" + r.URL.Query().Get("path"))
	data, err := s.NC.File(p)
	if err != nil {
		writeError(w, http.StatusNotFound, "no such file in the sandbox Nextcloud")
		return
	}
	serveFile(w, path.Base(p), mime.TypeByExtension(path.Ext(p)), data)
}

func serveFile(w http.ResponseWriter, name, typ string, data []byte) {
	if typ == "" {
		typ = "application/octet-stream"
	}
	// Shown inline only as plain text; anything else downloads, so a file
	// an agent wrote cannot run script on the dev listener's origin.
	if strings.HasPrefix(typ, "text/") {
		typ = "text/plain; charset=utf-8"
		w.Header().Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": name}))
	} else {
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxUpload*4/3+64<<10))
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "the sandbox takes files up to 5 MB")
			return false
		}
		writeError(w, http.StatusBadRequest, "the body must be JSON: "+err.Error())
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"status": "error", "error": msg})
}
