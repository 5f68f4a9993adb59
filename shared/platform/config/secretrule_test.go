package config

import (
	"regexp"
	"strings"
	"testing"
)

// TestWebhookSecretRule: the loop accepts exactly what the documented rule
// (setWebhook's secret_token) accepts.
func TestWebhookSecretRule(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)
	for _, in := range []string{"", "a", "AZaz09_-", "a b", "a\n", "ä", "a=", "a/", "a.b", "\x00",
		strings.Repeat("x", 255), strings.Repeat("x", 256), strings.Repeat("x", 257)} {
		if got, want := isWebhookSecret(in), rule.MatchString(in); got != want {
			t.Errorf("isWebhookSecret(%q) = %v, want %v", in, got, want)
		}
	}
}
