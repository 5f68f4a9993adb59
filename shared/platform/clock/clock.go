// Package clock holds the one wait every retry and poll loop shares.
package clock

import (
	"context"
	"time"
)

// Sleep waits d, or less if ctx ends first; then it returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
