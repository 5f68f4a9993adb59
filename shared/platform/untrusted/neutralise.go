package untrusted

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Replacement stands in for the '<' (or lookalike) that opened something
// resembling an untrusted_content tag: a model still reads the text, but no
// parser — and no model told about the nonce — takes it for a tag.
const Replacement = "‹"

// Neutralise returns text with every opening or closing untrusted_content
// tag defused: the '<' that starts it becomes Replacement. It recognises the
// tag case-insensitively, with blanks or invisible characters after the '<'
// and around the '/', with '_', '-', space or nothing between the two words,
// with fullwidth and common lookalike letters, and with the '<' or '/'
// written as an HTML entity (&lt; &#60; &#x3c; &amp;lt;), an escape (\u003c
// \x3c), percent-encoding (%3C) or a lookalike (＜ ﹤ 〈 ⟨ ˂). Invalid UTF-8
// becomes U+FFFD. Neutralise is idempotent; everything else is kept.
func Neutralise(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); {
		n := ltAt(text, i)
		if n == 0 {
			i++
			continue
		}
		if tagNameAt(text, i+n) {
			if last == 0 {
				b.Grow(len(text) + 8)
			}
			b.WriteString(text[last:i])
			b.WriteString(Replacement)
			last = i + n
		}
		i += n
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// Compiled on first use, not at every cold start of every function.
var (
	asciiLT = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\A(?i)(?:&(?:amp;)*(?:lt;?|#0*60;?|#x0*3c;?)|\\+(?:u003c|x3c|u\{3c\})|%(?:25)*3c)`)
	})
	asciiSlash = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\A(?i)(?:&(?:amp;)*(?:sol;|#0*47;?|#x0*2f;?)|\\+(?:/|u002f|x2f)|%(?:25)*2f)`)
	})
)

// window limits the text an escape or entity regexp looks at: regexp's
// backtracker clears memory in proportion to its input, which made long texts
// quadratic. No real escape is this long.
func window(text string, i int) string {
	return text[i:min(len(text), i+64)]
}

// ltAt returns the length of a '<' or '<'-lookalike starting at text[i], or 0.
func ltAt(text string, i int) int {
	switch c := text[i]; {
	case c == '<':
		return 1
	case c == '&' || c == '\\' || c == '%':
		if m := asciiLT().FindStringIndex(window(text, i)); m != nil {
			return m[1]
		}
	case c >= utf8.RuneSelf && utf8.RuneStart(c):
		r, size := utf8.DecodeRuneInString(text[i:])
		switch r {
		case '\uff1c', '\ufe64', '\u3008', '\u2329', '\u27e8', '\u276e', '\u02c2', '\u1438', '\u29fc':
			// ＜ ﹤ 〈 〈 ⟨ ❮ ˂ ᐸ ⧼
			return size
		}
	}
	return 0
}

// slashAt returns the length of a '/' or '/'-lookalike at text[i], or 0.
func slashAt(text string, i int) int {
	if i >= len(text) {
		return 0
	}
	switch c := text[i]; {
	case c == '/':
		return 1
	case c == '&' || c == '\\' || c == '%':
		if m := asciiSlash().FindStringIndex(window(text, i)); m != nil {
			return m[1]
		}
	case c >= utf8.RuneSelf:
		r, size := utf8.DecodeRuneInString(text[i:])
		switch r {
		case '\uff0f', '\u2215', '\u2044', '\u29f8': // ／ ∕ ⁄ ⧸
			return size
		}
	}
	return 0
}

// tagNameAt reports whether text[i:] reads as "[/]untrusted_content" once
// blanks, invisible characters and lookalikes are looked through.
func tagNameAt(text string, i int) bool {
	i = skip(text, i, isBlank)
	if n := slashAt(text, i); n > 0 {
		i = skip(text, i+n, isBlank)
	}
	i, ok := word(text, i, "untrusted")
	if !ok {
		return false
	}
	i = skip(text, i, func(r rune) bool {
		return isBlank(r) || strings.ContainsRune("_-‐‑‒–—―.＿－", r)
	})
	_, ok = word(text, i, "content")
	return ok
}

// word matches the ASCII lower-case word w at text[i:], allowing invisible
// characters between its letters, and returns the index after it.
func word(text string, i int, w string) (int, bool) {
	for k := 0; k < len(w); k++ {
		if k > 0 {
			i = skip(text, i, isInvisible)
		}
		if i >= len(text) {
			return i, false
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if foldLetter(r) != rune(w[k]) {
			return i, false
		}
		i += size
	}
	return i, true
}

func skip(text string, i int, f func(rune) bool) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !f(r) {
			break
		}
		i += size
	}
	return i
}

func isBlank(r rune) bool { return unicode.IsSpace(r) || isInvisible(r) }

// isInvisible covers zero-width and other format characters and combining
// marks, which a model may read straight through.
func isInvisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) || r == '\u034f' || r == '\u115f' || r == '\u3164'
}

// foldLetter maps r to the ASCII lower-case letter it reads as, or to itself.
func foldLetter(r rune) rune {
	switch {
	case 'A' <= r && r <= 'Z':
		return r + ('a' - 'A')
	case 'ａ' <= r && r <= 'ｚ':
		return r - 'ａ' + 'a'
	case 'Ａ' <= r && r <= 'Ｚ':
		return r - 'Ａ' + 'a'
	}
	if l, ok := lookalikes[r]; ok {
		return l
	}
	return unicode.ToLower(r)
}

// lookalikes are common non-Latin letters that render like the letters of
// "untrusted content".
var lookalikes = map[rune]rune{
	'о': 'o', 'ο': 'o', 'օ': 'o', 'О': 'o', 'Ο': 'o',
	'с': 'c', 'ϲ': 'c', 'С': 'c', 'Ϲ': 'c',
	'е': 'e', 'Е': 'e', 'Ε': 'e', 'ҽ': 'e',
	'ѕ': 's', 'Ѕ': 's', 'ſ': 's',
	'ԁ': 'd', 'ɗ': 'd',
	'ո': 'n', 'ռ': 'n', 'Ν': 'n',
	'ս': 'u', 'υ': 'u', 'ᴜ': 'u',
	'т': 't', 'Т': 't', 'Τ': 't', 'τ': 't',
	'г': 'r', 'ᴦ': 'r', 'ꭇ': 'r',
}
