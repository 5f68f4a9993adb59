package tgtoken

import (
	"regexp"
	"strings"
	"testing"
)

// TestChecksMatchTheirRules: the loops that check the bot token and the
// webhook secret accept exactly what the documented patterns accept (the
// patterns, compiled here, were the implementation until their compile time
// at package init showed up in every cold start).
func TestChecksMatchTheirRules(t *testing.T) {
	botRule := regexp.MustCompile(`^[0-9]{1,20}:[A-Za-z0-9_-]{1,80}$`)
	secretRule := regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)
	inputs := []string{"", ":", "1:", ":a", "1:a", "123456:ABC-def_1", "123456:ABC-def_1\n", " 1:a", "1:a b",
		"12a:abc", "1:a:b", "1::a", "123:äbc", "123:abc!", "123:abc/", "123:abc=", "-1:a", "1.5:a",
		strings.Repeat("9", 20) + ":a", strings.Repeat("9", 21) + ":a",
		"1:" + strings.Repeat("x", 80), "1:" + strings.Repeat("x", 81), "1:-", "0:_",
		strings.Repeat("a", 255), strings.Repeat("a", 256), strings.Repeat("a", 257), "a", "_", "-", "a\x00", "AZaz09_-",
		"a b", "a\n", "ä", "a=", "a/", "a.b", "\x00", strings.Repeat("9", 20)}
	for _, in := range inputs {
		if got, want := IsBotToken(in), botRule.MatchString(in); got != want {
			t.Errorf("IsBotToken(%q) = %v, want %v", in, got, want)
		}
		if got, want := IsSecret(in), secretRule.MatchString(in); got != want {
			t.Errorf("IsSecret(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestSecretMatches(t *testing.T) {
	tests := []struct {
		got, want string
		ok        bool
	}{
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"", "abc", false},
		{"abc", "", false},
		{"", "", false},
		{"abcd", "abc", false},
	}
	for _, tt := range tests {
		if got := SecretMatches(tt.got, tt.want); got != tt.ok {
			t.Errorf("SecretMatches(%q, %q) = %v, want %v", tt.got, tt.want, got, tt.ok)
		}
	}
}
