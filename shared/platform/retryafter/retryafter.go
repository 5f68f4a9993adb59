// Package retryafter reads the standard Retry-After header that servers
// and the proxies in front of them send with 429 and 503.
package retryafter

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Max caps the wait a header can ask for: a typo or a hostile server must
// not park a caller for years (or overflow a Duration).
const Max = 24 * time.Hour

// Parse reads a Retry-After value, whole seconds or an HTTP date, as the
// wait from now. Absent, unparsable, zero, negative and past values are 0.
func Parse(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(Max/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), Max)
	}
	return 0
}
