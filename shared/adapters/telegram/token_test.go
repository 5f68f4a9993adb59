package telegram

import (
	"regexp"
	"strings"
	"testing"
)

// TestTokenChecksMatchTheirRules: the loops that check the bot token and
// the webhook secret accept exactly what the documented patterns accept
// (the patterns, compiled here, were the implementation until their
// compile time at package init showed up in every cold start).
func TestTokenChecksMatchTheirRules(t *testing.T) {
	botRule := regexp.MustCompile(`^[0-9]{1,20}:[A-Za-z0-9_-]{1,80}$`)
	secretRule := regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)
	inputs := []string{"", ":", "1:", ":a", "1:a", "123456:ABC-def_1", "123456:ABC-def_1\n", " 1:a", "1:a b",
		"12a:abc", "1:a:b", "1::a", "123:äbc", "123:abc!", "123:abc/", "123:abc=", "-1:a", "1.5:a",
		strings.Repeat("9", 20) + ":a", strings.Repeat("9", 21) + ":a",
		"1:" + strings.Repeat("x", 80), "1:" + strings.Repeat("x", 81),
		strings.Repeat("a", 255), strings.Repeat("a", 256), strings.Repeat("a", 257), "a", "_", "-", "a\x00", "AZaz09_-"}
	for _, in := range inputs {
		if got, want := isBotToken(in), botRule.MatchString(in); got != want {
			t.Errorf("isBotToken(%q) = %v, want %v", in, got, want)
		}
		if got, want := isTokenText(in, MaxSecretTokenLength), secretRule.MatchString(in); got != want {
			t.Errorf("isTokenText(%q) = %v, want %v", in, got, want)
		}
		if got, want := ValidateSecretToken(in) == nil, secretRule.MatchString(in); got != want {
			t.Errorf("ValidateSecretToken(%q) accepts = %v, want %v", in, got, want)
		}
	}
}
