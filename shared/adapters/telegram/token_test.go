package telegram

import (
	"regexp"
	"strings"
	"testing"
)

// TestSecretTokenRule: ValidateSecretToken accepts exactly what the
// documented pattern accepts (the token checks themselves are tested in
// shared/platform/tgtoken; New's use of the bot token check is covered by
// the client's construction tests).
func TestSecretTokenRule(t *testing.T) {
	secretRule := regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)
	inputs := []string{"", ":", "1:", ":a", "1:a", "123456:ABC-def_1", "123456:ABC-def_1\n", " 1:a", "1:a b",
		"12a:abc", "1:a:b", "1::a", "123:äbc", "123:abc!", "123:abc/", "123:abc=", "-1:a", "1.5:a",
		strings.Repeat("9", 20) + ":a", strings.Repeat("9", 21) + ":a",
		"1:" + strings.Repeat("x", 80), "1:" + strings.Repeat("x", 81),
		strings.Repeat("a", 255), strings.Repeat("a", 256), strings.Repeat("a", 257), "a", "_", "-", "a\x00", "AZaz09_-"}
	for _, in := range inputs {
		if got, want := ValidateSecretToken(in) == nil, secretRule.MatchString(in); got != want {
			t.Errorf("ValidateSecretToken(%q) accepts = %v, want %v", in, got, want)
		}
	}
}
