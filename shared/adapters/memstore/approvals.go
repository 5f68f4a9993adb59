package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var _ switchboard.ApprovalStore = (*Approvals)(nil)

// Approvals is an in-memory switchboard.ApprovalStore with the DynamoDB adapter's
// semantics: Create refuses an existing id, Transition is a compare-and-set
// on the status, approvals come back as the adapter returns them (times in
// UTC, the result envelope after a JSON round trip). The zero value is
// ready to use; it is safe for concurrent use. It is a type of its own
// (not a Store method set) because Get and Create are too generic a name
// to claim on Store.
type Approvals struct {
	mu sync.Mutex
	m  map[string]switchboard.Approval
}

// NewApprovals returns an empty Approvals.
func NewApprovals() *Approvals { return &Approvals{} }

// stored is a as the store keeps and returns it: a deep copy, normalised
// like a DynamoDB round trip.
func stored(a switchboard.Approval) switchboard.Approval {
	a.Args = bytes.Clone(a.Args)
	a.Notice = bytes.Clone(a.Notice)
	a.ReplyTo = a.ReplyTo.Clone()
	if a.ReplyTo != nil && *a.ReplyTo == (switchboard.ReplyTo{}) {
		a.ReplyTo = nil
	}
	if len(a.Notice) == 0 {
		a.Notice = nil
	}
	a.CreatedAt = a.CreatedAt.UTC()
	a.ExpiresAt = a.ExpiresAt.UTC()
	if !a.DecidedAt.IsZero() {
		a.DecidedAt = a.DecidedAt.UTC()
	}
	if !a.StartedAt.IsZero() {
		a.StartedAt = a.StartedAt.UTC()
	}
	if a.Result.Status == "" {
		a.Result = switchboard.Envelope{}
	} else if raw, err := json.Marshal(a.Result); err == nil {
		var env switchboard.Envelope
		if json.Unmarshal(raw, &env) == nil {
			a.Result = env
		}
	}
	return a
}

// Create stores a (see switchboard.ApprovalStore). EINVALID as switchboard.CheckNewApproval;
// ECONFLICT when the id exists.
func (s *Approvals) Create(_ context.Context, a switchboard.Approval) error {
	if err := switchboard.CheckNewApproval(a); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]switchboard.Approval{}
	}
	if _, ok := s.m[a.ID]; ok {
		return conflict("approvals.create")
	}
	s.m[a.ID] = stored(a)
	return nil
}

// Get returns the approval; ENOTFOUND for an unknown id.
func (s *Approvals) Get(_ context.Context, id string) (switchboard.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.m[id]
	if !ok {
		return switchboard.Approval{}, notFound("approvals.get")
	}
	return stored(a), nil
}

// Transition moves id from → to when its status is from (ECONFLICT
// otherwise), applying patch as switchboard.ApplyApprovalPatch does.
func (s *Approvals) Transition(_ context.Context, id string, from, to switchboard.ApprovalStatus, patch func(*switchboard.Approval)) (switchboard.Approval, error) {
	const op = "approvals.transition"
	if err := switchboard.CheckApprovalTransition(id, from, to); err != nil {
		return switchboard.Approval{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.m[id]
	if !ok {
		return switchboard.Approval{}, notFound(op)
	}
	if cur.Status != from {
		return switchboard.Approval{}, switchboard.E(op, switchboard.ECONFLICT, "the approval is "+string(cur.Status)+", not "+string(from))
	}
	next := stored(switchboard.ApplyApprovalPatch(stored(cur), to, patch))
	s.m[id] = next
	return stored(next), nil
}

// SetNotice records notice whatever the status; ENOTFOUND for an unknown id.
func (s *Approvals) SetNotice(_ context.Context, id string, notice json.RawMessage) (switchboard.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.m[id]
	if !ok {
		return switchboard.Approval{}, notFound("approvals.setNotice")
	}
	cur.Notice = bytes.Clone(notice)
	cur = stored(cur)
	s.m[id] = cur
	return stored(cur), nil
}

// ListOpen returns the open (pending, approved, executing) approvals ordered by expiry,
// then id (the adapter's index order).
func (s *Approvals) ListOpen(context.Context) ([]switchboard.Approval, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []switchboard.Approval{}
	for _, a := range s.m {
		if a.Status.Open() {
			out = append(out, stored(a))
		}
	}
	slices.SortFunc(out, func(a, b switchboard.Approval) int {
		return strings.Compare(timeKey(a.ExpiresAt)+"#"+a.ID, timeKey(b.ExpiresAt)+"#"+b.ID)
	})
	return out, nil
}

func notFound(op string) error {
	return switchboard.E(op, switchboard.ENOTFOUND, "no approval with this id")
}
