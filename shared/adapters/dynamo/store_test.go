package dynamo_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/storetest"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// newStore is a Store on a fresh table set in the test DynamoDB.
func newStore(t *testing.T) *dynamo.Store {
	t.Helper()
	c := dynamotest.Client(t)
	return dynamo.New(c, dynamotest.FreshTables(t, c))
}

func TestAuditStore(t *testing.T) {
	storetest.RunAuditStore(t, func(t *testing.T) switchboard.AuditStore { return newStore(t) })
}

func TestReceiptStore(t *testing.T) {
	storetest.RunReceiptStore(t, func(t *testing.T) switchboard.ReceiptStore { return newStore(t) })
}

func TestJobStore(t *testing.T) {
	storetest.RunJobStore(t, func(t *testing.T) switchboard.JobStore { return newStore(t) })
}

func TestMarkers(t *testing.T) {
	storetest.RunMarkers(t, func(t *testing.T) switchboard.Markers { return newStore(t) })
}

// newClockedStore is newStore reading the time from now.
func newClockedStore(t *testing.T, now func() time.Time) *dynamo.Store {
	s := newStore(t)
	s.Now = now
	return s
}

func TestCounters(t *testing.T) {
	storetest.RunCounters(t, func(t *testing.T, now func() time.Time) switchboard.Counters {
		return newClockedStore(t, now)
	})
}

func TestKV(t *testing.T) {
	storetest.RunKV(t, func(t *testing.T, now func() time.Time) switchboard.KV {
		return newClockedStore(t, now).KV()
	})
}

func TestLeases(t *testing.T) {
	storetest.RunLeases(t, func(t *testing.T, now func() time.Time) switchboard.Leases {
		return newClockedStore(t, now)
	})
}

func TestEnsureTablesIsIdempotentAndPingable(t *testing.T) {
	c := dynamotest.Client(t)
	getenv := dynamotest.FreshTables(t, c)
	ctx := t.Context()
	if err := dynamo.EnsureTables(ctx, c, getenv); err != nil {
		t.Fatalf("second EnsureTables: %v", err)
	}
	if err := dynamo.Ping(ctx, c, getenv); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	out, err := dynamotest.SDKClient(t).DescribeTable(ctx, &dynamodb.DescribeTableInput{
		TableName: aws.String(deploy.TableName(deploy.Tables[0], getenv))})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Table.BillingModeSummary; got == nil || got.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing mode %+v, want PAY_PER_REQUEST", got)
	}
	if n := len(out.Table.GlobalSecondaryIndexes); n != 1 ||
		out.Table.GlobalSecondaryIndexes[0].Projection.ProjectionType != types.ProjectionTypeAll {
		t.Errorf("audit indexes %+v, want byRoot projecting ALL", out.Table.GlobalSecondaryIndexes)
	}
}

func TestEnsureTablesRefusesAForeignSchema(t *testing.T) {
	c := dynamotest.Client(t)
	getenv := dynamotest.FreshTables(t, c)
	ctx := t.Context()
	// Replace the state table with one keyed differently.
	sdk := dynamotest.SDKClient(t)
	state := deploy.TableName(deploy.Tables[2], getenv)
	if _, err := sdk.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &state}); err != nil {
		t.Fatal(err)
	}
	// Deletion is asynchronous even with --deleteTableMs 0.
	gone := dynamodb.NewTableNotExistsWaiter(sdk, func(o *dynamodb.TableNotExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, time.Second
	})
	if err := gone.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &state}, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	_, err := sdk.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &state,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = dynamo.EnsureTables(ctx, c, getenv)
	if switchboard.ErrorCode(err) != switchboard.EINTERNAL || !strings.Contains(switchboard.ErrorMessage(err), "different key schema") {
		t.Fatalf("EnsureTables over a foreign table: %v, want EINTERNAL about the key schema", err)
	}
}

// missingTables resolves to tables nobody created.
func missingTables(key string) string {
	if key == deploy.EnvTablePrefix {
		return "missing-" + time.Now().Format("150405.000000000") + "-"
	}
	return ""
}

func TestMissingTableSaysWhatToDo(t *testing.T) {
	c := dynamotest.Client(t)
	ctx := t.Context()
	s := dynamo.New(c, missingTables)
	checks := map[string]error{
		"Append": s.Append(ctx, switchboard.AuditEntry{ID: "e", AgentID: "a", At: time.Now()}),
		"Ping":   dynamo.Ping(ctx, c, missingTables),
	}
	_, checks["Claim"] = s.Claim(ctx, "k", time.Now().Add(time.Hour))
	_, _, checks["Incr"] = s.Incr(ctx, "k", 1, time.Now().Add(time.Hour))
	_, _, checks["Get"] = s.KV().Get(ctx, "k")
	_, checks["Acquire"] = s.Acquire(ctx, "k", "h", time.Now().Add(time.Hour))
	checks["Release"] = s.Release(ctx, "k", "h")
	_, checks["LastRuns"] = s.LastRuns(ctx)
	for name, err := range checks {
		msg := switchboard.ErrorMessage(err)
		if switchboard.ErrorCode(err) != switchboard.EINTERNAL ||
			!strings.Contains(msg, "is missing; run make dev or cdk deploy") || !strings.Contains(msg, "missing-") {
			t.Errorf("%s on a missing table: %v (message %q), want EINTERNAL naming the table and the fix", name, err, msg)
		}
	}
}

func TestUnreachableEndpointIsUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more
	c := dynamo.NewClientFromConfig(t.Context(), aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("x", "y", ""),
		BaseEndpoint: aws.String("http://" + addr),
	})
	c.MaxAttempts = 1
	s := dynamo.New(c, missingTables)
	ctx := t.Context()
	_, claimErr := s.Claim(ctx, "k", time.Now().Add(time.Hour))
	_, costErr := s.ChainCost(ctx, "root")
	for name, err := range map[string]error{
		"Append": s.Append(ctx, switchboard.AuditEntry{ID: "e", AgentID: "a"}),
		"Claim":  claimErr, "ChainCost": costErr,
		"Ping": dynamo.Ping(ctx, c, missingTables),
	} {
		if switchboard.ErrorCode(err) != switchboard.EUNAVAILABLE {
			t.Errorf("%s against a closed port: %v, want EUNAVAILABLE", name, err)
		}
	}
	// A deadline that passes is unavailable too.
	dctx, cancel := context.WithTimeout(ctx, time.Nanosecond)
	defer cancel()
	<-dctx.Done()
	if err := s.Append(dctx, switchboard.AuditEntry{ID: "e", AgentID: "a"}); switchboard.ErrorCode(err) != switchboard.EUNAVAILABLE {
		t.Errorf("Append after the deadline: %v, want EUNAVAILABLE", err)
	}
}

// TestItemShape pins the stored layout that CDK, the byRoot index and the
// TTL depend on.
func TestItemShape(t *testing.T) {
	c := dynamotest.Client(t)
	getenv := dynamotest.FreshTables(t, c)
	s := dynamo.New(c, getenv)
	s.AuditRetention = 24 * time.Hour
	s.ReceiptRetention = 48 * time.Hour
	ctx := t.Context()
	at := time.Date(2026, 1, 2, 3, 4, 5, 600000000, time.FixedZone("CET", 3600))
	e := switchboard.AuditEntry{ID: "e1", At: at, AgentID: "alice",
		Run: switchboard.RunContext{RunID: "r1", RootRunID: "r1", AgentID: "alice"}}
	if err := s.Append(ctx, e); err != nil {
		t.Fatal(err)
	}
	r := switchboard.Receipt{AgentID: "alice", StartedAt: at, CostUSD: 0.1,
		Run: switchboard.RunContext{RunID: "r1", RootRunID: "r1", AgentID: "alice"}}
	if err := s.Put(ctx, r); err != nil {
		t.Fatal(err)
	}
	noRoot := switchboard.AuditEntry{ID: "e2", At: at, AgentID: "alice"}
	if err := s.Append(ctx, noRoot); err != nil {
		t.Fatalf("entry without a chain (kept out of the index): %v", err)
	}
	if _, err := s.Claim(ctx, "webhook:m1", at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return at }
	if _, _, err := s.Incr(ctx, "wake:r1", 5, at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.KV().Put(ctx, "poll:rc", "cursor-1", at.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(ctx, "agent:alice", "run-1", at.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		table string
		pk    string
		sk    string
		want  map[string]string // attribute → S or N value
	}{
		{"audit", "audit", "alice", "2026-01-02T02:04:05.600000000Z#e1", map[string]string{
			"rootRunId": "r1", "id": "e1", "expiresAt": "1767405845"}},
		{"audit without chain", "audit", "alice", "2026-01-02T02:04:05.600000000Z#e2", map[string]string{
			"rootRunId": "", "expiresAt": "1767405845"}},
		{"receipt", "receipts", "alice", "2026-01-02T02:04:05.600000000Z#r1", map[string]string{
			"rootRunId": "r1", "runId": "r1", "costUsd": "0.1", "expiresAt": "1767492245"}},
		{"marker", "state", "marker#webhook:m1", "-", map[string]string{
			"expiresAt": "1767323045"}},
		{"counter", "state", "counter#wake:r1", "-", map[string]string{
			"n": "1", "expiresAt": "1767323045"}},
		{"kv", "state", "kv#poll:rc", "-", map[string]string{
			"value": "cursor-1", "expiresAt": "1767326645"}},
		{"lease", "state", "lease#agent:alice", "-", map[string]string{
			"holder": "run-1", "until": "1767319475600", "expiresAt": "1767323075"}},
	}
	for _, tt := range tests {
		tb, _ := deploy.TableByID(tt.table)
		out, err := dynamotest.SDKClient(t).GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(deploy.TableName(tb, getenv)),
			Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: tt.pk},
				"sk": &types.AttributeValueMemberS{Value: tt.sk},
			},
		})
		if err != nil || out.Item == nil {
			t.Fatalf("%s: item %s/%s not found (%v)", tt.name, tt.pk, tt.sk, err)
		}
		for attr, want := range tt.want {
			var got string
			switch v := out.Item[attr].(type) {
			case *types.AttributeValueMemberS:
				got = v.Value
			case *types.AttributeValueMemberN:
				got = v.Value
			}
			if got != want {
				t.Errorf("%s: %s = %q, want %q", tt.name, attr, got, want)
			}
		}
	}
}

func TestStatsCountCallsAndCapacity(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	if err := s.Append(ctx, switchboard.AuditEntry{ID: "e", AgentID: "a", Run: switchboard.RunContext{RootRunID: "r"}}); err != nil {
		t.Fatal(err)
	}
	_ = s.Append(ctx, switchboard.AuditEntry{ID: "e", AgentID: "a", Run: switchboard.RunContext{RootRunID: "r"}})
	if _, err := s.ByRoot(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	app, by := st.Ops["audit.append"], st.Ops["audit.byRoot"]
	if app.Calls != 2 || app.Errors != 1 || app.WriteUnits <= 0 || app.ReadUnits != 0 {
		t.Errorf("audit.append stats %+v, want 2 calls, 1 error, write units only", app)
	}
	if by.Calls != 1 || by.Errors != 0 || by.ReadUnits <= 0 || by.WriteUnits != 0 {
		t.Errorf("audit.byRoot stats %+v, want 1 call, read units only", by)
	}
	if st.Total.Calls != 3 || st.Total.WriteUnits != app.WriteUnits || st.Total.ReadUnits != by.ReadUnits {
		t.Errorf("total %+v does not add up to %+v + %+v", st.Total, app, by)
	}
}

// TestStateStatsPerPath pins the requests and capacity (as dynalite reports
// them) of each path through Incr, KV and Leases.
func TestStateStatsPerPath(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	kv := s.KV()
	tests := []struct {
		name string
		op   string
		do   func() error
		want dynamo.OpStats // the change in s.Stats().Ops[op]
	}{
		{"Incr of a new counter", "counters.incr", func() error {
			_, _, err := s.Incr(ctx, "k", 1, now.Add(time.Minute))
			return err
		}, dynamo.OpStats{Calls: 1, WriteUnits: 1}},
		{"Incr refused at the limit (AWS: 1 call)", "counters.incr", func() error {
			_, _, err := s.Incr(ctx, "k", 1, now.Add(time.Minute))
			return err
		}, dynamo.OpStats{Calls: 2, Errors: 1, ReadUnits: 1}},
		{"Incr after expiry (AWS: 2 calls)", "counters.incr", func() error {
			now = now.Add(2 * time.Minute)
			_, _, err := s.Incr(ctx, "k", 1, now.Add(time.Minute))
			return err
		}, dynamo.OpStats{Calls: 3, Errors: 1, ReadUnits: 1, WriteUnits: 1}},
		{"Reset", "counters.reset", func() error { return s.Reset(ctx, "k") },
			dynamo.OpStats{Calls: 1, WriteUnits: 1}},
		{"Get", "kv.get", func() error { _, _, err := kv.Get(ctx, "k"); return err },
			dynamo.OpStats{Calls: 1, ReadUnits: 1}},
		{"Put", "kv.put", func() error { return kv.Put(ctx, "k", "v", time.Time{}) },
			dynamo.OpStats{Calls: 1, WriteUnits: 1}},
		{"PutIf", "kv.putIf", func() error { return kv.PutIf(ctx, "k", "v", "w", time.Time{}) },
			dynamo.OpStats{Calls: 1, WriteUnits: 1}},
		{"Acquire", "leases.acquire", func() error { _, err := s.Acquire(ctx, "k", "h", now.Add(time.Minute)); return err },
			dynamo.OpStats{Calls: 1, WriteUnits: 1}},
		{"Acquire refused", "leases.acquire", func() error { _, err := s.Acquire(ctx, "k", "other", now.Add(time.Minute)); return err },
			dynamo.OpStats{Calls: 1, Errors: 1}},
		{"Release", "leases.release", func() error { return s.Release(ctx, "k", "h") },
			dynamo.OpStats{Calls: 1, WriteUnits: 1}},
	}
	for _, tt := range tests {
		before := s.Stats().Ops[tt.op]
		if err := tt.do(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		after := s.Stats().Ops[tt.op]
		got := dynamo.OpStats{Calls: after.Calls - before.Calls, Errors: after.Errors - before.Errors,
			ReadUnits: after.ReadUnits - before.ReadUnits, WriteUnits: after.WriteUnits - before.WriteUnits}
		if got != tt.want {
			t.Errorf("%s: %s stats %+v, want %+v", tt.name, tt.op, got, tt.want)
		}
	}
}

// TestByRootPaginates writes more than one 1 MB page of audit entries.
func TestByRootPaginates(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	const n = 300 // × ~4 KB args ≈ 1.2 MB > one Query page
	args := strings.Repeat("a", switchboard.MaxAuditArgs)
	for i := range n {
		e := switchboard.AuditEntry{ID: switchboard.NewID(time.Now()), At: time.Unix(1700000000, int64(i)),
			AgentID: []string{"alice", "bob"}[i%2], Args: args, Run: switchboard.RunContext{RootRunID: "big"}}
		if err := s.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ByRoot(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("ByRoot returned %d entries, want %d", len(got), n)
	}
	for i := 1; i < n; i++ {
		if got[i].At.Before(got[i-1].At) {
			t.Fatalf("entry %d older than entry %d", i, i-1)
		}
	}
	if pages := s.Stats().Ops["audit.byRoot"].Calls; pages < 2 {
		t.Errorf("ByRoot used %d page(s); the test meant to cross a page boundary", pages)
	}
}

func TestWakeClaims(t *testing.T) {
	storetest.RunWakeClaims(t, func(t *testing.T, now func() time.Time) switchboard.KV {
		return newClockedStore(t, now).KV()
	})
}
