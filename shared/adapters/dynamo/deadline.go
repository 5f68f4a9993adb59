package dynamo

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Limits of one DynamoDB call. Single-item calls take milliseconds; a call
// that has not answered in seconds is stuck, and the caller (a webhook with
// a one-second budget, a job, an agent run) is better served by an error it
// can act on than by waiting for the database.
const (
	// OperationTimeout bounds one call: every attempt and every wait
	// between attempts. A caller's earlier deadline wins.
	OperationTimeout = 5 * time.Second
	// AttemptTimeout bounds one attempt until the response headers arrive;
	// the attempt is then retried on a fresh connection.
	AttemptTimeout = 2 * time.Second
	// MaxAttempts per call, the first included.
	MaxAttempts = 4
	// Backoff between attempts: full jitter over 25 ms · 2^attempt, at most
	// 1 s. The SDK's default waits up to 2^attempt seconds, which alone
	// spends a webhook's budget on the first throttled write; DynamoDB
	// throttling clears within milliseconds to seconds.
	backoffBase = 25 * time.Millisecond
	backoffCap  = time.Second
)

// withCallLimits applies the limits above to a DynamoDB client.
func withCallLimits(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, OperationDeadline(OperationTimeout))
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.MaxAttempts = MaxAttempts
		so.Backoff = JitterBackoff{Base: backoffBase, Cap: backoffCap}
		// No retry quota: the SDK's default bucket is shared by every call
		// of the process and empties after some fifty throttled calls;
		// after that every throttled call fails at once, a lease release or
		// a wake claim's finish included. MaxAttempts and the operation
		// deadline already bound what one call may cost.
		so.RateLimiter = ratelimit.None
	})
	if bc, ok := o.HTTPClient.(*awshttp.BuildableClient); ok {
		o.HTTPClient = bc.WithTransportOptions(func(t *http.Transport) { t.ResponseHeaderTimeout = AttemptTimeout })
	}
}

// OperationDeadline returns an SDK stack option that runs each operation
// under a deadline of d. It sits first in the Initialize step, so the
// deadline covers the retry loop: retries never stretch a call beyond d.
func OperationDeadline(d time.Duration) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(operationDeadline{d: d}, middleware.Before)
	}
}

type operationDeadline struct{ d time.Duration }

func (operationDeadline) ID() string { return "SwitchboardOperationDeadline" }

func (m operationDeadline) HandleInitialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
	middleware.InitializeOutput, middleware.Metadata, error) {
	ctx, cancel := context.WithTimeout(ctx, m.d)
	defer cancel() // DynamoDB answers are read completely inside the operation
	return next.HandleInitialize(ctx, in)
}

// JitterBackoff waits a random time in [0, min(Cap, Base·2^attempt)).
type JitterBackoff struct{ Base, Cap time.Duration }

// BackoffDelay implements retry.BackoffDelayer.
func (j JitterBackoff) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	return time.Duration(rand.Int64N(int64(j.ceiling(attempt)))), nil
}

// ceiling is the longest wait before attempt (1 = the first retry).
func (j JitterBackoff) ceiling(attempt int) time.Duration {
	c := j.Base
	for i := 0; i < attempt && c < j.Cap; i++ {
		c *= 2
	}
	return min(c, j.Cap)
}
