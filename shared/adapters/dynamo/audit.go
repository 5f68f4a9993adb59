package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// auditItem is one tool call in the audit table. rootRunId is omitted when
// empty, which keeps the entry out of the byRoot index (an index key may not
// be an empty string).
type auditItem struct {
	PK          string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	RootRunID   string `dynamodbav:"rootRunId,omitempty"`
	RunID       string `dynamodbav:"runId,omitempty"`
	ParentRunID string `dynamodbav:"parentRunId,omitempty"`
	RunAgentID  string `dynamodbav:"runAgentId,omitempty"`
	ID          string `dynamodbav:"id"`
	At          string `dynamodbav:"at"`
	AgentID     string `dynamodbav:"agentId"`
	Tool        string `dynamodbav:"tool,omitempty"`
	Action      string `dynamodbav:"action,omitempty"`
	Args        string `dynamodbav:"args,omitempty"`
	Decision    string `dynamodbav:"decision,omitempty"`
	Outcome     string `dynamodbav:"outcome,omitempty"`
	Error       string `dynamodbav:"error,omitempty"`
	DurationNs  int64  `dynamodbav:"durationNs"`
	ExpiresAt   int64  `dynamodbav:"expiresAt,omitempty"`
	ApprovalID  string `dynamodbav:"approvalId,omitempty"`
	DecidedBy   string `dynamodbav:"decidedBy,omitempty"`
	Origin      string `dynamodbav:"origin,omitempty"`
	Client      string `dynamodbav:"client,omitempty"`
}

func toAuditItem(e switchboard.AuditEntry, retention time.Duration) auditItem {
	pk, sk := auditKey(e.AgentID, e.At, e.ID)
	return auditItem{
		PK: pk, SK: sk,
		RootRunID:   e.Run.RootRunID,
		RunID:       e.Run.RunID,
		ParentRunID: e.Run.ParentRunID,
		RunAgentID:  e.Run.AgentID,
		ID:          e.ID,
		At:          timeKey(e.At),
		AgentID:     e.AgentID,
		Tool:        e.Tool,
		Action:      e.Action,
		Args:        e.Args,
		Decision:    string(e.Decision),
		Outcome:     e.Outcome,
		Error:       e.Error,
		DurationNs:  int64(e.Duration),
		ExpiresAt:   expiresAt(e.At, retention),
		ApprovalID:  e.ApprovalID,
		DecidedBy:   e.DecidedBy,
		Origin:      e.Origin,
		Client:      e.Client,
	}
}

func fromAuditItem(it auditItem) (switchboard.AuditEntry, error) {
	at, err := time.Parse(timeLayout, it.At)
	if err != nil {
		return switchboard.AuditEntry{}, fmt.Errorf("audit item %s/%s: at: %w", it.PK, it.SK, err)
	}
	return switchboard.AuditEntry{
		ID: it.ID,
		At: at,
		Run: switchboard.RunContext{
			RunID: it.RunID, ParentRunID: it.ParentRunID,
			RootRunID: it.RootRunID, AgentID: it.RunAgentID,
		},
		AgentID:  it.AgentID,
		Tool:     it.Tool,
		Action:   it.Action,
		Args:     it.Args,
		Decision: switchboard.Decision(it.Decision),
		Outcome:  it.Outcome,
		Error:    it.Error,
		Duration: time.Duration(it.DurationNs),

		ApprovalID: it.ApprovalID,
		DecidedBy:  it.DecidedBy,
		Origin:     it.Origin,
		Client:     it.Client,
	}, nil
}

// Append writes e once: the key is agent, time and id, so a retried write of
// the same entry meets attribute_not_exists(pk) and yields ECONFLICT.
// EINVALID when e has no ID or AgentID (they are key parts).
func (s *Store) Append(ctx context.Context, e switchboard.AuditEntry) error {
	const op = "audit.append"
	if e.ID == "" || e.AgentID == "" {
		return switchboard.E(op, switchboard.EINVALID, "an audit entry needs an id and an agent id")
	}
	item, err := ddb.MarshalMap(toAuditItem(e, s.AuditRetention))
	if err != nil {
		return switchboard.Wrap(op, switchboard.EINTERNAL, "audit entry could not be encoded", err)
	}
	return s.put(ctx, op, s.audit, item, condition{expr: "attribute_not_exists(pk)"})
}

// ByRoot queries the byRoot index (sort key time#id, so oldest first) to the
// last page. The index is eventually consistent: in AWS an entry appended
// a moment ago may be missing for up to about a second.
func (s *Store) ByRoot(ctx context.Context, rootRunID string) ([]switchboard.AuditEntry, error) {
	const op = "audit.byRoot"
	entries := []switchboard.AuditEntry{}
	if rootRunID == "" {
		return entries, nil // entries without a chain are not in the index
	}
	err := queryItems(ctx, s, op, byRootQuery(s.audit, rootRunID), fromAuditItem,
		func(e switchboard.AuditEntry) { entries = append(entries, e) })
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// byRootQuery asks the byRoot index of table for one chain, oldest first.
func byRootQuery(table, rootRunID string) *ddb.QueryInput {
	return &ddb.QueryInput{
		TableName:              &table,
		IndexName:              strPtr(deploy.IndexByRoot),
		KeyConditionExpression: strPtr("rootRunId = :r"),
		ExpressionAttributeValues: map[string]ddb.AttributeValue{
			":r": &ddb.AttributeValueMemberS{Value: rootRunID},
		},
		ScanIndexForward: boolPtr(true),
	}
}

func strPtr(s string) *string { return &s }
func boolPtr(b bool) *bool    { return &b }
