package rcfake

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
)

// store saves m and updates the room, the thread and the subscriptions.
func (s *Server) store(m *message) {
	s.msgs = append(s.msgs, m)
	s.msgByID[m.id] = m
	r := s.rooms[m.rid]
	r.msgs++
	if m.tmid != "" {
		if parent := s.msgByID[m.tmid]; parent != nil {
			parent.tcount++
			if !slices.Contains(parent.replies, m.uid) {
				parent.replies = append(parent.replies, m.uid)
			}
		}
	}
	s.notify(m, r)
}

// notify is Rocket.Chat's notifyUsersOnMessage/updateUsersSubscriptions with
// the default settings Unread_Count = user_and_group_mentions_only and
// Unread_Count_DM = all_messages: in channels and groups unread counts only
// mentions and a plain message only sets alert; in DMs every
// message counts. Mentions raise userMentions (groupMentions for @all and
// @here), which stays up until subscriptions.read. A thread reply that is
// not also sent to the room only alerts the thread's participants.
func (s *Server) notify(m *message, r *room) {
	now := m.ts
	touch := func(sub *subscription) {
		sub.alert, sub.open, sub.updatedAt = true, true, now
	}
	if m.tmid != "" && !m.tshow {
		parent := s.msgByID[m.tmid]
		if parent == nil {
			return
		}
		for _, uid := range append([]string{parent.uid}, parent.replies...) {
			if sub := s.subs[r.id][uid]; sub != nil && uid != m.uid {
				touch(sub)
			}
		}
		return
	}
	mentioned := map[string]bool{}
	toAll := false
	for _, mn := range m.mentions {
		switch mn.id {
		case "all", "here":
			toAll = true
		case "", m.uid:
		default:
			mentioned[mn.id] = true
		}
	}
	for uid, sub := range s.subs[r.id] {
		if uid == m.uid {
			continue
		}
		switch {
		case mentioned[uid]:
			sub.userMentions++
			sub.unread++
		case len(mentioned) == 0 && toAll:
			sub.groupMentions++
			sub.unread++
		case r.t == "d" && !toAll:
			sub.unread++
		}
		touch(sub)
	}
}

// userMention is how the server finds @name in a text (MentionsParser).
var userMention = regexp.MustCompile(`(?:^|[\s>])@([0-9A-Za-z._-]+)`)

// parseMentions resolves @name tokens like the server: existing users, plus
// all and here. A trailing dot ("… @bob.") belongs to the sentence.
func (s *Server) parseMentions(text string) []mention {
	var out []mention
	seen := map[string]bool{}
	for _, m := range userMention.FindAllStringSubmatch(text, -1) {
		name := strings.TrimRight(m[1], ".")
		if seen[name] {
			continue
		}
		if name == "all" || name == "here" || s.byName[name] != nil {
			seen[name] = true
			out = append(out, s.mentionOf(name))
		}
	}
	return out
}

func (s *Server) mentionOf(name string) mention {
	if name == "all" || name == "here" {
		return mention{id: name, username: name}
	}
	if u := s.byName[name]; u != nil {
		return mention{id: u.id, username: u.username, name: u.name}
	}
	return mention{username: name}
}

var urlInText = regexp.MustCompile(`https?://[^\s<>"]+`)

// parseURLs lists the links of a text as the server does before OEmbed has
// fetched any preview (no meta).
func parseURLs(text string) []link {
	var out []link
	for _, u := range urlInText.FindAllString(text, -1) {
		out = append(out, link{url: strings.TrimRight(u, ".,;:!?)'")})
	}
	return out
}

// attach adds an upload to a message the way sendFileMessage does:
// an entry in files[] (an image also gets its thumbnail there), file = the
// first of files, and an attachment whose fileId names the original.
func (s *Server) attach(m *message, up *upload) {
	m.fileIDs = append(m.fileIDs, up.id)
	link := fileURL(up)
	a := map[string]any{"title": up.name, "type": "file", "title_link": link, "title_link_download": true, "fileId": up.id}
	if up.description != "" {
		a["description"] = up.description
	}
	switch {
	case strings.HasPrefix(up.typ, "image/"):
		thumb := &upload{id: s.newFileID(), name: "thumb-" + up.name, typ: up.typ, rid: up.rid, uid: up.uid,
			data: up.data[:min(len(up.data), 64)], confirmed: true, thumbOf: up.id}
		s.uploads[thumb.id] = thumb
		m.fileIDs = append(m.fileIDs, thumb.id)
		a["image_url"] = "/file-upload/" + thumb.id + "/" + encodeURI(up.name)
		a["image_type"] = thumb.typ
		a["image_size"] = len(up.data)
		a["image_dimensions"] = map[string]any{"width": 360, "height": 240}
		a["image_preview"] = "/9j/2wBDAAYEBQYFBAYGBQYHBwYIChAKCgkJChQODw=="
	case strings.HasPrefix(up.typ, "audio/"):
		a["audio_url"], a["audio_type"], a["audio_size"] = link, up.typ, len(up.data)
	case strings.HasPrefix(up.typ, "video/"):
		a["video_url"], a["video_type"], a["video_size"] = link, up.typ, len(up.data)
	default:
		a["format"] = strings.ToUpper(strings.TrimPrefix(path.Ext(up.name), "."))
		a["size"] = len(up.data)
	}
	m.attachments = append(m.attachments, a)
}

func fileURL(up *upload) string { return "/file-upload/" + up.id + "/" + encodeURI(up.name) }

// encodeURI is JavaScript's encodeURI, which Rocket.Chat applies to file
// names in URLs.
func encodeURI(s string) string {
	const keep = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789;,/?:@&=+$-_.!~*'()#"
	var b strings.Builder
	for _, c := range []byte(s) {
		if strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
		}
	}
	return b.String()
}

func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// wireUser is the u object of messages: _id, username, name.
func wireUser(u *user) map[string]any {
	if u == nil {
		return map[string]any{}
	}
	return map[string]any{"_id": u.id, "username": u.username, "name": u.name}
}

// wireMessage is IMessage as the REST API returns it.
func (s *Server) wireMessage(m *message) map[string]any {
	w := map[string]any{
		"_id":        m.id,
		"rid":        m.rid,
		"msg":        m.msg,
		"ts":         iso(m.ts),
		"u":          wireUser(s.users[m.uid]),
		"_updatedAt": iso(m.updatedAt),
	}
	if m.t != "" {
		w["t"] = m.t
		w["groupable"] = false
	} else {
		mentions := []any{}
		for _, mn := range m.mentions {
			e := map[string]any{"_id": mn.id, "username": mn.username}
			if mn.id != "all" && mn.id != "here" {
				e["name"], e["type"] = mn.name, "user"
			}
			mentions = append(mentions, e)
		}
		w["mentions"] = mentions
		w["channels"] = []any{}
		w["md"] = []any{map[string]any{"type": "PARAGRAPH", "value": []any{map[string]any{"type": "PLAIN_TEXT", "value": m.msg}}}}
	}
	if len(m.urls) > 0 {
		var urls []any
		for _, l := range m.urls {
			e := map[string]any{"url": l.url}
			meta := map[string]any{}
			if l.title != "" {
				meta["pageTitle"] = l.title
			}
			if l.description != "" {
				meta["description"] = l.description
			}
			if len(meta) > 0 {
				e["meta"] = meta
				e["headers"] = map[string]any{"contentType": "text/html; charset=utf-8"}
			}
			urls = append(urls, e)
		}
		w["urls"] = urls
	}
	if m.tmid != "" {
		w["tmid"] = m.tmid
		if m.tshow {
			w["tshow"] = true
		}
	}
	if m.tcount > 0 {
		w["tcount"] = m.tcount
		w["replies"] = slices.Clone(m.replies)
	}
	if m.bot {
		w["bot"] = map[string]any{"i": "rcfake-integration"}
	}
	if !m.editedAt.IsZero() {
		w["editedAt"] = iso(m.editedAt)
		w["editedBy"] = map[string]any{"_id": m.uid, "username": s.users[m.uid].username}
	}
	if len(m.fileIDs) > 0 {
		var files []any
		for _, id := range m.fileIDs {
			up := s.uploads[id]
			files = append(files, map[string]any{"_id": up.id, "name": up.name, "type": up.typ, "size": len(up.data),
				"format": strings.TrimPrefix(path.Ext(up.name), "."), "typeGroup": strings.Split(up.typ, "/")[0]})
		}
		w["file"] = files[0]
		w["files"] = files
		w["attachments"] = slices.Clone(m.attachments)
	}
	if len(m.reactions) > 0 {
		r := map[string]any{}
		for emoji, names := range m.reactions {
			r[emoji] = map[string]any{"usernames": slices.Clone(names)}
		}
		w["reactions"] = r
	}
	return w
}
