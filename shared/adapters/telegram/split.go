package telegram

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SplitText cuts text into parts of at most limit characters (runes) each,
// for SendLong. It prefers, in this order, a paragraph break (a blank line)
// in the second half of the window, a line break in the second half, the
// last space anywhere in the window, and only then a hard cut: a word is
// cut only when it is longer than a whole part. Whitespace at the cuts is
// dropped, as Telegram trims it from every message anyway; parts are never
// empty. A text that fits (after trimming) comes back as one part; an empty
// one as none. limit < 1 means MaxTextLength.
//
// With parseMode HTML no cut falls inside a tag or an entity (&amp;), and
// cuts where no element is open are preferred; with MarkdownV2 no cut
// separates a backslash from the character it escapes. A cut never
// separates a character from a following combining mark, variation
// selector or zero-width joiner. Markup that still spans a cut (one element
// longer than a part) is refused by Telegram with "can't parse entities";
// send such texts without a parse mode.
//
// Invalid UTF-8 bytes come out as U+FFFD; SendMessage refuses such text.
func SplitText(text string, limit int, parseMode string) []string {
	if limit < 1 {
		limit = MaxTextLength
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	if utf8.RuneCountInString(text) <= limit {
		return []string{text}
	}
	rs := []rune(text)
	noCut, nested := cutRules(rs, parseMode)
	// ok reports whether a cut before rs[i] is allowed; free also asks that
	// no HTML element is open there.
	ok := func(i int) bool { return i > 0 && i < len(rs) && !noCut[i] }
	free := func(i int) bool { return ok(i) && !nested[i] }

	var parts []string
	start := 0
	for len(rs)-start > limit {
		end := start + limit // the window is rs[start:end]; rs[end] exists
		half := start + limit/2
		cut := -1
		// 1. a blank line: cut between its two newlines.
		for i := end; i > half && cut < 0; i-- {
			if rs[i] == '\n' && rs[i-1] == '\n' && free(i) {
				cut = i
			}
		}
		// 2. a line break.
		for i := end; i > half && cut < 0; i-- {
			if rs[i] == '\n' && free(i) {
				cut = i
			}
		}
		// 3. a space, preferably outside elements.
		for _, allowed := range []func(int) bool{free, ok} {
			for i := end; i > start && cut < 0; i-- {
				if unicode.IsSpace(rs[i]) && allowed(i) {
					cut = i
				}
			}
		}
		// 4. a hard cut, as late as the rules allow.
		for i := end; i > start && cut < 0; i-- {
			if ok(i) {
				cut = i
			}
		}
		if cut < 0 {
			cut = end // nothing allowed in the whole window: cut anyway
		}
		part := strings.TrimRightFunc(string(rs[start:cut]), unicode.IsSpace)
		if part != "" {
			parts = append(parts, part)
		}
		start = cut
		for start < len(rs) && unicode.IsSpace(rs[start]) {
			start++
		}
	}
	if start < len(rs) {
		parts = append(parts, string(rs[start:]))
	}
	return parts
}

// cutRules marks, for each rune index i, whether a cut before rs[i] is
// forbidden (noCut) and whether an HTML element is open there (nested).
func cutRules(rs []rune, parseMode string) (noCut, nested []bool) {
	noCut = make([]bool, len(rs)+1)
	nested = make([]bool, len(rs)+1)
	for i := 1; i < len(rs); i++ {
		if joins(rs[i-1], rs[i]) {
			noCut[i] = true
		}
	}
	switch strings.ToLower(parseMode) {
	case "html":
		depth := 0
		for i := 0; i < len(rs); i++ {
			nested[i] = nested[i] || depth > 0
			switch rs[i] {
			case '<':
				j := i + 1
				for j < len(rs) && rs[j] != '>' {
					j++
				}
				if j == len(rs) {
					continue // a lone "<": Telegram refuses it anyway
				}
				for k := i + 1; k <= j; k++ {
					noCut[k] = true
					nested[k] = true
				}
				tag := string(rs[i+1 : j])
				switch {
				case strings.HasPrefix(tag, "/"):
					if depth > 0 {
						depth--
					}
				case strings.HasSuffix(tag, "/"):
				default:
					depth++
				}
				i = j
			case '&':
				j := i + 1
				for j < len(rs) && j-i <= 10 && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || rs[j] == '#') {
					j++
				}
				if j < len(rs) && rs[j] == ';' {
					for k := i + 1; k <= j; k++ {
						noCut[k] = true
					}
					i = j
				}
			}
		}
	case "markdownv2", "markdown":
		for i := 0; i+1 < len(rs); i++ {
			if rs[i] == '\\' {
				noCut[i+1] = true
				i++ // the escaped character is taken
			}
		}
	}
	return noCut, nested
}

// joins reports whether b belongs to the character before it: combining
// marks, variation selectors, emoji modifiers and zero-width joiners.
func joins(a, b rune) bool {
	if b < 0x300 && a < 0x80 { // no mark below U+0300; ASCII joins only CR LF
		return a == '\r' && b == '\n'
	}
	switch {
	case a == '\u200d' || b == '\u200d':
		return true
	case unicode.Is(unicode.Mn, b) || unicode.Is(unicode.Me, b) || unicode.Is(unicode.Mc, b):
		return true
	case b >= 0xFE00 && b <= 0xFE0F: // variation selectors
		return true
	case b >= 0x1F3FB && b <= 0x1F3FF: // skin tones
		return true
	case b >= 0xE0020 && b <= 0xE007F: // tag characters (flags)
		return true
	case a == '\r' && b == '\n':
		return true
	}
	return false
}
