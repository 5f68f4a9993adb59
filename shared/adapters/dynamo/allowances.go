package dynamo

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var _ switchboard.AllowanceStore = (*Allowances)(nil)

// allowancesPK is the one partition of allowances: a human grants each, so
// they are few, and the console lists them with one query. The sort key
// is switchboard.AllowanceKey, so the gate's lookup is one GetItem.
const allowancesPK = "allowances"

// Allowances is the switchboard.AllowanceStore on the state table, a view
// of its Store (get it from Store.Allowances). Grant is 1 PutItem, Find 1
// consistent GetItem, List 1 query, Revoke 1 query and 1 conditional
// DeleteItem. Expired items are removed by TTL and never returned.
type Allowances struct{ s *Store }

// Allowances returns the store's allowances view.
func (s *Store) Allowances() *Allowances { return &Allowances{s: s} }

type allowanceItem struct {
	PK         string  `dynamodbav:"pk"`
	SK         string  `dynamodbav:"sk"`
	ID         string  `dynamodbav:"id"`
	AgentID    string  `dynamodbav:"agentId"`
	Tool       string  `dynamodbav:"tool"`
	Action     string  `dynamodbav:"action"`
	Scope      string  `dynamodbav:"scope"`
	GrantedBy  string  `dynamodbav:"grantedBy"`
	ApprovalID string  `dynamodbav:"approvalId,omitempty"`
	Run        runItem `dynamodbav:"run"`
	GrantedAt  string  `dynamodbav:"grantedAt"`
	Expires    string  `dynamodbav:"expires"`
	ExpiresAt  int64   `dynamodbav:"expiresAt"` // TTL
}

func toAllowanceItem(a switchboard.Allowance) (map[string]ddb.AttributeValue, error) {
	return ddb.MarshalMap(allowanceItem{
		PK: allowancesPK, SK: switchboard.AllowanceKey(a.AgentID, a.Tool, a.Action, a.Scope),
		ID: a.ID, AgentID: a.AgentID, Tool: a.Tool, Action: a.Action, Scope: a.Scope,
		GrantedBy: a.GrantedBy, ApprovalID: a.ApprovalID, Run: toRunItem(a.Run),
		GrantedAt: timeKey(a.GrantedAt), Expires: timeKey(a.ExpiresAt), ExpiresAt: a.ExpiresAt.Unix() + 1,
	})
}

func fromAllowanceItem(av map[string]ddb.AttributeValue) (switchboard.Allowance, error) {
	var it allowanceItem
	if err := ddb.UnmarshalMap(av, &it); err != nil {
		return switchboard.Allowance{}, err
	}
	a := switchboard.Allowance{ID: it.ID, AgentID: it.AgentID, Tool: it.Tool, Action: it.Action, Scope: it.Scope,
		GrantedBy: it.GrantedBy, ApprovalID: it.ApprovalID, Run: it.Run.run()}
	var err error
	if a.GrantedAt, err = time.Parse(timeLayout, it.GrantedAt); err != nil {
		return switchboard.Allowance{}, fmt.Errorf("allowance %s: grantedAt: %w", it.ID, err)
	}
	if a.ExpiresAt, err = time.Parse(timeLayout, it.Expires); err != nil {
		return switchboard.Allowance{}, fmt.Errorf("allowance %s: expires: %w", it.ID, err)
	}
	return a, nil
}

// Grant is one unconditional PutItem: a newer grant for the same key wins.
func (x *Allowances) Grant(ctx context.Context, a switchboard.Allowance) error {
	const op = "allowances.grant"
	if err := switchboard.CheckNewAllowance(a); err != nil {
		return err
	}
	item, err := toAllowanceItem(a)
	if err != nil {
		return switchboard.Wrap(op, switchboard.EINTERNAL, "allowance could not be encoded", err)
	}
	return x.s.put(ctx, op, x.s.state, item, condition{})
}

// Find is one strongly consistent GetItem.
func (x *Allowances) Find(ctx context.Context, agentID, tool, action, scope string, now time.Time) (switchboard.Allowance, bool, error) {
	const op = "allowances.find"
	if agentID == "" || tool == "" || action == "" || scope == "" {
		return switchboard.Allowance{}, false, nil
	}
	av, err := x.s.get(ctx, op, x.s.state, itemKey(allowancesPK, switchboard.AllowanceKey(agentID, tool, action, scope)))
	if err != nil || av == nil {
		return switchboard.Allowance{}, false, err
	}
	a, err := decoded(op, av, fromAllowanceItem)
	if err != nil || !a.Active(now) {
		return switchboard.Allowance{}, false, err
	}
	return a, true, nil
}

// List queries the partition and keeps the active ones.
func (x *Allowances) List(ctx context.Context, now time.Time) ([]switchboard.Allowance, error) {
	all, err := x.all(ctx, "allowances.list")
	if err != nil {
		return nil, err
	}
	out := []switchboard.Allowance{}
	for _, a := range all {
		if a.Active(now) {
			out = append(out, a)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ExpiresAt.Before(out[j].ExpiresAt) })
	return out, nil
}

func (x *Allowances) all(ctx context.Context, op string) ([]switchboard.Allowance, error) {
	var out []switchboard.Allowance
	err := x.s.query(ctx, op, &ddb.QueryInput{
		TableName:                 &x.s.state,
		KeyConditionExpression:    strPtr("pk = :p"),
		ExpressionAttributeValues: map[string]ddb.AttributeValue{":p": strAV(allowancesPK)},
		ConsistentRead:            aws.Bool(true),
	}, func(av map[string]ddb.AttributeValue) error {
		a, err := fromAllowanceItem(av)
		if err != nil {
			return err
		}
		out = append(out, a)
		return nil
	})
	return out, err
}

// Revoke finds the item with id and deletes it on the condition that it
// still has that id (a newer grant for the same place is left alone).
func (x *Allowances) Revoke(ctx context.Context, id string) (switchboard.Allowance, error) {
	const op = "allowances.revoke"
	all, err := x.all(ctx, op)
	if err != nil {
		return switchboard.Allowance{}, err
	}
	for _, a := range all {
		if a.ID != id {
			continue
		}
		err := x.s.del(ctx, op, x.s.state, itemKey(allowancesPK, switchboard.AllowanceKey(a.AgentID, a.Tool, a.Action, a.Scope)),
			condition{expr: "id = :id", values: map[string]ddb.AttributeValue{":id": strAV(id)}})
		if conditionFailed(err) {
			break
		}
		if err != nil {
			return switchboard.Allowance{}, err
		}
		return a, nil
	}
	return switchboard.Allowance{}, switchboard.E(op, switchboard.ENOTFOUND, "no allowance with this id; it was revoked or has expired")
}
