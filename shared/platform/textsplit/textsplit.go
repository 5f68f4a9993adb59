// Package textsplit cuts a long answer into messages a chat server accepts:
// at paragraph, then line, then sentence, then word boundaries, and only as
// a last resort inside a word (never inside a UTF-8 sequence, and not inside
// a user-perceived character where that can be avoided). Markdown fenced
// code blocks are never cut open: a part that ends inside one closes it, and
// the next part reopens it with the same info string, the overhead counted.
//
// Lengths are counted the way the servers count them, in UTF-16 code units
// (Len): Rocket.Chat compares the JavaScript string length of a message's
// text with Message_MaxAllowedSize (default 5,000) and refuses a longer one
// with error-message-size-exceeded; Telegram's sendMessage takes 1–4,096
// characters of text after entity parsing, and Telegram measures text in
// UTF-16 code units (entity offsets and lengths are UTF-16). A UTF-16 count
// is never smaller than a count of code points, so it is safe whichever a
// server means by "character".
package textsplit

import (
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits of the servers, in UTF-16 code units.
const (
	RocketChatLimit = 5000 // Message_MaxAllowedSize's default; a server may set another
	TelegramLimit   = 4096 // sendMessage text
)

// DefaultMaxParts is how many messages an answer may take before it goes as
// a file instead (see ShouldAttach).
const DefaultMaxParts = 4

// Len counts s in UTF-16 code units, as a JavaScript string's length does:
// one per code point below U+10000, two above (most emoji). Invalid UTF-8
// bytes count one each (each becomes U+FFFD).
func Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// fits reports whether Len(s) <= limit, reading no further than needed.
func fits(s string, limit int) bool {
	if len(s) <= limit {
		return true // a UTF-16 unit takes at least one byte
	}
	n := 0
	for _, r := range s {
		if n += utf16.RuneLen(r); n > limit {
			return false
		}
	}
	return true
}

// Split cuts text into parts of at most limit UTF-16 code units each, in
// order. Joined back, the parts are text again except for the fences added
// to close and reopen a code block at a cut and the whitespace at each cut
// (dropped). Text that fits is returned as its only part; empty or
// whitespace-only text gives none. A limit below 1 is treated as no limit. When limit is too small to
// hold even one character (an emoji at limit 1), that character gets a part
// of its own anyway.
func Split(text string, limit int) []string {
	pieces := split(text, limit)
	parts := make([]string, len(pieces))
	for i, p := range pieces {
		parts[i] = p.reopen + text[p.start:p.end] + p.close
	}
	return parts
}

// ShouldAttach reports whether an answer cut into parts is better sent as a
// file than as messages: more than maxParts messages flood a room (maxParts
// below 1 means DefaultMaxParts).
func ShouldAttach(parts []string, maxParts int) bool {
	if maxParts < 1 {
		maxParts = DefaultMaxParts
	}
	return len(parts) > maxParts
}

// FirstParagraph returns the text's first paragraph, to go as the message
// beside the answer sent as a file: the first block up to a blank line
// outside code, with the next block added when the first is only a heading.
// Longer than limit, it is cut like Split's first part and ends with "…".
func FirstParagraph(text string, limit int) string {
	text = strings.TrimLeft(text, " \t\r\n")
	fences := findFences(text)
	end := paragraphEnd(text, 0, fences)
	if heading(text[:end]) && end < len(text) {
		next := end + len(text[end:]) - len(strings.TrimLeft(text[end:], " \t\r\n"))
		if next < len(text) {
			end = paragraphEnd(text, next, fences)
		}
	}
	first := strings.TrimRight(text[:end], " \t\r\n")
	if limit < 1 || Len(first) <= limit {
		return first
	}
	const more = "…"
	if limit <= Len(more) {
		return Split(first, limit)[0]
	}
	return Split(first, limit-Len(more))[0] + more
}

// paragraphEnd is the byte index of the first blank line at or after from
// that is not inside a code block, or len(text).
func paragraphEnd(text string, from int, fences []fence) int {
	for i := from; i < len(text); i++ {
		if text[i] == '\n' && i > from && blankLineFollows(text, i) && fenceAt(fences, i) == nil {
			return i
		}
	}
	return len(text)
}

func heading(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "#") && !strings.Contains(s, "\n")
}

// piece is one part: text[start:end] with fences added around it.
type piece struct {
	start, end    int
	reopen, close string
}

// Boundary levels, best first.
const (
	levelParagraph = iota
	levelLine
	levelSentence
	levelWord
	levelGrapheme
	levelRune
)

// split does the work of Split in byte offsets, so that tests can check
// exactly what was dropped between parts.
func split(text string, limit int) []piece {
	if strings.TrimSpace(text) == "" {
		return nil // nothing to post; servers refuse empty messages
	}
	if limit < 1 || fits(text, limit) {
		return []piece{{start: 0, end: len(text)}}
	}
	fences := findFences(text)
	var out []piece
	var units []int // reused by every cut
	start := skipSpace(text, 0, fences)
	for start < len(text) {
		p := piece{start: start}
		if f := fenceAt(fences, start); f != nil && start >= f.markerEnd && f.repairable(limit) {
			p.reopen = f.open + "\n"
		}
		budget := limit - Len(p.reopen)
		if fits(text[start:], budget) {
			p.end = len(text)
			out = append(out, p)
			break
		}
		p.end, p.close = cut(text, start, budget, limit, fences, &units)
		out = append(out, p)
		start = skipSpace(text, p.end, fences)
	}
	return out
}

// cut picks where the part starting at start ends: the best boundary whose
// piece (trailing whitespace dropped) plus a closing fence, when the piece
// ends inside a code block, fits in budget units (what limit leaves after
// a reopened fence). It returns the piece's end and the closing fence to
// add.
func cut(text string, start, budget, limit int, fences []fence, buf *[]int) (int, string) {
	// units[i] is the UTF-16 length of text[start:start+i] where i is a
	// rune start (-1 inside a rune); hard is the longest prefix that fits
	// without a closing fence.
	units := (*buf)[:0]
	defer func() { *buf = units }()
	hard, n := 0, 0
	for i, r := range text[start:] {
		for len(units) < i {
			units = append(units, -1)
		}
		units = append(units, n)
		n += utf16.RuneLen(r)
		if n > budget {
			break
		}
		_, size := utf8.DecodeRuneInString(text[start+i:]) // 1 for an invalid byte, unlike RuneLen(RuneError)
		hard = i + size
	}
	for len(units) <= hard {
		units = append(units, -1)
	}
	units[hard] = Len(text[start : start+hard])
	length := func(end int) int {
		if u := units[end-start]; u >= 0 {
			return u
		}
		return Len(text[start:end])
	}

	type found struct {
		end    int
		close  string
		filled int
	}
	best := func(level int) (found, bool) {
		for c := hard; c > 0; c-- {
			if units[c] < 0 || !isBoundary(text, start, start+c, level) {
				continue
			}
			end := start + len(strings.TrimRight(text[start:start+c], " \t\r\n"))
			if end <= start || inMarker(fences, end) || startsFalseFence(text, skipSpace(text, start+c, fences)) {
				continue
			}
			close := closingFence(fences, end, len(text), limit)
			if u := length(end) + Len(close); u <= budget {
				return found{end, close, u}, true
			}
		}
		return found{}, false
	}
	// A boundary of a better kind wins if it fills at least half the part;
	// otherwise the best boundary of any kind down to words, then
	// characters. Inside code a line break always beats a space.
	var cands [levelWord + 1]*found
	for level := levelParagraph; level <= levelWord; level++ {
		if f, ok := best(level); ok {
			if f.filled*2 >= budget && (level < levelWord || f.close == "" || cands[levelLine] == nil) {
				return f.end, f.close
			}
			cands[level] = &f
		}
	}
	for _, f := range cands {
		if f != nil {
			return f.end, f.close
		}
	}
	for _, level := range []int{levelGrapheme, levelRune} {
		if f, ok := best(level); ok {
			return f.end, f.close
		}
	}
	// Not even one character fits (limit 1 and an emoji, or the closing
	// fence leaves no room): one character, without fence repair.
	_, size := utf8.DecodeRuneInString(text[start:])
	return start + size, ""
}

// isBoundary reports whether the text may be cut at byte c (the piece ends
// before c, a rune start) at the given level.
func isBoundary(text string, start, c, level int) bool {
	if c >= len(text) {
		return true
	}
	switch level {
	case levelParagraph:
		return text[c] == '\n' && blankLineFollows(text, c)
	case levelLine:
		return text[c] == '\n'
	case levelSentence:
		return sentenceEnds(text[start:c], text[c:])
	case levelWord:
		if text[c] == ' ' || text[c] == '\t' || text[c] == '\n' {
			return true
		}
		before, _ := utf8.DecodeLastRuneInString(text[start:c])
		after, _ := utf8.DecodeRuneInString(text[c:])
		return wideScript(before) && wideScript(after)
	case levelGrapheme:
		before, _ := utf8.DecodeLastRuneInString(text[start:c])
		after, _ := utf8.DecodeRuneInString(text[c:])
		return !joinsPrevious(after) && before != zwj && !(regional(before) && regional(after) && oddRegionalRun(text[start:c]))
	}
	return true
}

// blankLineFollows: text[i] is '\n' and the next line holds only spaces.
func blankLineFollows(text string, i int) bool {
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case ' ', '\t', '\r':
		case '\n':
			return true
		default:
			return false
		}
	}
	return false
}

// sentenceEnds: before ends a sentence (., !, ?, … with closing quotes or
// brackets) and after starts with whitespace, or before ends with a CJK full
// stop, which needs no space.
func sentenceEnds(before, after string) bool {
	last, _ := utf8.DecodeLastRuneInString(before)
	switch last {
	case '。', '！', '？', '．':
		return true
	}
	if after == "" || (after[0] != ' ' && after[0] != '\n' && after[0] != '\t') {
		return false
	}
	s := strings.TrimRight(before, `"')]”’»*_`)
	last, _ = utf8.DecodeLastRuneInString(s)
	return last == '.' || last == '!' || last == '?' || last == '…'
}

// wideScript: scripts written without spaces between words, where a line may
// break between any two characters.
func wideScript(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		(r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF)
}

const zwj = '\u200D'

// joinsPrevious: r belongs to the character before it (combining marks,
// variation selectors, emoji skin tones, tag characters, a zero-width
// joiner). A cheap stand-in for grapheme cluster rules that keeps accents,
// flags and family emoji whole.
func joinsPrevious(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc) || r == zwj ||
		(r >= 0xFE00 && r <= 0xFE0F) || (r >= 0x1F3FB && r <= 0x1F3FF) ||
		(r >= 0xE0020 && r <= 0xE007F) || (r >= 0xE0100 && r <= 0xE01EF)
}

func regional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// oddRegionalRun: s ends in an odd number of regional indicators, so the
// next one completes a flag.
func oddRegionalRun(s string) bool {
	n := 0
	for s != "" {
		r, size := utf8.DecodeLastRuneInString(s)
		if !regional(r) {
			break
		}
		n++
		s = s[:len(s)-size]
	}
	return n%2 == 1
}

// skipSpace returns the index after the whitespace at i: all of it outside
// code blocks, only line breaks inside one (indentation is code).
func skipSpace(text string, i int, fences []fence) int {
	code := fenceAt(fences, i) != nil
	for i < len(text) {
		switch text[i] {
		case '\n', '\r':
		case ' ', '\t':
			if code {
				return i
			}
		default:
			return i
		}
		i++
	}
	return i
}

// fence is one fenced code block: the opening line text[openStart:openEnd]
// (indent, marker and info string, "```go"), the closing line from
// closeStart (len(text) when the block is never closed).
type fence struct {
	openStart, openEnd, closeStart int
	markerEnd, closeMarkerEnd      int // where the opening and closing runs of backticks or tildes end
	open, marker, indent           string
}

// repairable: closing and reopening this fence leaves most of a part for
// the text (an absurd info string is not repeated in every part).
func (f *fence) repairable(limit int) bool {
	return 2*(Len(f.open)+Len(f.indent)+Len(f.marker)+2) <= limit
}

// findFences lists the fenced code blocks of text as CommonMark reads them:
// a line of at least three backticks or tildes (an info string may follow
// backticks only if it has none itself) opens a block that a line of the
// same character, at least as long, closes. Indentation is accepted at any
// depth, as answers put code blocks inside list items.
func findFences(text string) []fence {
	var out []fence
	var cur *fence
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '\n')
		lineEnd := len(text)
		if j >= 0 {
			lineEnd = i + j
		}
		line := strings.TrimRight(text[i:lineEnd], "\r")
		body := strings.TrimLeft(line, " \t")
		indent := line[:len(line)-len(body)]
		if cur == nil {
			if marker := fenceMarker(body); marker != "" {
				info := body[len(marker):]
				if marker[0] != '`' || !strings.Contains(info, "`") {
					cur = &fence{openStart: i, openEnd: i + len(strings.TrimRight(line, " \t")), open: strings.TrimRight(line, " \t"),
						marker: marker, indent: indent, markerEnd: i + len(indent) + len(marker)}
				}
			}
		} else if m := fenceMarker(body); m != "" && m[0] == cur.marker[0] && len(m) >= len(cur.marker) && strings.TrimSpace(body[len(m):]) == "" {
			cur.closeStart = i
			cur.closeMarkerEnd = i + len(indent) + len(m)
			out = append(out, *cur)
			cur = nil
		}
		if j < 0 {
			break
		}
		i = lineEnd + 1
	}
	if cur != nil {
		cur.closeStart, cur.closeMarkerEnd = len(text), len(text)
		out = append(out, *cur)
	}
	return out
}

// fenceMarker returns the run of three or more backticks or tildes s starts
// with, or "".
func fenceMarker(s string) string {
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return ""
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return s[:n]
}

// fenceAt returns the code block that byte i lies inside (after its opening
// line began, up to and including the start of its closing line), or nil.
func fenceAt(fences []fence, i int) *fence {
	for k := range fences {
		f := &fences[k]
		if f.openStart < i && i <= f.closeStart {
			return f
		}
		if f.openStart >= i {
			break
		}
	}
	return nil
}

// closingFence is what a piece ending at byte end must add to close the code
// block it ends in (its opening marker included), or "" (outside code, at
// the end of a block the text itself never closes, or a fence too long to
// repair).
func closingFence(fences []fence, end, textLen, limit int) string {
	f := fenceAt(fences, end)
	if f == nil || end < f.markerEnd || end >= textLen || !f.repairable(limit) {
		return ""
	}
	return "\n" + f.indent + f.marker
}

// startsFalseFence: a part starting at i would begin with what reads as a
// fence ("use ```go blocks" cut before the backticks) though in the text it
// is not at the start of a line.
func startsFalseFence(text string, i int) bool {
	if i >= len(text) || fenceMarker(text[i:]) == "" {
		return false
	}
	line := text[strings.LastIndexByte(text[:i], '\n')+1 : i]
	return strings.Trim(line, " \t") != ""
}

// inMarker: byte i lies strictly inside a fence's run of backticks or
// tildes, where a cut would leave a fence neither part can close.
func inMarker(fences []fence, i int) bool {
	for _, f := range fences {
		if (f.openStart+len(f.indent) < i && i < f.markerEnd) || (f.closeStart < i && i < f.closeMarkerEnd) {
			return true
		}
		if f.openStart >= i {
			break
		}
	}
	return false
}
