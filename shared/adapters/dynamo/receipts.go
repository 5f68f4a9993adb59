package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// receiptItem is one agent run in the receipts table. Its partition is the
// agent the run is charged to (Run.Payer(): the run's own agent, or the
// agent that pays for a task's runs), so that a daily budget stays one
// query; agentId is always the agent that ran.
type receiptItem struct {
	PK          string  `dynamodbav:"pk"`
	SK          string  `dynamodbav:"sk"`
	RootRunID   string  `dynamodbav:"rootRunId,omitempty"`
	RunID       string  `dynamodbav:"runId"`
	ParentRunID string  `dynamodbav:"parentRunId,omitempty"`
	RunAgentID  string  `dynamodbav:"runAgentId,omitempty"`
	TaskHops    int     `dynamodbav:"taskHops,omitempty"`
	PaidBy      string  `dynamodbav:"paidBy,omitempty"`
	AgentID     string  `dynamodbav:"agentId"`
	Provider    string  `dynamodbav:"provider,omitempty"`
	Model       string  `dynamodbav:"model,omitempty"`
	StartedAt   string  `dynamodbav:"startedAt"`
	DurationNs  int64   `dynamodbav:"durationNs"`
	TokensIn    int     `dynamodbav:"tokensIn"`
	TokensOut   int     `dynamodbav:"tokensOut"`
	CostUSD     float64 `dynamodbav:"costUsd"`
	Steps       int     `dynamodbav:"steps"`
	Outcome     string  `dynamodbav:"outcome,omitempty"`
	Reason      string  `dynamodbav:"reason,omitempty"`
	ExpiresAt   int64   `dynamodbav:"expiresAt,omitempty"`
}

func toReceiptItem(r switchboard.Receipt, retention time.Duration) receiptItem {
	payer := r.AgentID
	if r.Run.PaidBy != "" {
		payer = r.Run.PaidBy
	}
	pk, sk := receiptKey(payer, r.StartedAt, r.Run.RunID)
	return receiptItem{
		PK: pk, SK: sk,
		RootRunID:   r.Run.RootRunID,
		RunID:       r.Run.RunID,
		ParentRunID: r.Run.ParentRunID,
		RunAgentID:  r.Run.AgentID,
		TaskHops:    r.Run.TaskHops,
		PaidBy:      r.Run.PaidBy,
		AgentID:     r.AgentID,
		Provider:    r.Provider,
		Model:       r.Model,
		StartedAt:   timeKey(r.StartedAt),
		DurationNs:  int64(r.Duration),
		TokensIn:    r.TokensIn,
		TokensOut:   r.TokensOut,
		CostUSD:     r.CostUSD,
		Steps:       r.Steps,
		Outcome:     r.Outcome,
		Reason:      r.Reason,
		ExpiresAt:   expiresAt(r.StartedAt, retention),
	}
}

func fromReceiptItem(it receiptItem) (switchboard.Receipt, error) {
	started, err := time.Parse(timeLayout, it.StartedAt)
	if err != nil {
		return switchboard.Receipt{}, fmt.Errorf("receipt item %s/%s: startedAt: %w", it.PK, it.SK, err)
	}
	return switchboard.Receipt{
		Run: switchboard.RunContext{
			RunID: it.RunID, ParentRunID: it.ParentRunID,
			RootRunID: it.RootRunID, AgentID: it.RunAgentID,
			TaskHops: it.TaskHops, PaidBy: it.PaidBy,
		},
		AgentID:   it.AgentID,
		Provider:  it.Provider,
		Model:     it.Model,
		StartedAt: started,
		Duration:  time.Duration(it.DurationNs),
		TokensIn:  it.TokensIn,
		TokensOut: it.TokensOut,
		CostUSD:   it.CostUSD,
		Steps:     it.Steps,
		Outcome:   it.Outcome,
		Reason:    it.Reason,
	}, nil
}

// Put writes r once (attribute_not_exists on agent, start time and run id):
// a retried write of the same receipt yields ECONFLICT. EINVALID when r has
// no AgentID or Run.RunID.
func (s *Store) Put(ctx context.Context, r switchboard.Receipt) error {
	const op = "receipts.put"
	if r.AgentID == "" || r.Run.RunID == "" {
		return switchboard.E(op, switchboard.EINVALID, "a receipt needs an agent id and a run id")
	}
	item, err := ddb.MarshalMap(toReceiptItem(r, s.ReceiptRetention))
	if err != nil {
		return switchboard.Wrap(op, switchboard.EINTERNAL, "receipt could not be encoded", err)
	}
	return s.put(ctx, op, s.receipts, item, condition{expr: "attribute_not_exists(pk)"})
}

// ChainCost queries the byRoot index of the receipts table to the last page;
// Receipts come oldest first. Eventually consistent like ByRoot.
func (s *Store) ChainCost(ctx context.Context, rootRunID string) (switchboard.ChainCost, error) {
	const op = "receipts.chainCost"
	cost := switchboard.ChainCost{RootRunID: rootRunID}
	if rootRunID == "" {
		return cost, nil
	}
	err := queryItems(ctx, s, op, byRootQuery(s.receipts, rootRunID), fromReceiptItem, cost.Add)
	if err != nil {
		return switchboard.ChainCost{}, err
	}
	return cost, nil
}

// AgentCostSince queries agentID's partition from since on (sk >= since
// sorts every receipt started at or after since, the boundary included)
// and reads only costUsd: the runs charged to agentID, its own and those
// of the tasks it handed out, not its runs another agent pays for.
func (s *Store) AgentCostSince(ctx context.Context, agentID string, since time.Time) (float64, error) {
	const op = "receipts.agentCostSince"
	if agentID == "" {
		return 0, nil
	}
	in := &ddb.QueryInput{
		TableName:              &s.receipts,
		KeyConditionExpression: strPtr("pk = :a AND sk >= :s"),
		ExpressionAttributeValues: map[string]ddb.AttributeValue{
			":a": &ddb.AttributeValueMemberS{Value: agentID},
			":s": &ddb.AttributeValueMemberS{Value: timeKey(since)},
		},
		ProjectionExpression: strPtr("costUsd"),
	}
	var total float64
	err := s.query(ctx, op, in, func(av map[string]ddb.AttributeValue) error {
		var it struct {
			CostUSD float64 `dynamodbav:"costUsd"`
		}
		if err := ddb.UnmarshalMap(av, &it); err != nil {
			return err
		}
		total += it.CostUSD
		return nil
	})
	if err != nil {
		return 0, err
	}
	return total, nil
}

// AgentRunsSince queries agentID's partition from since on, as
// AgentCostSince does, and returns the runs charged to agentID oldest
// first with only their start, cost, outcome, reason, agent and run ids
// read (a projection; the read units are those of the whole items).
func (s *Store) AgentRunsSince(ctx context.Context, agentID string, since time.Time) ([]switchboard.Receipt, error) {
	const op = "receipts.agentRunsSince"
	if agentID == "" {
		return nil, nil
	}
	in := &ddb.QueryInput{
		TableName:              &s.receipts,
		KeyConditionExpression: strPtr("pk = :a AND sk >= :s"),
		ExpressionAttributeValues: map[string]ddb.AttributeValue{
			":a": &ddb.AttributeValueMemberS{Value: agentID},
			":s": &ddb.AttributeValueMemberS{Value: timeKey(since)},
		},
		ProjectionExpression:     strPtr("pk, sk, startedAt, costUsd, outcome, #r, agentId, runId, rootRunId"),
		ExpressionAttributeNames: map[string]string{"#r": "reason"}, // a reserved word
	}
	var out []switchboard.Receipt
	err := queryItems(ctx, s, op, in, fromReceiptItem, func(r switchboard.Receipt) { out = append(out, r) })
	if err != nil {
		return nil, err
	}
	return out, nil
}
