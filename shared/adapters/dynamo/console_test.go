package dynamo_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/storetest"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// newConsoleState is the console's state view of a fresh table set.
func newConsoleState(t *testing.T, now func() time.Time) (*dynamo.Store, *dynamodb.Client, func(string) string) {
	t.Helper()
	c := dynamotest.Client(t)
	getenv := dynamotest.FreshTables(t, c)
	s := dynamo.New(c, getenv)
	s.Now = now
	return s.ConsoleState(getenv), dynamotest.SDKClient(t), getenv
}

func TestConsoleStateKeepsTheContracts(t *testing.T) {
	t.Run("KV", func(t *testing.T) {
		storetest.RunKV(t, func(t *testing.T, now func() time.Time) switchboard.KV {
			s, _, _ := newConsoleState(t, now)
			return s.KV()
		})
	})
	t.Run("Counters", func(t *testing.T) {
		storetest.RunCounters(t, func(t *testing.T, now func() time.Time) switchboard.Counters {
			s, _, _ := newConsoleState(t, now)
			return s
		})
	})
}

// TestConsoleStateWritesOnlyTheConsoleTable: the console's role may write
// the console table alone, so its sessions and counters must land there and
// never in the state table.
func TestConsoleStateWritesOnlyTheConsoleTable(t *testing.T) {
	ctx := t.Context()
	s, c, getenv := newConsoleState(t, time.Now)
	if err := s.KV().Put(ctx, "session#abc", "1", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Incr(ctx, "login#127.0.0.1", 5, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	count := func(id string) int32 {
		tb, _ := deploy.TableByID(id)
		name := deploy.TableName(tb, getenv)
		out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: &name}) // a test looking at a tiny table
		if err != nil {
			t.Fatal(err)
		}
		return out.Count
	}
	if got := count("console"); got != 2 {
		t.Errorf("console table holds %d items, want 2 (the session and the counter)", got)
	}
	if got := count("state"); got != 0 {
		t.Errorf("state table holds %d items, want 0", got)
	}
}

func TestKVDelete(t *testing.T) {
	ctx := t.Context()
	kv := newStore(t).KV()
	if err := kv.Put(ctx, "k", "v", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, found, err := kv.Get(ctx, "k"); err != nil || found {
		t.Errorf("after Delete: found %v, err %v; want gone", found, err)
	}
	if err := kv.Delete(ctx, "never-there"); err != nil {
		t.Errorf("Delete of a missing key: %v, want nil", err)
	}
	if err := kv.Delete(ctx, ""); switchboard.ErrorCode(err) != switchboard.EINVALID {
		t.Errorf("Delete of an empty key: %v, want EINVALID", err)
	}
}
