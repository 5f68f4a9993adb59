package scrub

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Mask replaces every secret the Scrubber finds.
const Mask = "***"

// MinSecretLen is the shortest configured secret (in runes) that is masked;
// shorter values would mask every "a" and "1" in a log.
const MinSecretLen = 4

// maxPasses bounds the rule/secret fixed-point loop in String; real input
// settles in one or two passes and the fuzzer has found none needing more
// than three.
const maxPasses = 8

// Scrubber masks configured secret values and well-known secret patterns. It
// is safe for concurrent use. A nil *Scrubber masks the patterns only.
type Scrubber struct {
	given   []string // the values New got, for With
	secrets []string // distinct, longest first, each at least MinSecretLen runes
	star    bool     // some secret contains '*', so a mask can help form one
}

// New builds a Scrubber for the given secret values. Empty values and values
// shorter than MinSecretLen runes are ignored. Each secret is also matched
// with surrounding whitespace trimmed and in its JSON- and URL-escaped forms,
// so it is found inside raw JSON text and query strings too.
func New(secrets []string) *Scrubber {
	seen := make(map[string]bool)
	var list []string
	for _, sec := range secrets {
		for _, v := range variants(sec) {
			if utf8.RuneCountInString(v) < MinSecretLen || seen[v] {
				continue
			}
			seen[v] = true
			list = append(list, v)
		}
	}
	slices.SortFunc(list, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	star := slices.ContainsFunc(list, func(v string) bool { return strings.Contains(v, "*") })
	return &Scrubber{given: slices.Clone(secrets), secrets: list, star: star}
}

// String returns text with every configured secret and every known secret
// pattern replaced by Mask. The result never contains a configured secret.
// String masks until nothing changes, so String(String(text)) equals
// String(text) (only input built to outlast maxPasses could break that).
//
// String treats text as text. A JSON document stays valid in most cases, but
// use JSON for JSON: it also masks values of secret-looking keys of any type
// and always keeps the document valid.
func (s *Scrubber) String(text string) string {
	// Rules and secret masking can feed each other ("token=" + secret), so
	// both run until nothing changes; every masking pass either shortens the
	// text or leaves it stable, so this settles quickly. Configured secrets
	// go first: a fixed-length pattern (AIza + 35) ending inside a secret
	// would mask its head and leave the rest no longer recognisable.
	for range maxPasses {
		next, masked := s.maskSecrets(text)
		next, ruled := applyRules(next)
		if !ruled && !masked {
			return text
		}
		text = next
	}
	text, _ = s.maskSecrets(text)
	return text
}

// Bytes is String for byte slices. When nothing needs masking it returns b
// itself, so the result may share memory with b.
func (s *Scrubber) Bytes(b []byte) []byte {
	in := string(b)
	out := s.String(in)
	if out == in {
		return b
	}
	return []byte(out)
}

// runeSpan widens [start, end) to whole UTF-8 sequences, so masking a
// secret that begins or ends inside a multi-byte character (a secret that is
// not itself valid UTF-8) cannot leave broken text behind.
func runeSpan(text string, start, end int) [2]int {
	for k := 0; k < utf8.UTFMax-1 && start > 0 && !utf8.RuneStart(text[start]); k++ {
		start--
	}
	for k := 0; k < utf8.UTFMax-1 && end < len(text) && !utf8.RuneStart(text[end]); k++ {
		end++
	}
	return [2]int{start, end}
}

func (s *Scrubber) containsSecret(text string) bool {
	if s == nil {
		return false
	}
	for _, sec := range s.secrets {
		if strings.Contains(text, sec) {
			return true
		}
	}
	return false
}

// maskSecrets masks every occurrence of every configured secret. Overlapping
// occurrences (of one secret or of two) are merged into one masked span, so no
// fragment of either survives; this is why it finds all spans first instead of
// using a strings.Replacer, which would leave the tail of an overlapped
// secret. A new occurrence after masking has to overlap a Mask, so only when
// a secret contains '*' it repeats until no secret occurs; each round
// shortens the text (a secret is longer than Mask), so the loop ends.
func (s *Scrubber) maskSecrets(text string) (string, bool) {
	if s == nil || len(s.secrets) == 0 {
		return text, false
	}
	changed := false
	for {
		var spans [][2]int
		for _, sec := range s.secrets {
			for i := 0; i+len(sec) <= len(text); {
				j := strings.Index(text[i:], sec)
				if j < 0 {
					break
				}
				spans = append(spans, runeSpan(text, i+j, i+j+len(sec)))
				i += j + 1
			}
		}
		if len(spans) == 0 {
			return text, changed
		}
		changed = true
		slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
		var b strings.Builder
		b.Grow(len(text))
		last := 0
		for k := 0; k < len(spans); {
			start, end := spans[k][0], spans[k][1]
			for k++; k < len(spans) && spans[k][0] <= end; k++ {
				end = max(end, spans[k][1])
			}
			b.WriteString(text[last:start])
			b.WriteString(Mask)
			last = end
		}
		b.WriteString(text[last:])
		text = b.String()
		if !s.star {
			return text, true
		}
	}
}
