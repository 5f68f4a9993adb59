package retryafter

import (
	"net/http"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	tests := []struct {
		name string
		h    string
		want time.Duration
	}{
		{"absent", "", 0},
		{"seconds", "17", 17 * time.Second},
		{"minutes in seconds", "120", 2 * time.Minute},
		{"seconds with spaces", " 3 ", 3 * time.Second},
		{"zero", "0", 0},
		{"negative", "-5", 0},
		{"absurd seconds are capped at a day", "99999999999", 24 * time.Hour},
		{"HTTP date", "Tue, 04 Mar 2025 05:07:07 GMT", time.Minute},
		{"RFC 850 date", "Tuesday, 04-Mar-25 05:06:37 GMT", 30 * time.Second},
		{"date in the past", "Tue, 04 Mar 2025 05:00:00 GMT", 0},
		{"date a year ahead is capped at a day", now.AddDate(1, 0, 0).Format(http.TimeFormat), 24 * time.Hour},
		{"garbage", "soon", 0},
		{"fraction", "1.5", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(tt.h, now); got != tt.want {
				t.Errorf("Parse(%q) = %v, want %v", tt.h, got, tt.want)
			}
		})
	}
}
