package scrub

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCap(t *testing.T) {
	long := strings.Repeat("a", 100)
	tests := []struct {
		name  string
		in    string
		limit int
		want  string
	}{
		{"fits", "hello", 5, "hello"},
		{"fits with room", "hello", 50, "hello"},
		{"zero", "hello", 0, ""},
		{"negative", "hello", -1, ""},
		{"marker inside limit", long, 30, strings.Repeat("a", 7) + "…[truncated 93 bytes]"},
		{"marker digits grow", strings.Repeat("a", 1000), 25, "a…[truncated 999 bytes]"},
		{"no room for marker", long, 10, strings.Repeat("a", 10)},
		{"rune boundary without marker", "héllo wörld", 2, "h"},
		{"rune boundary with marker", strings.Repeat("é", 30), 30, "ééé…[truncated 54 bytes]"},
		{"empty", "", 10, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cap(tt.in, tt.limit)
			if got != tt.want {
				t.Errorf("Cap(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
			}
			if len(got) > max(tt.limit, 0) {
				t.Errorf("len %d > limit %d", len(got), tt.limit)
			}
			if utf8.ValidString(tt.in) && !utf8.ValidString(got) {
				t.Errorf("Cap split a rune: %q", got)
			}
		})
	}
}

func TestCapAllLimits(t *testing.T) {
	in := strings.Repeat("aé€😀", 300)
	for limit := 0; limit <= len(in)+1; limit++ {
		got := Cap(in, limit)
		if len(got) > limit {
			t.Fatalf("Cap(_, %d): len %d", limit, len(got))
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Cap(_, %d) split a rune", limit)
		}
		if limit >= len(in) && got != in {
			t.Fatalf("Cap(_, %d) changed text that fits", limit)
		}
		if i := strings.Index(got, "…[truncated "); i >= 0 {
			var n int
			if _, err := fmtSscanf(got[i:], &n); err != nil || i+n != len(in) {
				t.Fatalf("Cap(_, %d) = %q: marker says %d bytes, cut %d", limit, got, n, len(in)-i)
			}
		}
	}
}

func fmtSscanf(marker string, n *int) (int, error) {
	return fmt.Sscanf(marker, "…[truncated %d bytes]", n)
}

func TestServerText(t *testing.T) {
	s := New([]string{"hunter2-secret-value"})
	tests := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"plain", "room not found", 300, "room not found"},
		{"control characters become spaces", "bad\nrequest\r\x7fnow\t", 300, "bad request  now"},
		{"trimmed", "  \n padded \x00", 300, "padded"},
		{"secret masked", "token hunter2-secret-value refused", 300, "token *** refused"},
		{"capped", strings.Repeat("x", 100), 40, Cap(strings.Repeat("x", 100), 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.ServerText(tt.in, tt.limit); got != tt.want {
				t.Errorf("ServerText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
