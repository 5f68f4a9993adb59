package memstore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var _ switchboard.TaskStore = (*Tasks)(nil)

// Tasks is an in-memory switchboard.TaskStore with the DynamoDB adapter's
// semantics: conditional transitions, listings newest first, the
// watchdog's claim taking a task out of its listing, deferred wakes taken
// once. The zero value is ready to use; it is safe for concurrent use.
type Tasks struct {
	mu       sync.Mutex
	tasks    map[string]*taskRow
	deferred map[string]switchboard.DeferredWake
}

type taskRow struct {
	t          switchboard.Task
	watchdogAt time.Time // zero while unclaimed
}

// clone is t as the store returns it: a deep copy, times in UTC.
func clone(t switchboard.Task) switchboard.Task {
	t.Comments = slices.Clone(t.Comments)
	for i := range t.Comments {
		t.Comments[i].At = t.Comments[i].At.UTC()
	}
	t.ReplyTo = t.ReplyTo.Clone()
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	return t
}

// Create implements switchboard.TaskStore.
func (x *Tasks) Create(_ context.Context, t switchboard.Task) error {
	if err := t.Validate(); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.tasks == nil {
		x.tasks = map[string]*taskRow{}
	}
	if _, ok := x.tasks[t.ID]; ok {
		return switchboard.E("tasks.create", switchboard.ECONFLICT, "a task with this id exists already")
	}
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = t.CreatedAt
	}
	x.tasks[t.ID] = &taskRow{t: clone(t)}
	return nil
}

func (x *Tasks) row(op, id string) (*taskRow, error) {
	r, ok := x.tasks[id]
	if !ok {
		return nil, switchboard.E(op, switchboard.ENOTFOUND, "no task with this id; list your tasks to find its id")
	}
	return r, nil
}

// Get implements switchboard.TaskStore.
func (x *Tasks) Get(_ context.Context, id string) (switchboard.Task, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r, err := x.row("tasks.get", id)
	if err != nil {
		return switchboard.Task{}, err
	}
	return clone(r.t), nil
}

// update changes task id with change under the lock and returns the
// changed task; an error from change leaves the task as it was.
func (x *Tasks) update(op, id string, change func(t *switchboard.Task) error) (switchboard.Task, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r, err := x.row(op, id)
	if err != nil {
		return switchboard.Task{}, err
	}
	if err := change(&r.t); err != nil {
		return switchboard.Task{}, err
	}
	return clone(r.t), nil
}

// Comment implements switchboard.TaskStore.
func (x *Tasks) Comment(_ context.Context, id string, c switchboard.TaskComment) (switchboard.Task, error) {
	const op = "tasks.comment"
	return x.update(op, id, func(t *switchboard.Task) error {
		switch {
		case t.Status == switchboard.TaskDone:
			return switchboard.E(op, switchboard.ECONFLICT, "task "+id+" is done; it takes no more comments (create a new task for more work)")
		case len(t.Comments) >= switchboard.MaxTaskComments:
			return switchboard.E(op, switchboard.ECONFLICT, "task "+id+" holds the most comments it takes; finish it or create a new task")
		}
		t.Comments = append(t.Comments, c)
		t.UpdatedAt = c.At
		return nil
	})
}

// Finish implements switchboard.TaskStore.
func (x *Tasks) Finish(_ context.Context, id string, to switchboard.TaskStatus, text string, by switchboard.RunContext, at time.Time) (switchboard.Task, error) {
	const op = "tasks.finish"
	if to != switchboard.TaskDone && to != switchboard.TaskBlocked {
		return switchboard.Task{}, switchboard.E(op, switchboard.EINVALID, "a task finishes as done or blocked")
	}
	return x.update(op, id, func(t *switchboard.Task) error {
		switch {
		case t.Status == switchboard.TaskDone:
			return switchboard.E(op, switchboard.ECONFLICT, "task "+id+" is done already; its result stands")
		case to == switchboard.TaskBlocked && t.Status != switchboard.TaskOpen:
			return switchboard.E(op, switchboard.ECONFLICT, "task "+id+" is blocked already; complete it when it can go on, or comment on it")
		}
		if to == switchboard.TaskDone {
			t.Result = text
		} else {
			t.Blocker = text
		}
		t.Status, t.UpdatedAt, t.FinishedBy = to, at, by
		return nil
	})
}

// List implements switchboard.TaskStore.
func (x *Tasks) List(_ context.Context, q switchboard.TaskQuery) ([]switchboard.Task, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []switchboard.Task
	for _, r := range x.tasks {
		party := r.t.Assignee
		if q.Role == switchboard.TaskCreatedBy {
			party = r.t.Creator
		}
		if party == q.Party && (q.Status == "" || r.t.Status == q.Status) {
			out = append(out, clone(r.t))
		}
	}
	slices.SortFunc(out, func(a, b switchboard.Task) int { return -compareCreated(a, b) })
	if len(out) > q.PageSize() {
		out = out[:q.PageSize()]
	}
	return out, nil
}

// compareCreated orders tasks as the indexes do: by creation, then id.
func compareCreated(a, b switchboard.Task) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// OpenSince implements switchboard.TaskStore.
func (x *Tasks) OpenSince(_ context.Context, cutoff time.Time, limit int) ([]switchboard.Task, error) {
	if limit <= 0 {
		limit = switchboard.MaxTaskPage
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []switchboard.Task
	for _, r := range x.tasks {
		if r.t.Status == switchboard.TaskOpen && r.watchdogAt.IsZero() && r.t.CreatedAt.Before(cutoff) {
			out = append(out, clone(r.t))
		}
	}
	slices.SortFunc(out, compareCreated)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ClaimWatchdog implements switchboard.TaskStore.
func (x *Tasks) ClaimWatchdog(_ context.Context, id string, at time.Time) (bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r, ok := x.tasks[id]
	if !ok || r.t.Status != switchboard.TaskOpen || !r.watchdogAt.IsZero() {
		return false, nil
	}
	r.watchdogAt = at
	return true, nil
}

// ReleaseWatchdog implements switchboard.TaskStore.
func (x *Tasks) ReleaseWatchdog(_ context.Context, id string, at time.Time) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r, ok := x.tasks[id]; ok && r.t.Status == switchboard.TaskOpen && r.watchdogAt.Equal(at) {
		r.watchdogAt = time.Time{}
	}
	return nil
}

// DeferWake implements switchboard.TaskStore.
func (x *Tasks) DeferWake(_ context.Context, w switchboard.DeferredWake) error {
	if w.ID == "" || w.Job == "" || w.At.IsZero() {
		return switchboard.E("tasks.deferWake", switchboard.EINVALID, "a deferred wake needs an id, a job and a time")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.deferred == nil {
		x.deferred = map[string]switchboard.DeferredWake{}
	}
	w.At = w.At.UTC()
	x.deferred[w.ID] = w
	return nil
}

// DeferredWakes implements switchboard.TaskStore.
func (x *Tasks) DeferredWakes(_ context.Context, limit int) ([]switchboard.DeferredWake, error) {
	if limit <= 0 {
		limit = switchboard.MaxTaskPage
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]switchboard.DeferredWake, 0, len(x.deferred))
	for _, w := range x.deferred {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b switchboard.DeferredWake) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// TakeWake implements switchboard.TaskStore.
func (x *Tasks) TakeWake(_ context.Context, id string) (bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.deferred[id]; !ok {
		return false, nil
	}
	delete(x.deferred, id)
	return true, nil
}
