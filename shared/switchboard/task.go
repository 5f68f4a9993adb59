package switchboard

import (
	"context"
	"time"
	"unicode/utf8"
)

// TaskStatus is where a task stands.
type TaskStatus string

const (
	TaskOpen    TaskStatus = "open"    // assigned, being worked on
	TaskBlocked TaskStatus = "blocked" // the assignee cannot go on; Blocker says why
	TaskDone    TaskStatus = "done"    // finished; Result says with what
)

// Valid reports whether s is open, blocked or done.
func (s TaskStatus) Valid() bool { return s == TaskOpen || s == TaskBlocked || s == TaskDone }

// HumanParty stands for the human in a task's creator (a task the operator
// created through the tool API): agent ids are slugs and never start with
// "@", so it cannot name an agent.
const HumanParty = "@human"

// Limits of a task's texts (in characters): a task is a work order, not a
// document; documents go into the workspace and the task names them.
const (
	MaxTaskTitle    = 200
	MaxTaskText     = 20000 // description, comment, result, blocker reason
	MaxTaskComments = 100   // comments per task; the item must stay well under 400 KB
)

// TaskComment is one comment on a task.
type TaskComment struct {
	By   string    `json:"by"`
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// Task is one piece of work an agent (or the human) gave to an agent.
type Task struct {
	ID          string        `json:"id"`
	Creator     string        `json:"creator"` // an agent id, or HumanParty
	Assignee    string        `json:"assignee"`
	Title       string        `json:"title"`
	Description string        `json:"description"`
	Status      TaskStatus    `json:"status"`
	Comments    []TaskComment `json:"comments,omitempty"`
	Result      string        `json:"result,omitempty"`  // with status done
	Blocker     string        `json:"blocker,omitempty"` // with status blocked: the reason
	CreatedAt   time.Time     `json:"createdAt"`
	UpdatedAt   time.Time     `json:"updatedAt"`
	// Hops is how many task hand-overs deep the task is in its chain
	// (Run.RootRunID): 1 for a task a run that no task woke created, one
	// more than the creating run's TaskHops otherwise. The assignee's run
	// takes it as its TaskHops.
	Hops int `json:"hops,omitempty"`
	// Run is the creating run's context: the run a completion wakes the
	// creator as a follow-up of is the finishing one, but the chain and
	// the place to answer (ReplyTo) are the creator's.
	Run     RunContext `json:"run"`
	ReplyTo *ReplyTo   `json:"replyTo,omitempty"`
	// FinishedBy is the run that completed or blocked the task.
	FinishedBy RunContext `json:"finishedBy,omitempty"`
}

// Validate checks a new task as a store accepts it: EINVALID naming the
// first field that is missing or wrong.
func (t Task) Validate() error {
	const op = "tasks.validate"
	bad := func(msg string) error { return E(op, EINVALID, msg) }
	switch {
	case t.ID == "" || len(t.ID) > maxMessageField:
		return bad("a task needs an id of at most 512 bytes")
	case t.Creator == "" || t.Assignee == "" || len(t.Creator) > maxMessageField || len(t.Assignee) > maxMessageField:
		return bad("a task needs a creator and an assignee")
	case t.Title == "" || utf8.RuneCountInString(t.Title) > MaxTaskTitle:
		return bad("a task needs a title of at most 200 characters")
	case utf8.RuneCountInString(t.Description) > MaxTaskText:
		return bad("the description is longer than 20000 characters")
	case t.Status != TaskOpen:
		return bad("a new task is open")
	case t.CreatedAt.IsZero():
		return bad("a task needs createdAt")
	}
	return nil
}

// TaskRole selects whose tasks a listing shows.
type TaskRole string

const (
	TaskAssignedTo TaskRole = "assigned" // tasks the party must do
	TaskCreatedBy  TaskRole = "created"  // tasks the party gave away
)

// TaskQuery narrows a listing of one party's tasks; newest first.
type TaskQuery struct {
	Party  string
	Role   TaskRole
	Status TaskStatus // "" = every status
	Limit  int        // 1..MaxTaskPage; 0 = DefaultTaskPage
}

// Paging limits of task listings.
const (
	DefaultTaskPage = 20
	MaxTaskPage     = 100
)

// TaskStore keeps tasks. Every change is a conditional write, so that two
// racing callers get one outcome.
type TaskStore interface {
	// Create stores a new task. EINVALID when t fails Validate; ECONFLICT
	// when a task with t.ID exists.
	Create(ctx context.Context, t Task) error
	// Get returns the task. ENOTFOUND when there is none.
	Get(ctx context.Context, id string) (Task, error)
	// Comment appends c to an open or blocked task and returns it.
	// ENOTFOUND for no such task; ECONFLICT when it is done or holds
	// MaxTaskComments comments already.
	Comment(ctx context.Context, id string, c TaskComment) (Task, error)
	// Finish moves the task to done (from open or blocked) or to blocked
	// (from open only), with text as its result or blocker, by run, and
	// returns it. Exactly one of racing callers wins; the others get
	// ECONFLICT (as does finishing a done task). ENOTFOUND for no such task.
	Finish(ctx context.Context, id string, to TaskStatus, text string, by RunContext, at time.Time) (Task, error)
	// List lists one party's tasks by role, newest first: an index read.
	// EINVALID for a bad query.
	List(ctx context.Context, q TaskQuery) ([]Task, error)
	// OpenSince lists open tasks created before cutoff that the watchdog
	// has not reported yet, oldest first, at most limit: an index read.
	OpenSince(ctx context.Context, cutoff time.Time, limit int) ([]Task, error)
	// ClaimWatchdog marks an open task as reported by the watchdog and
	// reports true the first time; false when it was reported already or
	// is no longer open. ReleaseWatchdog undoes the claim made at the
	// same time, when the notice could not be delivered, so that the
	// next run of the job tries again.
	ClaimWatchdog(ctx context.Context, id string, at time.Time) (bool, error)
	ReleaseWatchdog(ctx context.Context, id string, at time.Time) error

	// DeferWake keeps a wake that could not be queued when it arose, for
	// the job that queues deferred wakes. Writing the same wake again
	// overwrites it.
	DeferWake(ctx context.Context, w DeferredWake) error
	// DeferredWakes lists kept wakes, oldest first, at most limit: an
	// index read.
	DeferredWakes(ctx context.Context, limit int) ([]DeferredWake, error)
	// TakeWake removes a kept wake and reports true for the one caller
	// that removed it (so that overlapping jobs queue it once); false
	// when it is gone already.
	TakeWake(ctx context.Context, id string) (bool, error)
}

// DeferredWake is a wake that could not be queued when it arose (the
// function that made the call cannot start the agent-worker itself, or
// starting it failed), or with Notice a notice for the human that could
// not be delivered. A scheduled job queues or delivers it later.
type DeferredWake struct {
	ID      string    `json:"id"`
	TaskID  string    `json:"taskId"`
	AgentID string    `json:"agentId"`
	Job     string    `json:"job"` // the wake job (or the notice) as JSON, opaque to the store
	Notice  bool      `json:"notice,omitempty"`
	At      time.Time `json:"at"`
}

// Check is EINVALID for a bad listing query.
func (q TaskQuery) Check() error {
	const op = "tasks.list"
	switch {
	case q.Party == "":
		return E(op, EINVALID, "a task listing needs a party")
	case q.Role != TaskAssignedTo && q.Role != TaskCreatedBy:
		return E(op, EINVALID, "role must be assigned or created")
	case q.Status != "" && !q.Status.Valid():
		return E(op, EINVALID, "status must be open, blocked or done")
	case q.Limit < 0 || q.Limit > MaxTaskPage:
		return E(op, EINVALID, "limit must be 1 to 100 (0 = 20)")
	}
	return nil
}

// PageSize is Limit with the default applied.
func (q TaskQuery) PageSize() int {
	if q.Limit == 0 {
		return DefaultTaskPage
	}
	return q.Limit
}
