package rcfake

import (
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// Room is a room as a sandbox UI lists it.
type Room struct {
	ID, Type, Name string // Type: c channel, p private group, d direct message
	// Members are usernames, in join order.
	Members []string
}

// RoomsOf returns the rooms username is a member of (channels, groups and
// DMs, also those others opened later), sorted by type and name.
func (s *Server) RoomsOf(username string) []Room {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.byName[username]
	if u == nil {
		return nil
	}
	var out []Room
	for _, r := range s.rooms {
		if !r.member(u.id) {
			continue
		}
		room := Room{ID: r.id, Type: r.t, Name: r.name}
		for _, id := range r.members {
			if m := s.users[id]; m != nil {
				room.Members = append(room.Members, m.username)
			}
		}
		out = append(out, room)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].Name+out[i].ID < out[j].Name+out[j].ID
	})
	return out
}

// SetSeed reseeds the ids of new messages, rooms, users and files. Tests
// keep the fixed default so that ids repeat from run to run; a server
// whose data outlives it (the dev sandbox, whose wake claims persist in
// DynamoDB by message id) needs ids that do not.
func (s *Server) SetSeed(seed1, seed2 uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rng = rand.New(rand.NewPCG(seed1, seed2))
}

// RateLimitHit is one call the rate limiter refused (429).
type RateLimitHit struct {
	At     time.Time
	Route  string
	UserID string // the X-User-Id of the call, "" without one
}

// RateLimited returns the calls the rate limiter refused since since, oldest
// first: a sandbox page shows them, since the client's retries and fallbacks
// otherwise hide them from the person.
func (s *Server) RateLimited(since time.Time) []RateLimitHit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []RateLimitHit
	for _, h := range s.limited {
		if !h.At.Before(since) {
			out = append(out, h)
		}
	}
	return out
}

// UsernameOf returns the username of the user with id, "" when unknown.
func (s *Server) UsernameOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.users[id]; u != nil {
		return u.username
	}
	return ""
}

// SetWebApp makes the web client's room links (/channel/<name>,
// /group/<name>, /direct/<rid>, with ?msg=<id> for a thread), which
// Switchboard puts into messages, redirect to url with the room in the
// fragment (#room=<name or rid>&msg=<id>): the fake has no web client of
// its own, a sandbox page stands in for it. Without it they answer 404.
func (s *Server) SetWebApp(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webApp = url
}

// webRoomLink answers a web client room link when SetWebApp named a page.
func (x *exchange) webRoomLink() bool {
	if x.s.webApp == "" || x.r.Method != http.MethodGet {
		return false
	}
	for _, prefix := range []string{"/channel/", "/group/", "/direct/"} {
		name, ok := strings.CutPrefix(x.r.URL.Path, prefix)
		if !ok || name == "" || strings.Contains(name, "/") {
			continue
		}
		frag := url.Values{"room": {name}}
		if msg := x.r.URL.Query().Get("msg"); msg != "" {
			frag.Set("msg", msg)
		}
		http.Redirect(x.w, x.r, x.s.webApp+"#"+frag.Encode(), http.StatusFound)
		return true
	}
	return false
}
