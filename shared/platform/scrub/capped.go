package scrub

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Cap returns s when it fits in limit bytes. Otherwise it cuts s on a rune
// boundary and appends "…[truncated N bytes]", N being the bytes cut off; the
// marker counts within limit, so len(Cap(s, limit)) <= limit always holds
// (the audit store relies on that). When limit cannot even hold the
// marker, s is cut without one. Scrub before capping: a cut can split a
// secret so that patterns no longer recognise it.
func Cap(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	if limit <= 0 {
		return ""
	}
	keep := limit
	for {
		cut := runeBoundary(s, keep)
		marker := "…[truncated " + strconv.Itoa(len(s)-cut) + " bytes]"
		if cut+len(marker) <= limit {
			return s[:cut] + marker
		}
		if len(marker) >= limit {
			return s[:runeBoundary(s, limit)]
		}
		// A longer cut means a longer number in the marker; keep shrinks
		// strictly, so this ends.
		keep = limit - len(marker)
	}
}

// runeBoundary returns the largest i <= n that does not split a UTF-8
// sequence; in invalid UTF-8 it backs up at most three bytes.
func runeBoundary(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	if n >= utf8.UTFMax {
		return n
	}
	return 0
}

// ServerText makes text a server sent (an error reason, a description) safe
// to pass on in a message: control characters become spaces, so that it
// stays on one line and cannot forge log lines; then it is trimmed, scrubbed
// and capped at limit bytes.
func (s *Scrubber) ServerText(text string, limit int) string {
	text = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, text)
	return Cap(s.String(strings.TrimSpace(text)), limit)
}
