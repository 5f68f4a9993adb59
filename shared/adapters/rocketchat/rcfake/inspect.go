package rcfake

import (
	"math/rand/v2"
	"sort"
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
