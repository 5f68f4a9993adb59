// Package tgtoken checks the shape of the two secrets Telegram's Bot API
// deals in: the bot token @BotFather issues and the secret_token a webhook
// is set with. The Telegram client and the configuration check share it so
// that both accept exactly the same values; the webhook receiver compares a
// delivery's secret with SecretMatches.
//
// The checks are loops, not regular expressions: a bounded repetition such
// as {1,256} compiles into one instruction per repetition, and every
// function that links a package with such a pattern pays for it at each
// cold start (about 0.5 ms and thousands of allocations).
package tgtoken

import (
	"crypto/subtle"
	"strings"
)

// MaxSecretLength is the most characters setWebhook accepts as
// secret_token.
const MaxSecretLength = 256

// maxBotIDDigits and maxBotSecret bound the two parts of a bot token.
const (
	maxBotIDDigits = 20
	maxBotSecret   = 80
)

// IsBotToken tells whether t is <bot id>:<secret> as @BotFather issues it:
// 1–20 digits, a colon, 1–80 characters of A-Z, a-z, 0-9, _ and -.
func IsBotToken(t string) bool {
	id, secret, ok := strings.Cut(t, ":")
	if !ok || len(id) < 1 || len(id) > maxBotIDDigits {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return isText(secret, maxBotSecret)
}

// IsSecret tells whether s is what setWebhook accepts as secret_token:
// 1–256 characters of A-Z, a-z, 0-9, _ and -.
func IsSecret(s string) bool {
	return isText(s, MaxSecretLength)
}

// SecretMatches reports, in constant time, whether the secret a webhook
// request carried is want. An empty want never matches: a receiver without
// a configured secret must not accept anything as authenticated.
func SecretMatches(got, want string) bool {
	if want == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// isText tells whether s is 1–max characters of A-Z, a-z, 0-9, _ and -.
func isText(s string, max int) bool {
	if len(s) < 1 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
