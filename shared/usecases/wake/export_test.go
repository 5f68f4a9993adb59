package wake

import "time"

// SetReceiverClock gives r the clock that its claim windows are measured
// with, so that a test moves time on instead of sleeping.
func SetReceiverClock(r *Receiver, now func() time.Time) { r.now = now }
