package modelretry_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry"
	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry/retrytest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// TestDefaultPolicyTable measures, on the fake clock, what the default
// policy does per kind of failure: attempts, retries and the total wait
// (the upper bound, with the jitter at its maximum; the lower bound is half
// of each backoff, Retry-After waits are exact). go test -v -run Table
// prints the table.
func TestDefaultPolicyTable(t *testing.T) {
	refused := sb.E("openai.complete", sb.EUNAVAILABLE, "cannot reach the model server")
	timeout := sb.E("openai.complete", sb.EUNAVAILABLE, "the model server did not answer in time")
	rows := []struct {
		kind         string
		err          error
		failFor      time.Duration // the server fails while the clock is before start+failFor; 0 = forever
		wantAttempts int
		wantMax      time.Duration
		wantCode     string
	}{
		{"5xx always", unavailable(), 0, 6, 31 * time.Second, sb.EUNAVAILABLE},
		{"5xx for 10 s then ok", unavailable(), 10 * time.Second, 5, 15 * time.Second, ""},
		{"5xx for 1 min", unavailable(), time.Minute, 6, 31 * time.Second, sb.EUNAVAILABLE},
		{"timeout always", timeout, 0, 6, 31 * time.Second, sb.EUNAVAILABLE},
		{"connection refused always", refused, 0, 6, 31 * time.Second, sb.EUNAVAILABLE},
		{"429 Retry-After 2 once", limited(2 * time.Second), 2 * time.Second, 2, 2 * time.Second, ""},
		{"429 Retry-After 2 always", limited(2 * time.Second), 0, 6, 10 * time.Second, sb.EUNAVAILABLE},
		{"429 without Retry-After always", limited(0), 0, 6, 31 * time.Second, sb.EUNAVAILABLE},
		{"429 Retry-After 30 always", limited(30 * time.Second), 0, 4, 90 * time.Second, sb.EUNAVAILABLE},
		{"429 Retry-After 5 min", limited(5 * time.Minute), 0, 1, 0, sb.EUNAVAILABLE},
		{"401/403", sb.E("openai.complete", sb.EUNAUTHORIZED, "bad key"), 0, 1, 0, sb.EUNAUTHORIZED},
		{"400", sb.E("openai.complete", sb.EINVALID, "rejected"), 0, 1, 0, sb.EINVALID},
		{"404", sb.E("openai.complete", sb.ENOTFOUND, "no model"), 0, 1, 0, sb.ENOTFOUND},
	}
	var out strings.Builder
	fmt.Fprintf(&out, "default policy: base %v, cap %v, max attempts %d, longest Retry-After %v, wait budget %v\n",
		modelretry.DefaultBase, modelretry.DefaultCap, modelretry.DefaultMaxAttempts, modelretry.DefaultMaxRetryAfter, modelretry.DefaultMaxWait)
	fmt.Fprintf(&out, "%-32s %8s %7s %10s %10s  %s\n", "failure", "attempts", "retries", "wait lo", "wait hi", "result")
	for _, r := range rows {
		clock := retrytest.New()
		start := clock.Now()
		call := func(context.Context) (string, error) {
			if r.failFor == 0 || clock.Now().Before(start.Add(r.failFor)) {
				return "", r.err
			}
			return "ok", nil
		}
		_, st, err := modelretry.Do(context.Background(), clock.Policy(modelretry.Default()), "model.complete", call)
		if st.Attempts != r.wantAttempts || st.Waited != r.wantMax || sb.ErrorCode(err) != r.wantCode {
			t.Errorf("%s: %d attempts, waited %v, code %q; want %d, %v, %q", r.kind, st.Attempts, st.Waited, sb.ErrorCode(err), r.wantAttempts, r.wantMax, r.wantCode)
		}
		// The lower bound: every backoff at half, Retry-After exact.
		low := retrytest.New()
		p := low.Policy(modelretry.Default())
		p.Jitter = func(d time.Duration) time.Duration { return d / 2 }
		lowStart := low.Now()
		_, lst, _ := modelretry.Do(context.Background(), p, "model.complete", func(context.Context) (string, error) {
			if r.failFor == 0 || low.Now().Before(lowStart.Add(r.failFor)) {
				return "", r.err
			}
			return "ok", nil
		})
		result := "answer"
		if err != nil {
			result = sb.ErrorCode(err)
		}
		fmt.Fprintf(&out, "%-32s %8d %7d %10v %10v  %s\n", r.kind, st.Attempts, st.Retries, lst.Waited, st.Waited, result)
	}
	t.Log("\n" + out.String())
}
