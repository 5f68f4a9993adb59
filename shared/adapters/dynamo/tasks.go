package dynamo

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var _ switchboard.TaskStore = (*Tasks)(nil)

// Tasks is the switchboard.TaskStore on the tasks table, a view of its
// Store (same client, clock and Stats; get it from Store.Tasks).
//
// One item per task (pk task#id). Three indexes make every listing a
// query: byAssignee and byCreator (partition = the party, sort = created
// time#id) and byOpen, a sparse index whose partition attribute (openPart)
// exists only while the task is unfinished: "open" while it is open and
// the watchdog has not reported it (so that the watchdog reads exactly the
// tasks it may still have to report), "reported" once it has, "blocked"
// while it is blocked; a done task leaves the index. Unfinished tasks are
// few (each is someone's current work), so three partitions hold them,
// and the console's list of them is three queries.
//
// Requests: Create 1 conditional put; Comment and Finish 1 conditional
// update each (plus 1 read to explain a refusal); Get 1 read; List 1
// query (2 for open tasks, one per open partition of byOpen, so that a
// party's done tasks are never read for them); the watchdog 1 query plus
// 1 conditional update per task it reports.
type Tasks struct{ s *Store }

// Tasks returns the store's tasks view.
func (s *Store) Tasks() *Tasks { return &Tasks{s: s} }

// The partitions of the byOpen index: open tasks the watchdog has not
// reported, open tasks it has reported, blocked tasks.
const (
	openPartValue     = "open"
	reportedPartValue = "reported"
	blockedPartValue  = "blocked"
)

// Attribute names used in expressions.
const (
	attrStatus     = "status"
	attrOpenPart   = "openPart"
	attrWatchdogAt = "watchdogAt"
)

func taskKey(id string) (pk, sk string) { return "task" + keySep + id, itemSK }

// taskItem is one task. Times are timeKey strings; createdKey (created
// time#id) sorts the party indexes.
type taskItem struct {
	PK          string            `dynamodbav:"pk"`
	SK          string            `dynamodbav:"sk"`
	ID          string            `dynamodbav:"id"`
	Creator     string            `dynamodbav:"creator"`
	Assignee    string            `dynamodbav:"assignee"`
	CreatedKey  string            `dynamodbav:"createdKey"`
	OpenPart    string            `dynamodbav:"openPart,omitempty"`
	Title       string            `dynamodbav:"title"`
	Description string            `dynamodbav:"description,omitempty"`
	Status      string            `dynamodbav:"status"`
	Comments    []taskCommentItem `dynamodbav:"comments"`
	Result      string            `dynamodbav:"result,omitempty"`
	Blocker     string            `dynamodbav:"blocker,omitempty"`
	CreatedAt   string            `dynamodbav:"createdAt"`
	UpdatedAt   string            `dynamodbav:"updatedAt"`
	Hops        int               `dynamodbav:"hops,omitempty"`
	Run         runItem           `dynamodbav:"run"`
	ReplyTo     *replyToItem      `dynamodbav:"replyTo,omitempty"`
	FinishedBy  runItem           `dynamodbav:"finishedBy"`
	WatchdogAt  string            `dynamodbav:"watchdogAt,omitempty"`
}

type taskCommentItem struct {
	By   string `dynamodbav:"by"`
	Text string `dynamodbav:"text"`
	At   string `dynamodbav:"at"`
}

func toTaskItem(t switchboard.Task) taskItem {
	pk, sk := taskKey(t.ID)
	it := taskItem{
		PK: pk, SK: sk, ID: t.ID, Creator: t.Creator, Assignee: t.Assignee,
		CreatedKey: timeKey(t.CreatedAt) + keySep + t.ID,
		Title:      t.Title, Description: t.Description, Status: string(t.Status),
		Comments: []taskCommentItem{},
		Result:   t.Result, Blocker: t.Blocker, Hops: t.Hops,
		CreatedAt: timeKey(t.CreatedAt), UpdatedAt: timeKey(t.UpdatedAt),
		Run: toRunItem(t.Run), ReplyTo: toReplyToItem(t.ReplyTo), FinishedBy: toRunItem(t.FinishedBy),
	}
	if t.Status == switchboard.TaskOpen {
		it.OpenPart = openPartValue
	}
	for _, c := range t.Comments {
		it.Comments = append(it.Comments, taskCommentItem{By: c.By, Text: c.Text, At: timeKey(c.At)})
	}
	return it
}

func fromTaskItem(it taskItem) (switchboard.Task, error) {
	t := switchboard.Task{
		ID: it.ID, Creator: it.Creator, Assignee: it.Assignee, Title: it.Title, Description: it.Description,
		Status: switchboard.TaskStatus(it.Status), Result: it.Result, Blocker: it.Blocker, Hops: it.Hops,
		Run: it.Run.run(), ReplyTo: it.ReplyTo.replyTo(), FinishedBy: it.FinishedBy.run(),
	}
	var err error
	if t.CreatedAt, err = time.Parse(timeLayout, it.CreatedAt); err != nil {
		return t, err
	}
	if t.UpdatedAt, err = time.Parse(timeLayout, it.UpdatedAt); err != nil {
		return t, err
	}
	for _, c := range it.Comments {
		at, err := time.Parse(timeLayout, c.At)
		if err != nil {
			return t, err
		}
		t.Comments = append(t.Comments, switchboard.TaskComment{By: c.By, Text: c.Text, At: at})
	}
	return t, nil
}

func decodeTask(av map[string]ddb.AttributeValue) (switchboard.Task, error) {
	var it taskItem
	if err := ddb.UnmarshalMap(av, &it); err != nil {
		return switchboard.Task{}, err
	}
	return fromTaskItem(it)
}

// Create implements switchboard.TaskStore.
func (x *Tasks) Create(ctx context.Context, t switchboard.Task) error {
	const op = "tasks.create"
	if err := t.Validate(); err != nil {
		return err
	}
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = t.CreatedAt
	}
	av, err := ddb.MarshalMap(toTaskItem(t))
	if err != nil {
		return switchboard.Wrap(op, switchboard.EINTERNAL, "the task could not be stored", err)
	}
	return x.s.putNew(ctx, op, x.s.tasks, av, "a task with this id exists already")
}

// Get implements switchboard.TaskStore.
func (x *Tasks) Get(ctx context.Context, id string) (switchboard.Task, error) {
	const op = "tasks.get"
	return getItem(ctx, x.s, op, x.s.tasks, itemKey(taskKey(id)), decodeTask, "no task with this id; list your tasks to find its id")
}

// onTask addresses the update in to task id.
func (x *Tasks) onTask(id string, in *ddb.UpdateItemInput) *ddb.UpdateItemInput {
	in.TableName, in.Key = &x.s.tasks, itemKey(taskKey(id))
	return in
}

// updateTask runs in, a conditional update of task id, and decodes the
// updated task. When the condition refuses the update, the stored
// task tells why: ENOTFOUND when it does not exist, else ECONFLICT with
// refused's text.
func (x *Tasks) updateTask(ctx context.Context, op, id string, in *ddb.UpdateItemInput, refused func(switchboard.Task) string) (switchboard.Task, error) {
	in.ReturnValues = ddb.ReturnValueAllNew
	out, err := x.s.update(ctx, op, x.onTask(id, in))
	if conditionFailed(err) {
		t, err := x.Get(ctx, id)
		if err != nil {
			return switchboard.Task{}, err
		}
		return switchboard.Task{}, switchboard.E(op, switchboard.ECONFLICT, refused(t))
	}
	if err != nil {
		return switchboard.Task{}, err
	}
	return decoded(op, out.Attributes, decodeTask)
}

// Comment implements switchboard.TaskStore.
func (x *Tasks) Comment(ctx context.Context, id string, c switchboard.TaskComment) (switchboard.Task, error) {
	const op = "tasks.comment"
	cv, err := ddb.Marshal([]taskCommentItem{{By: c.By, Text: c.Text, At: timeKey(c.At)}})
	if err != nil {
		return switchboard.Task{}, switchboard.Wrap(op, switchboard.EINTERNAL, "the comment could not be stored", err)
	}
	return x.updateTask(ctx, op, id, &ddb.UpdateItemInput{
		UpdateExpression:    aws.String("SET #c = list_append(#c, :c), #u = :u"),
		ConditionExpression: aws.String("attribute_exists(pk) AND #s <> :done AND size(#c) < :max"),
		ExpressionAttributeNames: map[string]string{
			"#c": "comments", "#u": "updatedAt", "#s": attrStatus,
		},
		ExpressionAttributeValues: map[string]ddb.AttributeValue{
			":c": cv, ":u": strAV(timeKey(c.At)), ":done": strAV(string(switchboard.TaskDone)),
			":max": numAV(switchboard.MaxTaskComments),
		},
	}, func(t switchboard.Task) string {
		if t.Status == switchboard.TaskDone {
			return "task " + id + " is done; it takes no more comments (create a new task for more work)"
		}
		return "task " + id + " has " + strconv.Itoa(switchboard.MaxTaskComments) + " comments, the most it takes; finish it or create a new task"
	})
}

// Finish implements switchboard.TaskStore.
func (x *Tasks) Finish(ctx context.Context, id string, to switchboard.TaskStatus, text string, by switchboard.RunContext, at time.Time) (switchboard.Task, error) {
	const op = "tasks.finish"
	field, cond := "result", "#s <> :done"
	values := map[string]ddb.AttributeValue{":done": strAV(string(switchboard.TaskDone))}
	switch to {
	case switchboard.TaskDone:
	case switchboard.TaskBlocked:
		field, cond = "blocker", "#s = :open"
		values = map[string]ddb.AttributeValue{":open": strAV(string(switchboard.TaskOpen))}
	default:
		return switchboard.Task{}, switchboard.E(op, switchboard.EINVALID, "a task finishes as done or blocked")
	}
	byAV, err := ddb.Marshal(toRunItem(by))
	if err != nil {
		return switchboard.Task{}, switchboard.Wrap(op, switchboard.EINTERNAL, "the task could not be updated", err)
	}
	values[":to"], values[":t"], values[":u"], values[":by"] = strAV(string(to)), strAV(text), strAV(timeKey(at)), byAV
	// Leaving open also leaves the watchdog's partition of byOpen: a
	// blocked task moves to the blocked one, a done task leaves the index.
	update := "SET #s = :to, #f = :t, #u = :u, #b = :by REMOVE #o"
	if to == switchboard.TaskBlocked {
		update = "SET #s = :to, #f = :t, #u = :u, #b = :by, #o = :part"
		values[":part"] = strAV(blockedPartValue)
	}
	return x.updateTask(ctx, op, id, &ddb.UpdateItemInput{
		UpdateExpression:    aws.String(update),
		ConditionExpression: aws.String("attribute_exists(pk) AND " + cond),
		ExpressionAttributeNames: map[string]string{
			"#s": attrStatus, "#f": field, "#u": "updatedAt", "#b": "finishedBy", "#o": attrOpenPart,
		},
		ExpressionAttributeValues: values,
	}, func(t switchboard.Task) string {
		if t.Status == switchboard.TaskDone {
			return "task " + id + " is done already; its result stands"
		}
		return "task " + id + " is blocked already; complete it when it can go on, or comment on it"
	})
}

// List implements switchboard.TaskStore.
func (x *Tasks) List(ctx context.Context, q switchboard.TaskQuery) ([]switchboard.Task, error) {
	const op = "tasks.list"
	if err := q.Check(); err != nil {
		return nil, err
	}
	index, attr := deploy.IndexByAssignee, "assignee"
	if q.Role == switchboard.TaskCreatedBy {
		index, attr = deploy.IndexByCreator, "creator"
	}
	switch q.Status {
	case switchboard.TaskOpen:
		return x.unfinishedOf(ctx, op, attr, q, openPartValue, reportedPartValue)
	case switchboard.TaskBlocked:
		return x.unfinishedOf(ctx, op, attr, q, blockedPartValue)
	}
	in := &ddb.QueryInput{
		TableName:                 &x.s.tasks,
		IndexName:                 aws.String(index),
		KeyConditionExpression:    aws.String("#p = :p"),
		ExpressionAttributeNames:  map[string]string{"#p": attr},
		ExpressionAttributeValues: map[string]ddb.AttributeValue{":p": strAV(q.Party)},
		ScanIndexForward:          aws.Bool(false),
		// Pages of the listing's size: with the filter below, a page
		// without a limit would read the party's whole history.
		Limit: aws.Int32(int32(q.PageSize())),
	}
	if q.Status != "" {
		// Done tasks, most of a party's: a filter within its partition.
		in.FilterExpression = aws.String("#s = :s")
		in.ExpressionAttributeNames["#s"] = attrStatus
		in.ExpressionAttributeValues[":s"] = strAV(string(q.Status))
	}
	return x.collect(ctx, op, in, q.PageSize())
}

// unfinishedOf lists the party's tasks (attr: assignee or creator) of the
// byOpen partitions parts, newest first, at most q's page: the unfinished
// tasks are few, and the party's done ones are never read.
func (x *Tasks) unfinishedOf(ctx context.Context, op, attr string, q switchboard.TaskQuery, parts ...string) ([]switchboard.Task, error) {
	var out []switchboard.Task
	for _, part := range parts {
		ts, err := x.collect(ctx, op, &ddb.QueryInput{
			TableName:                 &x.s.tasks,
			IndexName:                 aws.String(deploy.IndexByOpen),
			KeyConditionExpression:    aws.String("#o = :o"),
			FilterExpression:          aws.String("#p = :p"),
			ExpressionAttributeNames:  map[string]string{"#o": attrOpenPart, "#p": attr},
			ExpressionAttributeValues: map[string]ddb.AttributeValue{":o": strAV(part), ":p": strAV(q.Party)},
			ScanIndexForward:          aws.Bool(false),
		}, q.PageSize())
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	// Newest first across the partitions, as the party indexes sort.
	slices.SortStableFunc(out, func(a, b switchboard.Task) int {
		return strings.Compare(timeKey(b.CreatedAt)+keySep+b.ID, timeKey(a.CreatedAt)+keySep+a.ID)
	})
	return out[:min(len(out), q.PageSize())], nil
}

// collect runs in page by page until limit tasks are read.
func (x *Tasks) collect(ctx context.Context, op string, in *ddb.QueryInput, limit int) ([]switchboard.Task, error) {
	in.ReturnConsumedCapacity = ddb.ReturnConsumedCapacityTotal
	var out []switchboard.Task
	for {
		page, err := x.s.c.Query(ctx, in)
		x.s.record(op, reads, queryCapacity(page), err)
		if err != nil {
			return nil, mapErr(op, *in.TableName, err)
		}
		for _, av := range page.Items {
			t, err := decodeTask(av)
			if err != nil {
				return nil, undecodable(op, err)
			}
			out = append(out, t)
			if len(out) == limit {
				return out, nil
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// OpenSince implements switchboard.TaskStore.
func (x *Tasks) OpenSince(ctx context.Context, cutoff time.Time, limit int) ([]switchboard.Task, error) {
	const op = "tasks.openSince"
	if limit <= 0 {
		limit = switchboard.MaxTaskPage
	}
	return x.collect(ctx, op, &ddb.QueryInput{
		TableName:                 &x.s.tasks,
		IndexName:                 aws.String(deploy.IndexByOpen),
		KeyConditionExpression:    aws.String("#p = :p AND #k < :k"),
		ExpressionAttributeNames:  map[string]string{"#p": attrOpenPart, "#k": "createdKey"},
		ExpressionAttributeValues: map[string]ddb.AttributeValue{":p": strAV(openPartValue), ":k": strAV(timeKey(cutoff))},
		ScanIndexForward:          aws.Bool(true),
		Limit:                     aws.Int32(int32(limit)),
	}, limit)
}

// Unfinished lists the tasks that are not done, at most limit (1 to
// MaxTaskPage; 0 = MaxTaskPage) of each of the byOpen index's partitions
// (open, open and reported by the watchdog, blocked), each part oldest
// first: three queries, never a scan.
func (x *Tasks) Unfinished(ctx context.Context, limit int) ([]switchboard.Task, error) {
	const op = "tasks.unfinished"
	if limit <= 0 || limit > switchboard.MaxTaskPage {
		limit = switchboard.MaxTaskPage
	}
	var out []switchboard.Task
	for _, part := range []string{openPartValue, reportedPartValue, blockedPartValue} {
		ts, err := x.collect(ctx, op, &ddb.QueryInput{
			TableName:                 &x.s.tasks,
			IndexName:                 aws.String(deploy.IndexByOpen),
			KeyConditionExpression:    aws.String("#p = :p"),
			ExpressionAttributeNames:  map[string]string{"#p": attrOpenPart},
			ExpressionAttributeValues: map[string]ddb.AttributeValue{":p": strAV(part)},
			ScanIndexForward:          aws.Bool(true),
			Limit:                     aws.Int32(int32(limit)),
		}, limit)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

// ClaimWatchdog implements switchboard.TaskStore: the claim moves the task
// to the reported partition of the byOpen index, so that the next run does
// not read it again.
func (x *Tasks) ClaimWatchdog(ctx context.Context, id string, at time.Time) (bool, error) {
	const op = "tasks.claimWatchdog"
	_, err := x.s.update(ctx, op, x.onTask(id, &ddb.UpdateItemInput{
		UpdateExpression:         aws.String("SET #w = :w, #o = :rep"),
		ConditionExpression:      aws.String("#s = :open AND attribute_not_exists(#w)"),
		ExpressionAttributeNames: map[string]string{"#w": attrWatchdogAt, "#o": attrOpenPart, "#s": attrStatus},
		ExpressionAttributeValues: map[string]ddb.AttributeValue{":w": strAV(timeKey(at)), ":open": strAV(string(switchboard.TaskOpen)),
			":rep": strAV(reportedPartValue)},
	}))
	if conditionFailed(err) {
		return false, nil
	}
	return err == nil, err
}

// ReleaseWatchdog implements switchboard.TaskStore: the task goes back into
// the byOpen index if it is still open and the claim is the one made at at.
func (x *Tasks) ReleaseWatchdog(ctx context.Context, id string, at time.Time) error {
	const op = "tasks.releaseWatchdog"
	_, err := x.s.update(ctx, op, x.onTask(id, &ddb.UpdateItemInput{
		UpdateExpression:          aws.String("SET #o = :p REMOVE #w"),
		ConditionExpression:       aws.String("#s = :open AND #w = :w"),
		ExpressionAttributeNames:  map[string]string{"#w": attrWatchdogAt, "#o": attrOpenPart, "#s": attrStatus},
		ExpressionAttributeValues: map[string]ddb.AttributeValue{":w": strAV(timeKey(at)), ":open": strAV(string(switchboard.TaskOpen)), ":p": strAV(openPartValue)},
	}))
	if conditionFailed(err) {
		return nil // finished meanwhile, or another claim: nothing of ours to give back
	}
	return err
}

// wakePartValue is the one partition of the byWake index: deferred wakes
// are few and short-lived (the job queues them within a minute).
const wakePartValue = "due"

func wakeKey(id string) (pk, sk string) { return "wake" + keySep + id, itemSK }

// wakeItem is one deferred wake, in the tasks table next to its task. It
// has no assignee or creator attribute, so it stays out of the party
// indexes.
type wakeItem struct {
	PK         string `dynamodbav:"pk"`
	SK         string `dynamodbav:"sk"`
	ID         string `dynamodbav:"id"`
	WakePart   string `dynamodbav:"wakePart"`
	CreatedKey string `dynamodbav:"createdKey"`
	TaskID     string `dynamodbav:"taskId"`
	AgentID    string `dynamodbav:"agentId"`
	Job        string `dynamodbav:"job"`
	Notice     bool   `dynamodbav:"notice,omitempty"`
	At         string `dynamodbav:"at"`
}

// DeferWake implements switchboard.TaskStore.
func (x *Tasks) DeferWake(ctx context.Context, w switchboard.DeferredWake) error {
	const op = "tasks.deferWake"
	if w.ID == "" || w.Job == "" || w.At.IsZero() {
		return switchboard.E(op, switchboard.EINVALID, "a deferred wake needs an id, a job and a time")
	}
	pk, sk := wakeKey(w.ID)
	av, err := ddb.MarshalMap(wakeItem{PK: pk, SK: sk, ID: w.ID, WakePart: wakePartValue,
		CreatedKey: timeKey(w.At) + keySep + w.ID, TaskID: w.TaskID, AgentID: w.AgentID, Job: w.Job, Notice: w.Notice, At: timeKey(w.At)})
	if err != nil {
		return switchboard.Wrap(op, switchboard.EINTERNAL, "the wake could not be kept", err)
	}
	return x.s.put(ctx, op, x.s.tasks, av, condition{})
}

// DeferredWakes implements switchboard.TaskStore.
func (x *Tasks) DeferredWakes(ctx context.Context, limit int) ([]switchboard.DeferredWake, error) {
	const op = "tasks.deferredWakes"
	if limit <= 0 {
		limit = switchboard.MaxTaskPage
	}
	var out []switchboard.DeferredWake
	err := queryItems(ctx, x.s, op, &ddb.QueryInput{
		TableName:                 &x.s.tasks,
		IndexName:                 aws.String(deploy.IndexByWake),
		KeyConditionExpression:    aws.String("#p = :p"),
		ExpressionAttributeNames:  map[string]string{"#p": "wakePart"},
		ExpressionAttributeValues: map[string]ddb.AttributeValue{":p": strAV(wakePartValue)},
		ScanIndexForward:          aws.Bool(true),
		Limit:                     aws.Int32(int32(limit)),
	}, func(it wakeItem) (switchboard.DeferredWake, error) {
		at, err := time.Parse(timeLayout, it.At)
		return switchboard.DeferredWake{ID: it.ID, TaskID: it.TaskID, AgentID: it.AgentID, Job: it.Job, Notice: it.Notice, At: at}, err
	}, func(w switchboard.DeferredWake) {
		if len(out) < limit {
			out = append(out, w)
		}
	})
	return out, err
}

// TakeWake implements switchboard.TaskStore: a conditional delete, so that
// exactly one caller takes it.
func (x *Tasks) TakeWake(ctx context.Context, id string) (bool, error) {
	const op = "tasks.takeWake"
	err := x.s.del(ctx, op, x.s.tasks, itemKey(wakeKey(id)), condition{expr: "attribute_exists(pk)"})
	if conditionFailed(err) {
		return false, nil
	}
	return err == nil, err
}
