package scrub

import (
	"encoding/base64"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A rule finds one well-known secret shape and returns the spans to mask;
// key names, schemes and vendor prefixes around them stay, so the log still
// says what was there. Rules search for a literal anchor first and run a
// small \A-anchored regexp only where one occurs: unanchored regexps over a
// whole 4 KB log line cost milliseconds per line.
type rule struct {
	name string
	find func(text, lower string) []span
	// anchors, lower case: the rule can only match where one occurs. Empty
	// means always run.
	anchors []string
}

type span struct{ start, end int }

// newRules are the rules, in the order they run, each on the previous one's
// output; earlier rules see the most context (a PEM block before any
// key/value rule cuts into it).
func newRules() []rule {
	return []rule{
		anchored("pem-private-key", anchoredRule{
			anchors: []string{"-----BEGIN "},
			re:      regexp.MustCompile(`\A-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----((?s:.*?))(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`),
			groups:  []int{2},
		}),
		{"url-password", findURLPasswords, []string{"://"}},
		anchored("authorization-header", anchoredRule{
			// Authorization: Bearer x / "Authorization":"Basic x" / map[Authorization:[Basic x]]
			anchors: []string{"authorization"}, fold: true,
			re:     regexp.MustCompile(`\A(?i)authorization\\?["']?[ \t]*[:=][ \t]*\[?[ \t]*\\?["']?[ \t]*(?:(?:bearer|basic|token|digest|negotiate|ntlm|apikey|sso-key|key|aws4-hmac-sha256)[ \t]+)?([^\s"'\\,;\]]+)`),
			groups: []int{1},
		}),
		anchored("basic-credentials", anchoredRule{
			// "Basic <base64>" only when it decodes to user:password, so the
			// word "basic" in prose stays.
			anchors: []string{"basic"}, fold: true, boundary: true,
			re:     regexp.MustCompile(`\A(?i)basic[ \t]+([A-Za-z0-9+/]{6,}={0,2})`),
			groups: []int{1},
			valid:  isBasicCredentials,
		}),
		anchored("bearer-token", anchoredRule{
			anchors: []string{"bearer"}, fold: true, boundary: true,
			re:     regexp.MustCompile(`\A(?i)bearer[ \t]+([A-Za-z0-9._~+/-]+=*)`),
			groups: []int{1},
			valid:  isTokenLike,
		}),
		{"cli-flag", findFlags, nil},
		{"key-value", findKeyValues, nil},
		{"telegram-bot-token", findTelegramTokens, []string{":"}},
		anchored("sk-key", anchoredRule{
			// OpenAI / Anthropic style sk-…, Stripe sk_live_… / rk_test_…
			anchors: []string{"sk-", "sk_", "rk_"}, boundary: true,
			re:     regexp.MustCompile(`\A(?:sk-([A-Za-z0-9_-]{20,})|[sr]k_(?:live|test)_([A-Za-z0-9]{10,}))`),
			groups: []int{1, 2},
		}),
		anchored("github-token", anchoredRule{
			anchors: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, boundary: true,
			re:     regexp.MustCompile(`\A(?:gh[pousr]_([A-Za-z0-9]{20,})|github_pat_([A-Za-z0-9_]{20,}))`),
			groups: []int{1, 2},
		}),
		anchored("slack-token", anchoredRule{
			anchors: []string{"xox"}, boundary: true,
			re:     regexp.MustCompile(`\Axox[abposre]-([A-Za-z0-9-]{8,})`),
			groups: []int{1},
		}),
		anchored("aws-access-key-id", anchoredRule{
			// Long-term (AKIA) and temporary (ASIA) access key ids; the prefix stays.
			anchors: []string{"AKIA", "ASIA"}, boundary: true,
			re:     regexp.MustCompile(`\A(?:AKIA|ASIA)([A-Z0-9]{16})\b`),
			groups: []int{1},
		}),
		anchored("google-api-key", anchoredRule{
			anchors: []string{"AIza"}, boundary: true,
			re:     regexp.MustCompile(`\AAIza[0-9A-Za-z_-]{35}`),
			groups: []int{0},
		}),
		anchored("jwt", anchoredRule{
			anchors: []string{"eyJ"}, boundary: true,
			re:     regexp.MustCompile(`\AeyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`),
			groups: []int{0},
		}),
	}
}

// compiledRules are the rules and their anchors, built on first use: their
// regular expressions compiled at package init cost every function's cold
// start about a quarter of a millisecond, before any text needed scrubbing.
type compiledRules struct {
	rules []rule
	// byByte indexes every rule anchor by its first byte, so one pass
	// over a text tells which rules can match at all.
	byByte [256][]anchorRef
}

var loadRules = sync.OnceValue(func() *compiledRules {
	c := &compiledRules{rules: newRules()}
	for i := range c.rules {
		for _, a := range c.rules[i].anchors {
			c.byByte[a[0]] = append(c.byByte[a[0]], anchorRef{a, i})
		}
	}
	return c
})

type anchorRef struct {
	anchor string
	rule   int
}

// presentRules reports, per rule, whether it has to run on a text: it has
// no anchors or one of them occurs. Masking only inserts '*', which no anchor
// contains, so a rule without anchors in a text finds none after other rules
// rewrote it either.
func presentRules(c *compiledRules, lower string) []bool {
	present := make([]bool, len(c.rules))
	for i := range c.rules {
		present[i] = len(c.rules[i].anchors) == 0
	}
	for i := 0; i < len(lower); i++ {
		for _, ref := range c.byByte[lower[i]] {
			if !present[ref.rule] && strings.HasPrefix(lower[i:], ref.anchor) {
				present[ref.rule] = true
			}
		}
	}
	return present
}

// applyRules runs every rule over text.
func applyRules(text string) (string, bool) {
	c := loadRules()
	lower := asciiLower(text)
	present := presentRules(c, lower)
	changed := false
	for i := range c.rules {
		if !present[i] {
			continue
		}
		spans := c.rules[i].find(text, lower)
		if out, ok := maskSpans(text, spans); ok {
			text, lower, changed = out, asciiLower(out), true
		}
	}
	return text, changed
}

// maskSpans replaces each span (sorted, not overlapping) by Mask, leaving
// empty spans and spans that already read Mask alone.
func maskSpans(text string, spans []span) (string, bool) {
	var b strings.Builder
	last, changed := 0, false
	for _, sp := range spans {
		if sp.start == sp.end || text[sp.start:sp.end] == Mask {
			continue
		}
		if !changed {
			b.Grow(len(text))
			changed = true
		}
		b.WriteString(text[last:sp.start])
		b.WriteString(Mask)
		last = sp.end
	}
	if !changed {
		return text, false
	}
	b.WriteString(text[last:])
	return b.String(), true
}

// anchored makes a rule of r, its anchors lower-cased for presentRules.
func anchored(name string, r anchoredRule) rule {
	var lower []string
	for _, a := range r.anchors {
		lower = append(lower, strings.ToLower(a))
	}
	return rule{name: name, find: r.find, anchors: lower}
}

// anchoredRule runs re (which starts with \A) at every occurrence of an
// anchor and masks the first of groups that took part in the match.
type anchoredRule struct {
	anchors  []string
	fold     bool // anchors are lower case and searched case-insensitively
	boundary bool // an anchor must start a word, like \b
	re       *regexp.Regexp
	groups   []int
	valid    func(secret string) bool // optional check on the masked part
}

func (r anchoredRule) find(text, lower string) []span {
	hay := text
	if r.fold {
		hay = lower
	}
	var starts []int
	for _, a := range r.anchors {
		for from := 0; ; {
			i := strings.Index(hay[from:], a)
			if i < 0 {
				break
			}
			p := from + i
			if !r.boundary || p == 0 || !isWordByte(text[p-1]) {
				starts = append(starts, p)
			}
			from = p + 1
		}
	}
	if len(r.anchors) > 1 {
		slices.Sort(starts)
	}
	var spans []span
	end := 0
	for _, p := range starts {
		if p < end {
			continue // inside the previous match
		}
		m := matchAt(r.re, text, p)
		if m == nil {
			continue
		}
		end = p + m[1]
		for _, g := range r.groups {
			if m[2*g] < 0 {
				continue
			}
			if sec := text[p+m[2*g] : p+m[2*g+1]]; r.valid == nil || r.valid(sec) {
				spans = append(spans, span{p + m[2*g], p + m[2*g+1]})
			}
			break
		}
	}
	return spans
}

// findURLPasswords masks the password in scheme://user:password@host. The
// password runs to the last @ of the authority, so an unescaped @ in it does
// not leak the rest.
func findURLPasswords(text, _ string) []span {
	var spans []span
	for from := 0; ; {
		i := strings.Index(text[from:], "://")
		if i < 0 {
			return spans
		}
		p := from + i
		from = p + 3
		if !hasScheme(text[:p]) {
			continue
		}
		q := p + 3
		end := q
		for end < len(text) && !strings.ContainsRune(" \t\n\f\r/?#\"'<>", rune(text[end])) {
			end++
		}
		at := strings.LastIndexByte(text[q:end], '@')
		if at < 0 {
			continue
		}
		colon := strings.IndexByte(text[q:q+at], ':')
		if colon < 0 {
			continue
		}
		spans = append(spans, span{q + colon + 1, q + at})
		from = end
	}
}

// hasScheme reports whether s ends in a URL scheme: a letter followed by
// letters, digits, '+', '-' or '.'.
func hasScheme(s string) bool {
	letter := false
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letter = true
		case '0' <= c && c <= '9', c == '+', c == '-', c == '.':
		default:
			return letter
		}
	}
	return letter
}

// Key/value secrets: token=…, "password": "…", X-Auth-Token: …, apiKey: ….
// The value shapes after the separator; quoted values keep their quotes.
const (
	dquoted    = `"((?:[^"\\]|\\(?s:.))*)(?:"|\z)` // JSON string; an unterminated one runs to the end
	escquoted  = `\\"(.*?)\\"`                     // JSON string inside a JSON string
	squoted    = `'([^'\r\n]*)'`
	eqValue    = `([^\s"'&,;<>{}\[\]\\]+)`                     // query strings, env lines: up to & or space
	colonValue = `([^\s"'<>{}\[\],;\\][^\r\n"'<>{}\[\],;\\]*)` // YAML, headers: rest of the line
)

var kvValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\A(?:=[ \t]*(?:` + dquoted + `|` + escquoted + `|` + squoted + `|` + eqValue + `)` +
		`|:[ \t]*\[?[ \t]*(?:` + dquoted + `|` + escquoted + `|` + squoted + `|` + colonValue + `))`)
})

// secretKeyEndings end the key names whose values findKeyValues masks,
// compared lower case with '_' and '-' removed. "authToken", "appPassword",
// "webhookSecret" and "aws_secret_access_key" end in one; "tokenizer" and
// "max_tokens" do not.
var secretKeyEndings = []string{
	"token", "passwd", "password", "passphrase", "secret", "apikey",
	"secretkey", "secretaccesskey", "signingkey", "privatekey", "encryptionkey",
}

var keySeparators = strings.NewReplacer("_", "", "-", "")

// findKeyValues anchors on each '=' and ':' and looks back for a secret key.
func findKeyValues(text, lower string) []span {
	var spans []span
	for from := 0; from < len(text); {
		i := strings.IndexAny(text[from:], "=:")
		if i < 0 {
			break
		}
		sep := from + i
		from = sep + 1
		if !secretKeyBefore(lower, sep) {
			continue
		}
		m := matchAt(kvValue(), text, sep)
		if m == nil {
			continue
		}
		from = sep + m[1]
		for g := 1; 2*g < len(m); g++ {
			if m[2*g] < 0 {
				continue
			}
			if notLiteral(text[sep+m[2*g] : sep+m[2*g+1]]) {
				spans = append(spans, span{sep + m[2*g], sep + m[2*g+1]})
			}
			break
		}
	}
	return spans
}

// secretKeyBefore reports whether the key in front of the separator at sep
// (skipping blanks and a closing quote, possibly escaped) names a secret.
func secretKeyBefore(lower string, sep int) bool {
	j := sep
	for j > 0 && (lower[j-1] == ' ' || lower[j-1] == '\t') {
		j--
	}
	if j > 0 && (lower[j-1] == '"' || lower[j-1] == '\'') {
		j--
		if j > 0 && lower[j-1] == '\\' {
			j--
		}
	}
	const maxKey = 128
	k := j
	for k > 0 && j-k < maxKey && isKeyByte(lower[k-1]) {
		k--
	}
	key := lower[k:j]
	if key == "" {
		return false
	}
	for _, w := range []string{"pass", "pwd"} {
		if strings.HasSuffix(key, w) && (len(key) == len(w) || !isWordByte(key[len(key)-len(w)-1])) {
			return true
		}
	}
	switch key[len(key)-1] {
	case 'n', 'd', 'e', 't', 'y': // cheap filter: the last letters of secretKeyEndings
	default:
		return false
	}
	norm := keySeparators.Replace(key)
	for _, e := range secretKeyEndings {
		if strings.HasSuffix(norm, e) {
			return true
		}
	}
	return false
}

var flagValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\A(?i)--?[a-z0-9-]*?(?:token|password|passwd|secret|api-?key)[ \t]+([^\s"'-][^\s"']*)`)
})

// findFlags masks command-line flags with a separate value: --password xyz.
// (--password=xyz is a key/value pair.)
func findFlags(text, lower string) []span {
	var spans []span
	for from := 0; ; {
		i := strings.IndexByte(text[from:], '-')
		if i < 0 {
			return spans
		}
		p := from + i
		from = p + 1
		if p > 0 && !strings.ContainsRune(" \t\n\f\r\"'", rune(text[p-1])) {
			continue
		}
		if !secretFlagAt(lower, p) {
			continue
		}
		if m := matchAt(flagValue(), text, p); m != nil {
			spans = append(spans, span{p + m[2], p + m[3]})
			from = p + m[1]
		}
	}
}

// secretFlagAt is a cheap pre-check for flagValue: the flag name at p ends
// in a secret word.
func secretFlagAt(lower string, p int) bool {
	j := p
	for j < len(lower) && lower[j] == '-' {
		j++
	}
	k := j
	for k < len(lower) && (isWordByte(lower[k]) || lower[k] == '-') {
		k++
	}
	name := lower[j:k]
	for _, w := range []string{"token", "password", "passwd", "secret", "apikey", "api-key"} {
		if strings.HasSuffix(name, w) {
			return true
		}
	}
	return false
}

// matchAt runs re, which starts with \A, at text[p:]. It tries a window
// first: regexp's backtracker clears memory in proportion to its input, which
// made long texts quadratic. Only a match that fails or reaches the window's
// end (it may continue, or \z matched there) is retried on the whole rest.
func matchAt(re *regexp.Regexp, text string, p int) []int {
	const window = 512
	if len(text)-p > window {
		if m := re.FindStringSubmatchIndex(text[p : p+window]); m != nil && m[1] < window {
			return m
		}
	}
	return re.FindStringSubmatchIndex(text[p:])
}

// findTelegramTokens masks Telegram bot tokens, <bot id>:<35 characters>,
// keeping the bot id.
func findTelegramTokens(text, _ string) []span {
	var spans []span
	for from := 0; ; {
		i := strings.IndexByte(text[from:], ':')
		if i < 0 {
			return spans
		}
		p := from + i
		from = p + 1
		digits := 0
		for digits < p && digits < 6 && isDigit(text[p-1-digits]) {
			digits++
		}
		if digits < 6 {
			continue
		}
		n := 0
		for p+1+n < len(text) && isTokenByte(text[p+1+n]) {
			n++
		}
		if n >= 30 && n <= 50 {
			spans = append(spans, span{p + 1, p + 1 + n})
			from = p + 1 + n
		}
	}
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

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWordByte(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

func isKeyByte(c byte) bool { return isWordByte(c) || c == '.' || c == '-' }

func isTokenByte(c byte) bool { return isWordByte(c) || c == '-' }

// asciiLower lower-cases ASCII letters only, so byte offsets stay valid.
func asciiLower(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' })
	if i < 0 {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}
