package dynamo_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// proxiedStore is a Store whose client is built like production's
// (NewClientFromConfig, so with the call limits) and talks to dynalite
// through a fault proxy.
func proxiedStore(t *testing.T) (*dynamo.Store, *dynamotest.FaultProxy) {
	t.Helper()
	direct := dynamotest.Client(t)
	getenv := dynamotest.FreshTables(t, direct)
	proxy := dynamotest.NewFaultProxy(t, dynamotest.Endpoint(t))
	c := dynamo.NewClientFromConfig(context.Background(), aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(proxy.URL),
	})
	return dynamo.New(c, getenv), proxy
}

// Throttling is retried by the SDK with short waits: a write throttled on
// all but its last attempt succeeds, well within a webhook's budget.
func TestThrottledCallIsRetriedBySDK(t *testing.T) {
	store, proxy := proxiedStore(t)
	proxy.SetThrottle(dynamotest.Throttle{Ops: []string{"PutItem"}, PerRequest: dynamo.MaxAttempts - 1})
	ctx, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
	defer cancel()
	ok, err := store.Claim(ctx, "rc#hermes#m1", time.Now().Add(time.Hour))
	if err != nil || !ok {
		t.Fatalf("Claim = %v, %v; want true after %d throttled attempts", ok, err, dynamo.MaxAttempts-1)
	}
	st := proxy.Stats()
	if st.ByOp["PutItem"] != dynamo.MaxAttempts || st.Throttled != dynamo.MaxAttempts-1 {
		t.Errorf("proxy saw %d PutItem, %d throttled; want %d attempts, %d throttled",
			st.ByOp["PutItem"], st.Throttled, dynamo.MaxAttempts, dynamo.MaxAttempts-1)
	}
	// The claim was taken exactly once: the retry was not a second claim.
	proxy.SetThrottle(dynamotest.Throttle{})
	if again, err := store.Claim(context.Background(), "rc#hermes#m1", time.Now().Add(time.Hour)); err != nil || again {
		t.Errorf("second Claim = %v, %v; want false (already claimed)", again, err)
	}
}

// Throttling is retried on every call, however many calls were throttled
// before: the SDK's default retry quota (500 tokens, 5 per throttled retry)
// would, after some fifty calls each throttled on all but their last
// attempt, fail every later throttled call at once, its release of a lease
// or its claim's finish included.
func TestThrottledCallsAreRetriedAfterManyThrottles(t *testing.T) {
	store, proxy := proxiedStore(t)
	proxy.SetThrottle(dynamotest.Throttle{Ops: []string{"PutItem"}, PerRequest: dynamo.MaxAttempts - 1})
	const calls = 80 // 80 × 3 throttled retries × 5 tokens: three times the default quota
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	sem := make(chan struct{}, 8)
	for i := range calls {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ok, err := store.Claim(context.Background(), fmt.Sprintf("rc#hermes#many%03d", i), time.Now().Add(time.Hour))
			if err != nil || !ok {
				errs <- fmt.Errorf("Claim %d = %v, %v", i, ok, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if failed++; failed == 1 {
			t.Error(err)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d calls failed; want every one through after its retries", failed, calls)
	}
	if st := proxy.Stats(); st.Throttled != calls*(dynamo.MaxAttempts-1) {
		t.Errorf("proxy throttled %d requests, want %d", st.Throttled, calls*(dynamo.MaxAttempts-1))
	}
}

// Throttling that outlasts the attempts is EUNAVAILABLE, after exactly
// MaxAttempts requests and within the operation deadline.
func TestThrottlingPastTheAttemptsIsUnavailable(t *testing.T) {
	store, proxy := proxiedStore(t)
	proxy.SetThrottle(dynamotest.Throttle{Fraction: 1})
	start := time.Now()
	_, err := store.Claim(context.Background(), "rc#hermes#m2", time.Now().Add(time.Hour))
	if sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Fatalf("Claim error = %v, want EUNAVAILABLE", err)
	}
	if got := proxy.Stats().Requests; got != dynamo.MaxAttempts {
		t.Errorf("proxy saw %d requests, want %d attempts", got, dynamo.MaxAttempts)
	}
	if d := time.Since(start); d > dynamo.OperationTimeout {
		t.Errorf("gave up after %v, want within %v", d, dynamo.OperationTimeout)
	}
}

// A hung DynamoDB ends a call at the caller's deadline when it is earlier,
// and otherwise at OperationTimeout — also for writes made under
// context.WithoutCancel (audit entries, released claims), which have no
// deadline of their own.
func TestHungDynamoDBCallEndsAtItsDeadline(t *testing.T) {
	store, proxy := proxiedStore(t)
	proxy.Hang(true)
	tests := []struct {
		name     string
		ctx      func() (context.Context, context.CancelFunc)
		deadline time.Duration
	}{
		{name: "caller deadline", deadline: 900 * time.Millisecond, ctx: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 900*time.Millisecond)
		}},
		{name: "no caller deadline", deadline: dynamo.OperationTimeout, ctx: func() (context.Context, context.CancelFunc) {
			return context.WithoutCancel(context.Background()), func() {}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			err := store.Unclaim(ctx, "rc#hermes#m3")
			d := time.Since(start)
			if sb.ErrorCode(err) != sb.EUNAVAILABLE {
				t.Errorf("error = %v, want EUNAVAILABLE", err)
			}
			if d < tt.deadline-50*time.Millisecond || d > tt.deadline+time.Second {
				t.Errorf("returned after %v, want at its deadline %v", d, tt.deadline)
			}
		})
	}
	proxy.Hang(false)
	if _, err := store.Claim(context.Background(), "rc#hermes#m4", time.Now().Add(time.Hour)); err != nil {
		t.Errorf("after the hang: %v", err)
	}
}

func TestJitterBackoffStaysUnderItsCeiling(t *testing.T) {
	j := dynamo.JitterBackoff{Base: 25 * time.Millisecond, Cap: time.Second}
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{1, 50 * time.Millisecond}, {2, 100 * time.Millisecond}, {3, 200 * time.Millisecond},
		{6, time.Second}, {40, time.Second},
	}
	for _, tt := range tests {
		for range 200 {
			if d := j.Delay(tt.attempt); d < 0 || d >= tt.want {
				t.Fatalf("Delay(%d) = %v; want in [0, %v)", tt.attempt, d, tt.want)
			}
		}
	}
}
