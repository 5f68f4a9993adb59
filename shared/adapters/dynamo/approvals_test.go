package dynamo_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/storetest"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestApprovalStore(t *testing.T) {
	storetest.RunApprovalStore(t, func(t *testing.T) switchboard.ApprovalStore { return newStore(t).Approvals() })
}

// rawState reads and writes the state table directly, past the adapter.
type rawState struct {
	c     *dynamodb.Client
	table string
}

func newRawState(t *testing.T) (*dynamo.Store, rawState) {
	t.Helper()
	c := dynamotest.Client(t)
	getenv := dynamotest.FreshTables(t, c)
	tb, _ := deploy.TableByID("state")
	return dynamo.New(c, getenv), rawState{c: dynamotest.SDKClient(t), table: deploy.TableName(tb, getenv)}
}

func (r rawState) item(t *testing.T, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := r.c.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &r.table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}})
	if err != nil {
		t.Fatalf("raw GetItem %s/%s: %v", pk, sk, err)
	}
	return out.Item
}

func (r rawState) countIndex(t *testing.T) int {
	t.Helper()
	out, err := r.c.Query(context.Background(), &dynamodb.QueryInput{TableName: &r.table,
		KeyConditionExpression:    aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "approvals-open"}}})
	if err != nil {
		t.Fatalf("raw Query: %v", err)
	}
	return len(out.Items)
}

func numAttr(t *testing.T, item map[string]types.AttributeValue, name string) string {
	t.Helper()
	n, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("attribute %s is %T, want a number", name, item[name])
	}
	return n.Value
}

func TestApprovalItemsHaveTTLAndAnIndexWhileOpen(t *testing.T) {
	s, raw := newRawState(t)
	ctx := t.Context()
	a := storetest.SampleApproval("ttl1", time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC), 24*time.Hour)
	if err := s.Approvals().Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	wantTTL := a.ExpiresAt.Add(30 * 24 * time.Hour).Unix()
	item := raw.item(t, "approval#ttl1", "-")
	if got := numAttr(t, item, "expiresAt"); got != itoa(wantTTL) {
		t.Fatalf("approval expiresAt %s, want %d (expiry + 30 days)", got, wantTTL)
	}
	idx := raw.item(t, "approvals-open", "2026-05-02T10:00:00.000000000Z#ttl1")
	if idx == nil {
		t.Fatal("no index item for an open approval")
	}
	if got := numAttr(t, idx, "expiresAt"); got != itoa(wantTTL) {
		t.Fatalf("index expiresAt %s, want %d", got, wantTTL)
	}
	if _, err := s.Approvals().Transition(ctx, a.ID, switchboard.ApprovalPending, switchboard.ApprovalApproved, nil); err != nil {
		t.Fatal(err)
	}
	if raw.countIndex(t) != 1 {
		t.Fatal("the index item went away while the approval is approved (still open)")
	}
	if _, err := s.Approvals().Transition(ctx, a.ID, switchboard.ApprovalApproved, switchboard.ApprovalExecuting, nil); err != nil {
		t.Fatal(err)
	}
	if raw.countIndex(t) != 1 {
		t.Fatal("the index item went away while the approval is executing (still open)")
	}
	if _, err := s.Approvals().Transition(ctx, a.ID, switchboard.ApprovalExecuting, switchboard.ApprovalExecuted, nil); err != nil {
		t.Fatal(err)
	}
	if n := raw.countIndex(t); n != 0 {
		t.Fatalf("%d index items after the approval closed, want 0", n)
	}
}

func TestListOpenRemovesStrayIndexItems(t *testing.T) {
	s, raw := newRawState(t)
	ctx := t.Context()
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	live := storetest.SampleApproval("live", at, time.Hour)
	closed := storetest.SampleApproval("closed", at, time.Hour)
	for _, a := range []switchboard.Approval{live, closed} {
		if err := s.Approvals().Create(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	// A crash after the decision, before the index delete: put it back by hand.
	if _, err := s.Approvals().Transition(ctx, closed.ID, switchboard.ApprovalPending, switchboard.ApprovalDenied, nil); err != nil {
		t.Fatal(err)
	}
	stray := func(sk string) {
		_, err := raw.c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &raw.table, Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "approvals-open"}, "sk": &types.AttributeValueMemberS{Value: sk},
			"id": &types.AttributeValueMemberS{Value: sk[strings.LastIndex(sk, "#")+1:]}}})
		if err != nil {
			t.Fatal(err)
		}
	}
	stray("2026-05-01T11:00:00.000000000Z#closed") // approval closed
	stray("2026-05-01T09:00:00.000000000Z#ghost1") // approval never written (crash inside Create)
	stray("2026-05-01T12:00:00.000000000Z#live")   // wrong expiry for an open approval
	got, err := s.Approvals().ListOpen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "live" {
		t.Fatalf("ListOpen: %+v, want only live", got)
	}
	if n := raw.countIndex(t); n != 1 {
		t.Fatalf("%d index items after ListOpen, want 1 (strays removed)", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// The reply destination is a map of typed attributes; an approval stored
// before that, with the opaque JSON context, still routes its follow-up
// (through its decision too).
func TestApprovalReplyToIsTypedAndOldContextIsRead(t *testing.T) {
	s, raw := newRawState(t)
	ctx := t.Context()
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	a := storetest.SampleApproval("typed", at, time.Hour)
	if err := s.Approvals().Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	item := raw.item(t, "approval#typed", "-")
	to, ok := item["replyTo"].(*types.AttributeValueMemberM)
	if !ok {
		t.Fatalf("replyTo is %T, want a map", item["replyTo"])
	}
	if th, _ := to.Value["threadId"].(*types.AttributeValueMemberS); th == nil || th.Value != a.ReplyTo.ThreadID {
		t.Errorf("replyTo.threadId = %v, want %q", to.Value["threadId"], a.ReplyTo.ThreadID)
	}
	if _, ok := item["context"]; ok {
		t.Error("a new approval still writes the old context attribute")
	}

	// An old row: context JSON, no replyTo.
	old := storetest.SampleApproval("legacy", at, time.Hour)
	old.ReplyTo = nil
	if err := s.Approvals().Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	_, err := raw.c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &raw.table,
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "approval#legacy"}, "sk": &types.AttributeValueMemberS{Value: "-"}},
		UpdateExpression:         aws.String("SET #c = :c"),
		ExpressionAttributeNames: map[string]string{"#c": "context"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":c": &types.AttributeValueMemberS{Value: `{"replyTo":{"roomId":"rFinanz","roomName":"finanz-team","threadId":"th1"}}`}}})
	if err != nil {
		t.Fatal(err)
	}
	want := switchboard.ReplyTo{RoomID: "rFinanz", RoomName: "finanz-team", ThreadID: "th1"}
	got, err := s.Approvals().Get(ctx, "legacy")
	if err != nil || got.ReplyTo == nil || *got.ReplyTo != want {
		t.Fatalf("old row: ReplyTo %+v (err %v), want %+v", got.ReplyTo, err, want)
	}
	got, err = s.Approvals().Transition(ctx, "legacy", switchboard.ApprovalPending, switchboard.ApprovalApproved, nil)
	if err != nil || got.ReplyTo == nil || *got.ReplyTo != want {
		t.Fatalf("old row after a decision: ReplyTo %+v (err %v), want %+v", got.ReplyTo, err, want)
	}
}

func TestAllowanceStoreContract(t *testing.T) {
	storetest.RunAllowanceStore(t, func(t *testing.T) switchboard.AllowanceStore { return newStore(t).Allowances() })
}
