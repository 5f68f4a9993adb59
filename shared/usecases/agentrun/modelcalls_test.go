package agentrun_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry"
	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry/retrytest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// flakyModel fails with EUNAVAILABLE failures times in each step before it
// answers, retrying through modelretry like the real providers.
type flakyModel struct {
	inner    sb.Model
	failures int
	policy   modelretry.Policy
}

func (m *flakyModel) Complete(ctx context.Context, req sb.ModelRequest) (sb.ModelResponse, error) {
	n := 0
	resp, _, err := modelretry.Do(ctx, m.policy, "test.complete", func(ctx context.Context) (sb.ModelResponse, error) {
		if n++; n <= m.failures {
			return sb.ModelResponse{}, sb.E("test.complete", sb.EUNAVAILABLE, "the model server failed (HTTP 500); try again later")
		}
		return m.inner.Complete(ctx, req)
	})
	return resp, err
}

// TestRunCountsModelRetries: the result says how many model attempts a run
// took and how long it waited between them, summed over its steps.
func TestRunCountsModelRetries(t *testing.T) {
	clock := retrytest.New()
	inner := &stepModel{steps: []step{calls(10, 2, sb.ModelToolCall{ID: "c1", Tool: "Echo", Action: "say", Args: []byte(`{}`)}), answer("done", 5, 1)}}
	m := &flakyModel{inner: inner, failures: 2, policy: clock.Policy(modelretry.Default())}
	e, _ := newEngine(&recInvoker{}, memstore.New())
	res, err := e.Run(context.Background(), agent(m), "hi", nil)
	if err != nil || res.Answer != "done" {
		t.Fatalf("Run = %q, %v; want done", res.Answer, err)
	}
	// Two steps, each 2 failures + 1 success, waiting 1 s + 2 s.
	want := sb.ModelCalls{Attempts: 6, Retries: 4, Waited: 6 * time.Second}
	if res.ModelCalls != want {
		t.Errorf("ModelCalls = %+v, want %+v", res.ModelCalls, want)
	}
}
