package switchboard

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidFunctionNameMatchesTheProvidersRule: the loop accepts exactly the names the
// providers' rule accepts.
func TestValidFunctionNameMatchesTheProvidersRule(t *testing.T) {
	rule := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	for _, in := range []string{"", "a", "Nextcloud__read_file", "a.b", "a b", "ä", "a\n", "a__b-C9",
		strings.Repeat("x", 63), strings.Repeat("x", 64), strings.Repeat("x", 65)} {
		if got, want := validFunctionName(in), rule.MatchString(in); got != want {
			t.Errorf("validFunctionName(%q) = %v, want %v", in, got, want)
		}
	}
}
