package switchboard

import (
	"strings"
	"testing"
)

func TestStateChecks(t *testing.T) {
	long := strings.Repeat("k", MaxStateKey+1)
	tests := []struct {
		name string
		err  error
		ok   bool
	}{
		{"key", CheckStateKey("op", "marker", "k"), true},
		{"longest key", CheckStateKey("op", "marker", long[1:]), true},
		{"empty key", CheckStateKey("op", "marker", ""), false},
		{"long key", CheckStateKey("op", "marker", long), false},
		{"value", CheckKVValue("op", "k", "v"), true},
		{"empty value", CheckKVValue("op", "k", ""), false},
		{"long value", CheckKVValue("op", "k", strings.Repeat("v", MaxStateValue+1)), false},
		{"value under a bad key", CheckKVValue("op", "", "v"), false},
		{"lease", CheckLease("op", "k", "h"), true},
		{"empty holder", CheckLease("op", "k", ""), false},
		{"long holder", CheckLease("op", "k", long), false},
		{"lease with a bad key", CheckLease("op", long, "h"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.ok {
				if tt.err != nil {
					t.Fatalf("err = %v, want nil", tt.err)
				}
				return
			}
			if ErrorCode(tt.err) != EINVALID {
				t.Fatalf("err = %v, want EINVALID", tt.err)
			}
		})
	}
}
