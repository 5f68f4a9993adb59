package taskboard_test

import (
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/taskboard"
)

// TestCapacityPerCreateAndComplete counts the DynamoDB requests and the
// capacity DynamoDB reports for one task_create and one task_complete
// between two agents, on the production stores (tasks and agent messages,
// dynalite). The numbers are in docs/performance.md; the bounds keep them.
func TestCapacityPerCreateAndComplete(t *testing.T) {
	c := dynamotest.Client(t)
	store := dynamo.New(c, dynamotest.FreshTables(t, c))
	endpoint, stop, err := s3fake.StartFake("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	s3c := s3blob.NewClientFromConfig(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	if err := s3blob.EnsureBucket(t.Context(), s3c, "workspace"); err != nil {
		t.Fatal(err)
	}
	j := &jobs{}
	svc := &taskboard.Service{
		Tasks: store.Tasks(), Messages: sb.ScrubbingMessages{Log: store.AgentMessages(s3blob.New(s3c, "workspace"))},
		Waker: j, Notify: router.New(nil, memstore.New(), slog.New(slog.DiscardHandler)),
		Agents:        everyone{},
		Counters:      store,
		WatchdogAfter: 24 * time.Hour, Log: slog.New(slog.DiscardHandler),
	}
	tool := taskboard.NewTool(svc)
	// A typical hand-over: a title and a paragraph of description (60 words).
	desc := strings.Repeat("Please compile the November invoice totals per customer into a table. ", 6)
	measure := func(what string, call sb.ToolCall) dynamo.OpStats {
		beforeAll := store.Stats()
		before := beforeAll.Total
		if env := tool.Invoke(t.Context(), call); env.Status != "ok" {
			t.Fatalf("%s: %+v", what, env)
		}
		afterAll := store.Stats()
		after := afterAll.Total
		for op, o := range afterAll.Ops {
			b := beforeAll.Ops[op]
			if o.Calls != b.Calls {
				t.Logf("  %s %s: %d requests, %.1f RCU, %.1f WCU", what, op, o.Calls-b.Calls, o.ReadUnits-b.ReadUnits, o.WriteUnits-b.WriteUnits)
			}
		}
		d := dynamo.OpStats{Calls: after.Calls - before.Calls, ReadUnits: after.ReadUnits - before.ReadUnits, WriteUnits: after.WriteUnits - before.WriteUnits}
		t.Logf("%s: %d requests, %.1f RCU, %.1f WCU (dynalite; AWS adds one write per index entry)", what, d.Calls, d.ReadUnits, d.WriteUnits)
		return d
	}
	ada := sb.RunContext{RunID: "ada-1", RootRunID: "ada-1", AgentID: "ada"}
	created := measure("task_create", sb.ToolCall{AgentID: "ada", Tool: "Taskboard", Action: "task_create", Run: ada, Origin: sb.OriginAgent,
		Args: []byte(`{"assignee":"bob","title":"Invoice totals","description":"` + desc + `"}`)})
	id := j.all()[0].Text
	id = taskIDInText.FindStringSubmatch(id)[1]
	bob := sb.RunContext{RunID: "bob-1", ParentRunID: "ada-1", RootRunID: "ada-1", AgentID: "bob"}
	done := measure("task_complete", sb.ToolCall{AgentID: "bob", Tool: "Taskboard", Action: "task_complete", Run: bob, Origin: sb.OriginAgent,
		Args: []byte(`{"taskId":"` + id + `","result":"Table in shared:reports/invoices-2026-11.md; 14 customers, 4711 EUR."}`)})
	// create: 2 counter updates (the run's and the hour's bound), 1
	// conditional put of the task, the message row, its search rows in one
	// batch (+1 receipts query for the payer's daily budget when it has
	// one; none here); complete: 1 read, 1 conditional update, the
	// result's message row and search batch.
	if created.Calls > 5 || done.Calls > 4 {
		t.Errorf("requests: create %d (want ≤ 5), complete %d (want ≤ 4)", created.Calls, done.Calls)
	}
}

var taskIDInText = regexp.MustCompile(`taskId "([0-9a-f]{26})"`)

// everyone has the Taskboard, under its id.
type everyone struct{}

func (everyone) Party(id string) (taskboard.Party, bool) {
	return taskboard.Party{Name: id, Taskboard: true}, true
}
