package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var _ switchboard.ApprovalStore = (*Approvals)(nil)

// approvalRetention keeps a decided approval (and a stray index item) this
// long past its expiry before TTL removes it: long enough for an operator
// to look back at what was approved and what it did.
const approvalRetention = 30 * 24 * time.Hour

// openApprovalsPK is the partition of the open-approvals index: one small
// item per pending or approved approval, sorted by expiry, so that the
// expiry job reads open approvals with one query instead of a scan (and
// without a GSI). Open approvals are few (a human decides each), so one
// partition is plenty.
const openApprovalsPK = "approvals-open"

// approvalKey: one partition per approval, like markers.
func approvalKey(id string) (pk, sk string) { return "approval" + keySep + id, itemSK }

// openApprovalKey sorts the index by expiry, then id.
func openApprovalKey(expires time.Time, id string) (pk, sk string) {
	return openApprovalsPK, timeKey(expires) + keySep + id
}

// Approvals is the switchboard.ApprovalStore on the state table, a view of its Store
// (same client, clock and Stats; get it from Store.Approvals). It is a type
// of its own so that Get and Create do not claim those names on Store.
//
// Requests per approval lifecycle: Create 2 writes (index item, then the
// approval); SetNotice 1 write; each Transition 1 consistent read and 1
// conditional UpdateItem, plus 1 delete of the index item when the approval
// closes. So approve → executed costs 6 writes and 2 reads, deny or expiry
// 5 writes and 1 read (ListOpen adds 1 query and 1 read per open approval).
type Approvals struct{ s *Store }

// Approvals returns the store's approvals view.
func (s *Store) Approvals() *Approvals { return &Approvals{s: s} }

// approvalItem is one approval. Times are timeKey strings (nanoseconds,
// UTC); Args, Result and Notice are JSON text, ReplyTo a map. ExpiresAt is the TTL
// attribute (approval expiry + approvalRetention).
type approvalItem struct {
	PK       string       `dynamodbav:"pk"`
	SK       string       `dynamodbav:"sk"`
	ID       string       `dynamodbav:"id"`
	AgentID  string       `dynamodbav:"agentId"`
	Tool     string       `dynamodbav:"tool"`
	Action   string       `dynamodbav:"action"`
	Args     string       `dynamodbav:"args"`
	ArgsHash string       `dynamodbav:"argsHash"`
	Run      runItem      `dynamodbav:"run"`
	Origin   string       `dynamodbav:"origin,omitempty"`
	Client   string       `dynamodbav:"client,omitempty"`
	Reason   string       `dynamodbav:"reason,omitempty"`
	ReplyTo  *replyToItem `dynamodbav:"replyTo,omitempty"`
	// DenyReason, AllowanceID and Target: see switchboard.Approval.
	DenyReason  string `dynamodbav:"denyReason,omitempty"`
	AllowanceID string `dynamodbav:"allowanceId,omitempty"`
	Target      string `dynamodbav:"target,omitempty"`
	// Context is how approvals stored before ReplyTo was typed kept it:
	// JSON {"replyTo":{…}}. Only read (an approval lives at most its TTL
	// plus the retention).
	Context   string   `dynamodbav:"context,omitempty"`
	CreatedAt string   `dynamodbav:"createdAt"`
	Expires   string   `dynamodbav:"expires"`
	Status    string   `dynamodbav:"status"`
	DecidedBy string   `dynamodbav:"decidedBy,omitempty"`
	DecidedAt string   `dynamodbav:"decidedAt,omitempty"`
	StartedAt string   `dynamodbav:"startedAt,omitempty"`
	Result    string   `dynamodbav:"result,omitempty"`
	ExecRun   *runItem `dynamodbav:"execRun,omitempty"`
	Notice    string   `dynamodbav:"notice,omitempty"`
	TaskToken string   `dynamodbav:"taskToken,omitempty"`
	// StagedSpan: see switchboard.Approval.
	StagedSpan string `dynamodbav:"stagedSpan,omitempty"`
	ExpiresAt  int64  `dynamodbav:"expiresAt"`
}

type runItem struct {
	RunID       string `dynamodbav:"runId,omitempty"`
	ParentRunID string `dynamodbav:"parentRunId,omitempty"`
	RootRunID   string `dynamodbav:"rootRunId,omitempty"`
	AgentID     string `dynamodbav:"agentId,omitempty"`
	TaskHops    int    `dynamodbav:"taskHops,omitempty"`
	PaidBy      string `dynamodbav:"paidBy,omitempty"`
}

// replyToItem is an approval's reply destination; empty fields are left out.
type replyToItem struct {
	TelegramChatID string `dynamodbav:"telegramChatId,omitempty"`
	RoomID         string `dynamodbav:"roomId,omitempty"`
	RoomName       string `dynamodbav:"roomName,omitempty"`
	RoomType       string `dynamodbav:"roomType,omitempty"`
	ThreadID       string `dynamodbav:"threadId,omitempty"`
}

func toReplyToItem(r *switchboard.ReplyTo) *replyToItem {
	if r == nil || *r == (switchboard.ReplyTo{}) {
		return nil
	}
	return &replyToItem{TelegramChatID: r.TelegramChatID, RoomID: r.RoomID, RoomName: r.RoomName, RoomType: r.RoomType, ThreadID: r.ThreadID}
}

func (r *replyToItem) replyTo() *switchboard.ReplyTo {
	if r == nil || *r == (replyToItem{}) {
		return nil
	}
	return &switchboard.ReplyTo{TelegramChatID: r.TelegramChatID, RoomID: r.RoomID, RoomName: r.RoomName, RoomType: r.RoomType, ThreadID: r.ThreadID}
}

// legacyReplyTo reads the reply destination of an approval stored with the
// old opaque context; nil when it names none or is not JSON.
func legacyReplyTo(raw string) *switchboard.ReplyTo {
	var c struct {
		ReplyTo *switchboard.ReplyTo `json:"replyTo"`
	}
	if json.Unmarshal([]byte(raw), &c) != nil || c.ReplyTo == nil || *c.ReplyTo == (switchboard.ReplyTo{}) {
		return nil
	}
	return c.ReplyTo
}

// openItem is one entry of the open-approvals index.
type openItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	ID        string `dynamodbav:"id"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

func toRunItem(r switchboard.RunContext) runItem {
	return runItem{RunID: r.RunID, ParentRunID: r.ParentRunID, RootRunID: r.RootRunID, AgentID: r.AgentID,
		TaskHops: r.TaskHops, PaidBy: r.PaidBy}
}

func (r runItem) run() switchboard.RunContext {
	return switchboard.RunContext{RunID: r.RunID, ParentRunID: r.ParentRunID, RootRunID: r.RootRunID, AgentID: r.AgentID,
		TaskHops: r.TaskHops, PaidBy: r.PaidBy}
}

func toApprovalItem(a switchboard.Approval) (map[string]ddb.AttributeValue, error) {
	pk, sk := approvalKey(a.ID)
	it := approvalItem{
		PK: pk, SK: sk, ID: a.ID, AgentID: a.AgentID, Tool: a.Tool, Action: a.Action,
		Args: string(a.Args), ArgsHash: a.ArgsHash, Run: toRunItem(a.Run), Origin: a.Origin, Client: a.Client,
		Reason: a.Reason, ReplyTo: toReplyToItem(a.ReplyTo),
		DenyReason: a.DenyReason, AllowanceID: a.AllowanceID, Target: a.Target,
		CreatedAt: timeKey(a.CreatedAt), Expires: timeKey(a.ExpiresAt), Status: string(a.Status),
		DecidedBy: a.DecidedBy, Notice: string(a.Notice), TaskToken: a.TaskToken, StagedSpan: a.StagedSpan,
		ExpiresAt: a.ExpiresAt.Add(approvalRetention).Unix(),
	}
	if !a.DecidedAt.IsZero() {
		it.DecidedAt = timeKey(a.DecidedAt)
	}
	if !a.StartedAt.IsZero() {
		it.StartedAt = timeKey(a.StartedAt)
	}
	if a.Result.Status != "" {
		raw, err := json.Marshal(a.Result)
		if err != nil {
			return nil, fmt.Errorf("approval %s: result: %w", a.ID, err)
		}
		it.Result = string(raw)
	}
	if a.ExecRun != (switchboard.RunContext{}) {
		r := toRunItem(a.ExecRun)
		it.ExecRun = &r
	}
	return ddb.MarshalMap(it)
}

func fromApprovalItem(av map[string]ddb.AttributeValue) (switchboard.Approval, error) {
	var it approvalItem
	if err := ddb.UnmarshalMap(av, &it); err != nil {
		return switchboard.Approval{}, err
	}
	a := switchboard.Approval{
		ID: it.ID, AgentID: it.AgentID, Tool: it.Tool, Action: it.Action,
		Args: json.RawMessage(it.Args), ArgsHash: it.ArgsHash, Run: it.Run.run(), Origin: it.Origin, Client: it.Client,
		Reason: it.Reason, Status: switchboard.ApprovalStatus(it.Status), DecidedBy: it.DecidedBy,
		TaskToken: it.TaskToken, DenyReason: it.DenyReason, AllowanceID: it.AllowanceID, Target: it.Target,
		StagedSpan: it.StagedSpan,
	}
	a.ReplyTo = it.ReplyTo.replyTo()
	if a.ReplyTo == nil && it.Context != "" {
		a.ReplyTo = legacyReplyTo(it.Context)
	}
	if it.Notice != "" {
		a.Notice = json.RawMessage(it.Notice)
	}
	var err error
	if a.CreatedAt, err = time.Parse(timeLayout, it.CreatedAt); err != nil {
		return switchboard.Approval{}, fmt.Errorf("approval %s: createdAt: %w", it.ID, err)
	}
	if a.ExpiresAt, err = time.Parse(timeLayout, it.Expires); err != nil {
		return switchboard.Approval{}, fmt.Errorf("approval %s: expires: %w", it.ID, err)
	}
	if it.DecidedAt != "" {
		if a.DecidedAt, err = time.Parse(timeLayout, it.DecidedAt); err != nil {
			return switchboard.Approval{}, fmt.Errorf("approval %s: decidedAt: %w", it.ID, err)
		}
	}
	if it.StartedAt != "" {
		if a.StartedAt, err = time.Parse(timeLayout, it.StartedAt); err != nil {
			return switchboard.Approval{}, fmt.Errorf("approval %s: startedAt: %w", it.ID, err)
		}
	}
	if it.Result != "" {
		if err := json.Unmarshal([]byte(it.Result), &a.Result); err != nil {
			return switchboard.Approval{}, fmt.Errorf("approval %s: result: %w", it.ID, err)
		}
	}
	if it.ExecRun != nil {
		a.ExecRun = it.ExecRun.run()
	}
	return a, nil
}

func undecodable(op string, err error) error {
	return switchboard.Wrap(op, switchboard.EINTERNAL,
		"a stored approval could not be read; the operator can find details in the logs", err)
}

// Create writes the index item first (unconditionally), then the approval
// with attribute_not_exists(pk): ECONFLICT when the id exists. In that
// order a crash leaves at worst an index item without an open approval,
// which ListOpen removes, never an open approval the expiry job cannot see.
// EINVALID as switchboard.CheckNewApproval.
func (x *Approvals) Create(ctx context.Context, a switchboard.Approval) error {
	const op = "approvals.create"
	if err := switchboard.CheckNewApproval(a); err != nil {
		return err
	}
	if err := x.index(ctx, a); err != nil {
		return err
	}
	item, err := toApprovalItem(a)
	if err != nil {
		return switchboard.Wrap(op, switchboard.EINTERNAL, "approval could not be encoded", err)
	}
	return x.s.putNew(ctx, op, x.s.state, item, "an approval with this id exists already")
}

func (x *Approvals) index(ctx context.Context, a switchboard.Approval) error {
	const op = "approvals.index"
	pk, sk := openApprovalKey(a.ExpiresAt, a.ID)
	item, err := ddb.MarshalMap(openItem{PK: pk, SK: sk, ID: a.ID,
		ExpiresAt: a.ExpiresAt.Add(approvalRetention).Unix()})
	if err != nil {
		return switchboard.Wrap(op, switchboard.EINTERNAL, "approval index could not be encoded", err)
	}
	return x.s.put(ctx, op, x.s.state, item, condition{})
}

// unindex deletes the index item of a closed approval. A failure is not
// reported: the approval's own write is what counts, and ListOpen removes
// the stray item when it meets it.
func (x *Approvals) unindex(ctx context.Context, a switchboard.Approval) {
	_ = x.s.del(ctx, "approvals.unindex", x.s.state, itemKey(openApprovalKey(a.ExpiresAt, a.ID)), condition{})
}

// Get is one strongly consistent GetItem; ENOTFOUND for an unknown id.
func (x *Approvals) Get(ctx context.Context, id string) (switchboard.Approval, error) {
	const op = "approvals.get"
	if !switchboard.ValidApprovalID(id) {
		return switchboard.Approval{}, switchboard.E(op, switchboard.ENOTFOUND, "no approval with this id")
	}
	return getItem(ctx, x.s, op, x.s.state, itemKey(approvalKey(id)), fromApprovalItem, "no approval with this id")
}

// Transition reads the approval (consistently), applies patch and writes
// only the attributes that changed with ONE UpdateItem conditioned on
//
//	#st = :from
//
// (status is a reserved word), returning ALL_NEW. Writing only the changes
// keeps a concurrent SetNotice intact. A status that is not from already at
// the read is ECONFLICT without a write; a refused condition (another caller
// won meanwhile) is ECONFLICT too. Closing an approval then deletes its
// index item.
func (x *Approvals) Transition(ctx context.Context, id string, from, to switchboard.ApprovalStatus, patch func(*switchboard.Approval)) (switchboard.Approval, error) {
	const op = "approvals.transition"
	if err := switchboard.CheckApprovalTransition(id, from, to); err != nil {
		return switchboard.Approval{}, err
	}
	cur, err := x.Get(ctx, id)
	if err != nil {
		return switchboard.Approval{}, err
	}
	if cur.Status != from {
		return switchboard.Approval{}, switchboard.E(op, switchboard.ECONFLICT, "the approval is "+string(cur.Status)+", not "+string(from))
	}
	next := switchboard.ApplyApprovalPatch(cur, to, patch)
	oldItem, err := toApprovalItem(cur)
	if err != nil {
		return switchboard.Approval{}, switchboard.Wrap(op, switchboard.EINTERNAL, "approval could not be encoded", err)
	}
	newItem, err := toApprovalItem(next)
	if err != nil {
		return switchboard.Approval{}, switchboard.Wrap(op, switchboard.EINTERNAL, "approval could not be encoded", err)
	}
	in := changes(oldItem, newItem)
	in.ConditionExpression = strPtr("#st = :from")
	in.ExpressionAttributeNames["#st"] = "status"
	in.ExpressionAttributeValues[":from"] = strAV(string(from))
	written, err := x.updateApproval(ctx, op, id, in, switchboard.ECONFLICT, "the approval was decided by someone else meanwhile")
	if err != nil {
		return switchboard.Approval{}, err
	}
	if !to.Open() {
		x.unindex(ctx, written)
	}
	return written, nil
}

// changes builds the SET and REMOVE clauses that turn old into new (names
// and values as placeholders, so reserved words need no care).
func changes(old, new map[string]ddb.AttributeValue) *ddb.UpdateItemInput {
	in := &ddb.UpdateItemInput{
		ExpressionAttributeNames:  map[string]string{},
		ExpressionAttributeValues: map[string]ddb.AttributeValue{},
	}
	var set, remove []string
	keys := make([]string, 0, len(new)+len(old))
	for k := range new {
		keys = append(keys, k)
	}
	for k := range old {
		if _, ok := new[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for i, k := range keys {
		if k == attrPK || k == attrSK {
			continue
		}
		nv, inNew := new[k]
		ov, inOld := old[k]
		if inNew && inOld && reflect.DeepEqual(nv, ov) {
			continue
		}
		name := "#a" + strconv.Itoa(i)
		in.ExpressionAttributeNames[name] = k
		if !inNew {
			remove = append(remove, name)
			continue
		}
		val := ":v" + strconv.Itoa(i)
		in.ExpressionAttributeValues[val] = nv
		set = append(set, name+" = "+val)
	}
	var expr []string
	if len(set) > 0 {
		expr = append(expr, "SET "+strings.Join(set, ", "))
	}
	if len(remove) > 0 {
		expr = append(expr, "REMOVE "+strings.Join(remove, ", "))
	}
	in.UpdateExpression = strPtr(strings.Join(expr, " "))
	return in
}

// SetNotice is one UpdateItem (SET notice, or REMOVE it for an empty
// notice) conditioned on attribute_exists(pk), returning ALL_NEW: it never
// touches the status, so it cannot undo a decision. ENOTFOUND for an
// unknown id.
func (x *Approvals) SetNotice(ctx context.Context, id string, notice json.RawMessage) (switchboard.Approval, error) {
	const op = "approvals.setNotice"
	if !switchboard.ValidApprovalID(id) {
		return switchboard.Approval{}, switchboard.E(op, switchboard.ENOTFOUND, "no approval with this id")
	}
	in := &ddb.UpdateItemInput{
		ConditionExpression:      strPtr("attribute_exists(pk)"),
		ExpressionAttributeNames: map[string]string{"#n": "notice"},
	}
	if len(notice) == 0 {
		in.UpdateExpression = strPtr("REMOVE #n")
	} else {
		in.UpdateExpression = strPtr("SET #n = :n")
		in.ExpressionAttributeValues = map[string]ddb.AttributeValue{":n": strAV(string(notice))}
	}
	return x.updateApproval(ctx, op, id, in, switchboard.ENOTFOUND, "no approval with this id")
}

// updateApproval runs in, a conditional update of approval id, and decodes
// the updated approval. A refused condition is an error with code and
// refused as its message.
func (x *Approvals) updateApproval(ctx context.Context, op, id string, in *ddb.UpdateItemInput, code, refused string) (switchboard.Approval, error) {
	in.TableName, in.Key, in.ReturnValues = &x.s.state, itemKey(approvalKey(id)), ddb.ReturnValueAllNew
	out, err := x.s.update(ctx, op, in)
	if conditionFailed(err) {
		return switchboard.Approval{}, switchboard.Wrap(op, code, refused, err)
	}
	if err != nil {
		return switchboard.Approval{}, err
	}
	return decoded(op, out.Attributes, fromApprovalItem)
}

// ListOpen queries the index partition and reads each approval
// (consistently). An index item whose approval is gone, closed or has
// another expiry is stray (a crash between two writes) and is deleted.
func (x *Approvals) ListOpen(ctx context.Context) ([]switchboard.Approval, error) {
	const op = "approvals.listOpen"
	var index []openItem
	err := x.s.query(ctx, op, &ddb.QueryInput{
		TableName:                 &x.s.state,
		KeyConditionExpression:    strPtr("pk = :p"),
		ExpressionAttributeValues: map[string]ddb.AttributeValue{":p": strAV(openApprovalsPK)},
	}, func(av map[string]ddb.AttributeValue) error {
		var it openItem
		if err := ddb.UnmarshalMap(av, &it); err != nil {
			return err
		}
		index = append(index, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := []switchboard.Approval{}
	for _, it := range index {
		a, err := x.Get(ctx, it.ID)
		switch {
		case switchboard.ErrorCode(err) == switchboard.ENOTFOUND:
		case err != nil:
			return nil, err
		case a.Status.Open() && it.SK == timeKey(a.ExpiresAt)+keySep+a.ID:
			out = append(out, a)
			continue
		}
		_ = x.s.del(ctx, "approvals.unindex", x.s.state, itemKey(it.PK, it.SK), condition{})
	}
	return out, nil
}
