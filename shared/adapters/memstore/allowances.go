package memstore

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var _ switchboard.AllowanceStore = (*Allowances)(nil)

// Allowances is an in-memory switchboard.AllowanceStore with the DynamoDB
// adapter's semantics: one allowance per agent, action and scope (a newer
// grant replaces it), expired ones never returned, times in UTC. The zero
// value is ready to use; it is safe for concurrent use.
type Allowances struct {
	mu sync.Mutex
	m  map[string]switchboard.Allowance // switchboard.AllowanceKey → allowance
}

// NewAllowances returns an empty Allowances.
func NewAllowances() *Allowances { return &Allowances{} }

// Grant stores a (see switchboard.AllowanceStore).
func (s *Allowances) Grant(_ context.Context, a switchboard.Allowance) error {
	if err := switchboard.CheckNewAllowance(a); err != nil {
		return err
	}
	a.GrantedAt, a.ExpiresAt = a.GrantedAt.UTC(), a.ExpiresAt.UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]switchboard.Allowance{}
	}
	s.m[switchboard.AllowanceKey(a.AgentID, a.Tool, a.Action, a.Scope)] = a
	return nil
}

// Find returns the active allowance for the place, if any.
func (s *Allowances) Find(_ context.Context, agentID, tool, action, scope string, now time.Time) (switchboard.Allowance, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.m[switchboard.AllowanceKey(agentID, tool, action, scope)]
	if !ok || !a.Active(now) {
		return switchboard.Allowance{}, false, nil
	}
	return a, true, nil
}

// List returns the active allowances, earliest expiry first.
func (s *Allowances) List(_ context.Context, now time.Time) ([]switchboard.Allowance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []switchboard.Allowance{}
	for _, a := range s.m {
		if a.Active(now) {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].ExpiresAt.Equal(out[j].ExpiresAt) {
			return out[i].ExpiresAt.Before(out[j].ExpiresAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Revoke deletes allowance id; ENOTFOUND when there is none.
func (s *Allowances) Revoke(_ context.Context, id string) (switchboard.Allowance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, a := range s.m {
		if a.ID == id {
			delete(s.m, k)
			return a, nil
		}
	}
	return switchboard.Allowance{}, switchboard.E("allowances.revoke", switchboard.ENOTFOUND, "no allowance with this id; it was revoked or has expired")
}
