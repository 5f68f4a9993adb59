package dynamo

import (
	"math/rand/v2"
	"net/http"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
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

// withCallLimits applies the limits above to a DynamoDB client. The retry
// loop has no retry quota: the SDK's default bucket was shared by every
// call of the process and emptied after some fifty throttled calls, after
// which every throttled call failed at once, a lease release or a wake
// claim's finish included. MaxAttempts and the operation deadline already
// bound what one call may cost.
func withCallLimits(c *ddb.Client) {
	c.MaxAttempts = MaxAttempts
	c.OperationTimeout = OperationTimeout
	c.Backoff = JitterBackoff{Base: backoffBase, Cap: backoffCap}.Delay
	if bc, ok := c.Signer.HTTP.(*awshttp.BuildableClient); ok {
		c.Signer.HTTP = bc.WithTransportOptions(func(t *http.Transport) { t.ResponseHeaderTimeout = AttemptTimeout })
	}
}

// JitterBackoff waits a random time in [0, min(Cap, Base·2^attempt)).
type JitterBackoff struct{ Base, Cap time.Duration }

// Delay is the wait before the retry after the attempt-th attempt.
func (j JitterBackoff) Delay(attempt int) time.Duration {
	return time.Duration(rand.Int64N(int64(j.ceiling(attempt))))
}

// ceiling is the longest wait before attempt (1 = the first retry).
func (j JitterBackoff) ceiling(attempt int) time.Duration {
	c := j.Base
	for i := 0; i < attempt && c < j.Cap; i++ {
		c *= 2
	}
	return min(c, j.Cap)
}
