package scrub

import (
	"encoding/base64"
	"regexp"
	"strings"
)

// rule is one well-known secret shape. The first of groups that took part in
// a match is replaced by Mask; the rest of the match (key names, schemes,
// vendor prefixes) is kept so the log still says what was there.
type rule struct {
	name   string
	hints  []string // lower-case substrings; the regexp runs only if one occurs
	re     *regexp.Regexp
	groups []int
	valid  func(secret string) bool // optional extra check on the masked part
}

// secretWords ends the key names whose values are masked in key/value text
// (token=…, "password": "…", X-Auth-Token: …). A key matches when it ends in
// one of them, so "authToken", "appPassword", "webhookSecret" and
// "aws_secret_access_key" match and "tokenizer" or "max_tokens" do not.
const secretWords = `token|passwd|password|passphrase|secret|api[_-]?key|secret[_-]?(?:access[_-]?)?key|signing[_-]?key|private[_-]?key|encryption[_-]?key`

// Value shapes after a key/value separator. Quoted values keep their quotes.
const (
	dquoted    = `"((?:[^"\\]|\\(?s:.))*)(?:"|\z)` // JSON string; an unterminated one runs to the end
	escquoted  = `\\"(.*?)\\"`                     // JSON string inside a JSON string
	squoted    = `'([^'\r\n]*)'`
	eqValue    = `([^\s"'&,;<>{}\[\]\\]+)`                           // query strings, env lines: up to & or space
	colonValue = `([^\s"'<>{}\[\],;\\][^\r\n"'<>{}\[\],;\\]*)` // YAML, headers: rest of the line
)

var kvPattern = `(?i)\b(?:[a-z0-9_.-]*?(?:` + secretWords + `)|pass|pwd)(?:\\?["'])?[ \t]*` +
	`(?:=[ \t]*(?:` + dquoted + `|` + escquoted + `|` + squoted + `|` + eqValue + `)` +
	`|:[ \t]*\[?[ \t]*(?:` + dquoted + `|` + escquoted + `|` + squoted + `|` + colonValue + `))`

var kvHints = []string{"token", "pass", "secret", "key", "pwd"}

// rules run in this order; earlier rules see the most context (a PEM block
// before any key/value rule cuts into it).
var rules = []rule{
	{
		name:   "pem-private-key",
		hints:  []string{"private key"},
		re:     regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----((?s:.*?))(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`),
		groups: []int{2},
	},
	{
		// scheme://user:pass@host → scheme://user:***@host. The password
		// runs to the last @ of the authority, so an unescaped @ in it does
		// not leak the rest.
		name:   "url-password",
		hints:  []string{"://"},
		re:     regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:"'<>]*:([^\s/?#"'<>]+)@`),
		groups: []int{1},
	},
	{
		// Authorization: Bearer x / "Authorization":"Basic x" / map[Authorization:[Basic x]]
		name:   "authorization-header",
		hints:  []string{"authorization"},
		re:     regexp.MustCompile(`(?i)authorization\\?["']?[ \t]*[:=][ \t]*\[?[ \t]*\\?["']?[ \t]*(?:(?:bearer|basic|token|digest|negotiate|ntlm|apikey|sso-key|key|aws4-hmac-sha256)[ \t]+)?([^\s"'\\,;\]]+)`),
		groups: []int{1},
	},
	{
		// "Basic <base64>" only when it decodes to user:password, so the
		// word "basic" in prose stays.
		name:   "basic-credentials",
		hints:  []string{"basic"},
		re:     regexp.MustCompile(`(?i)\bbasic[ \t]+([A-Za-z0-9+/]{6,}={0,2})`),
		groups: []int{1},
		valid:  isBasicCredentials,
	},
	{
		name:   "bearer-token",
		hints:  []string{"bearer"},
		re:     regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9._~+/-]+=*)`),
		groups: []int{1},
		valid:  isTokenLike,
	},
	{
		// --password xyz, -token xyz (the = form is a key/value pair)
		name:   "cli-flag",
		hints:  kvHints,
		re:     regexp.MustCompile(`(?i)(?:^|[\s"'])--?[a-z0-9-]*?(?:token|password|passwd|secret|api-?key)[ \t]+([^\s"'-][^\s"']*)`),
		groups: []int{1},
	},
	{
		name:   "key-value",
		hints:  kvHints,
		re:     regexp.MustCompile(kvPattern),
		groups: []int{1, 2, 3, 4, 5, 6, 7, 8},
		valid:  notLiteral,
	},
	{
		// Telegram bot token: <bot id>:<35 chars>; the bot id stays.
		name:   "telegram-bot-token",
		hints:  []string{":"},
		re:     regexp.MustCompile(`\d{6,12}:([A-Za-z0-9_-]{30,50})`),
		groups: []int{1},
	},
	{
		// OpenAI / Anthropic style sk-…, Stripe sk_live_… / rk_test_…
		name:   "sk-key",
		hints:  []string{"sk-", "sk_", "rk_"},
		re:     regexp.MustCompile(`\b(?:sk-([A-Za-z0-9_-]{20,})|[sr]k_(?:live|test)_([A-Za-z0-9]{10,}))`),
		groups: []int{1, 2},
	},
	{
		name:   "github-token",
		hints:  []string{"gh", "github_pat_"},
		re:     regexp.MustCompile(`\b(?:gh[pousr]_([A-Za-z0-9]{20,})|github_pat_([A-Za-z0-9_]{20,}))`),
		groups: []int{1, 2},
	},
	{
		name:   "slack-token",
		hints:  []string{"xox"},
		re:     regexp.MustCompile(`\bxox[abposre]-([A-Za-z0-9-]{8,})`),
		groups: []int{1},
	},
	{
		// AWS access key ids (long-term AKIA, temporary ASIA); the prefix stays.
		name:   "aws-access-key-id",
		hints:  []string{"akia", "asia"},
		re:     regexp.MustCompile(`\b(?:AKIA|ASIA)([A-Z0-9]{16})\b`),
		groups: []int{1},
	},
	{
		name:   "google-api-key",
		hints:  []string{"aiza"},
		re:     regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`),
		groups: []int{0},
	},
	{
		name:   "jwt",
		hints:  []string{"eyj"},
		re:     regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`),
		groups: []int{0},
	},
}

// applyRules runs every rule whose hint occurs in text.
func applyRules(text string) (string, bool) {
	// Masking only ever inserts Mask, and no hint contains '*', so hints
	// found here stay valid while the rules below rewrite text.
	lower := strings.ToLower(text)
	changed := false
	for i := range rules {
		r := &rules[i]
		if !r.hinted(lower) {
			continue
		}
		if out, ok := r.apply(text); ok {
			text, changed = out, true
		}
	}
	return text, changed
}

func (r *rule) hinted(lower string) bool {
	for _, h := range r.hints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return false
}

func (r *rule) apply(text string) (string, bool) {
	matches := r.re.FindAllStringSubmatchIndex(text, -1)
	if matches == nil {
		return text, false
	}
	var b strings.Builder
	last, changed := 0, false
	for _, m := range matches {
		for _, g := range r.groups {
			start, end := m[2*g], m[2*g+1]
			if start < 0 {
				continue
			}
			sec := text[start:end]
			if sec == "" || sec == Mask || (r.valid != nil && !r.valid(sec)) {
				break
			}
			if !changed {
				b.Grow(len(text))
				changed = true
			}
			b.WriteString(text[last:start])
			b.WriteString(Mask)
			last = end
			break
		}
	}
	if !changed {
		return text, false
	}
	b.WriteString(text[last:])
	return b.String(), true
}

// isTokenLike tells a bearer token from prose ("bearer of bad news"): at least
// eight characters and either a non-letter in it or twenty letters.
func isTokenLike(s string) bool {
	if len(s) < 8 {
		return false
	}
	if len(s) >= 20 {
		return true
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z')
	}) >= 0
}

// isBasicCredentials reports whether s is base64 of "user:password".
func isBasicCredentials(s string) bool {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return strings.IndexByte(string(b), ':') >= 0
		}
	}
	return false
}

// notLiteral keeps JSON literals after a secret-looking key (token: null,
// "hasPassword": true) so they do not turn into masks.
func notLiteral(s string) bool {
	switch strings.TrimSpace(s) {
	case "null", "true", "false", "":
		return false
	}
	return true
}
