package switchboard

import (
	"errors"
	"fmt"
	"testing"
)

func TestHumanSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1, "1 B"},
		{77, "77 B"},
		{1023, "1023 B"},
		{1024, "1.0 KB"},
		{1229, "1.2 KB"},
		{1536, "1.5 KB"},
		{10 * 1024, "10.0 KB"},
		{1024 * 1024, "1.0 MB"},
		{3565158, "3.4 MB"},
		{25 * 1024 * 1024, "25.0 MB"},
		{1024 * 1024 * 1024, "1.0 GB"},
		{5 * 1024 * 1024 * 1024, "5.0 GB"},
	}
	for _, tt := range tests {
		if got := HumanSize(tt.n); got != tt.want {
			t.Errorf("HumanSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// HumanSize rounds 1023.95 KB and up to "1024.0 KB" instead of "1.0 MB"
// (same at the MB→GB boundary).
func TestHumanSizeUnitBoundary(t *testing.T) {
	for n, want := range map[int64]string{
		1024*1024 - 1:      "1.0 MB",
		1024*1024 - 40:     "1.0 MB",
		1024*1024*1024 - 1: "1.0 GB",
	} {
		if got := HumanSize(n); got != want {
			t.Errorf("HumanSize(%d) = %q, want %q", n, got, want)
		}
	}
}

type callError struct{ status int }

func (e *callError) Error() string          { return fmt.Sprintf("HTTP %d", e.status) }
func (e *callError) RemoteStatus() int      { return e.status }
func (e *callError) RemoteEndpoint() string { return "GET /api/v1/rooms.info" }
func (e *callError) RemoteCode() int        { return 0 }

// A chat port's failed request reads like any other remote one.
func TestChatRemoteFailure(t *testing.T) {
	tests := []struct {
		name         string
		err          error
		wantStatus   int
		wantEndpoint string
	}{
		{"nil", nil, 0, ""},
		{"plain error", errors.New("boom"), 0, ""},
		{"call inside a domain error", Wrap("op", EFORBIDDEN, "no", &callError{403}), 403, "GET /api/v1/rooms.info"},
		{"wrapped twice", fmt.Errorf("room: %w", Wrap("op", EUNAVAILABLE, "down", &callError{502})), 502, "GET /api/v1/rooms.info"},
	}
	for _, tt := range tests {
		status, endpoint := HTTPStatus(tt.err), Endpoint(tt.err)
		if status != tt.wantStatus || endpoint != tt.wantEndpoint {
			t.Errorf("%s: HTTPStatus, Endpoint = %d %q, want %d %q", tt.name, status, endpoint, tt.wantStatus, tt.wantEndpoint)
		}
	}
}
