package textsplit

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkPieces asserts what Split promises, on the byte offsets: parts in
// order, only whitespace dropped between them, every part within limit
// (unless it is a single character that cannot fit), fences added only
// inside code blocks and always in pairs, and Split the rendering of split.
func checkPieces(t *testing.T, text string, limit int) []piece {
	t.Helper()
	ps := split(text, limit)
	if strings.TrimSpace(text) == "" {
		if len(ps) != 0 {
			t.Fatalf("split(%q) = %d parts, want none", text, len(ps))
		}
		return ps
	}
	if len(ps) == 0 {
		t.Fatalf("split of %d bytes gave no parts", len(text))
	}
	fences := findFences(text)
	prev := 0
	for i, p := range ps {
		if p.start < prev || p.end <= p.start || p.end > len(text) {
			t.Fatalf("part %d = [%d,%d) after %d: out of order or empty", i, p.start, p.end, prev)
		}
		if gap := text[prev:p.start]; strings.TrimSpace(gap) != "" {
			t.Fatalf("part %d drops %q, which is not whitespace", i, gap)
		}
		if !utf8.ValidString(text) || utf8.ValidString(text[p.start:p.end]) != true {
			if utf8.ValidString(text) {
				t.Fatalf("part %d cuts a UTF-8 sequence: %q", i, text[p.start:p.end])
			}
		}
		part := p.reopen + text[p.start:p.end] + p.close
		if n := Len(part); limit > 0 && n > limit && utf8.RuneCountInString(text[p.start:p.end]) > 1 {
			t.Fatalf("part %d has %d UTF-16 units, limit %d: %q", i, n, limit, part)
		}
		if p.reopen != "" {
			f := fenceAt(fences, p.start)
			if f == nil || p.start < f.markerEnd || p.reopen != f.open+"\n" {
				t.Fatalf("part %d reopens %q outside a code block or with the wrong line", i, p.reopen)
			}
			if i == 0 || ps[i-1].close == "" {
				t.Fatalf("part %d reopens a code block the part before did not close", i)
			}
		}
		if p.close != "" {
			f := fenceAt(fences, p.end)
			if f == nil || p.close != "\n"+f.indent+f.marker {
				t.Fatalf("part %d closes with %q outside a code block", i, p.close)
			}
			if i == len(ps)-1 || ps[i+1].reopen == "" {
				t.Fatalf("part %d closes a code block the next part does not reopen", i)
			}
		}
		prev = p.end
	}
	if rest := text[prev:]; strings.TrimSpace(rest) != "" {
		t.Fatalf("the parts drop the end %q", rest)
	}
	parts := Split(text, limit)
	for i, p := range ps {
		if parts[i] != p.reopen+text[p.start:p.end]+p.close {
			t.Fatalf("Split part %d differs from split", i)
		}
	}
	// When every code block can be repaired, the text closes them all and
	// has no other lines that look like fences (cutting "```a`b" makes one),
	// every part closes what it opens.
	markerLines := 0
	for _, line := range strings.Split(text, "\n") {
		if fenceMarker(strings.TrimLeft(line, " \t")) != "" {
			markerLines++
		}
	}
	repairable := limit >= 40 && balanced(text) && markerLines == 2*len(fences)
	for _, f := range fences {
		repairable = repairable && f.repairable(limit)
	}
	if repairable && len(ps) > 1 {
		for i, p := range parts {
			if Len(ps[i].reopen+text[ps[i].start:ps[i].end]) > 1 && !balanced(p) {
				t.Fatalf("part %d leaves a code block open: %q", i, p)
			}
		}
	}
	return ps
}

func TestLen(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"", 0},
		{"hello", 5},
		{"Grüße", 5},
		{"日本語", 3},
		{"😀", 2},
		{"👨‍👩‍👧", 8}, // three emoji and two joiners
		{"🇩🇪", 4},
		{"e\u0301", 2},
		{"\xff", 1},
	}
	for _, tt := range tests {
		if got := Len(tt.s); got != tt.want {
			t.Errorf("Len(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{"empty", "", 10, nil},
		{"fits", "short answer", 100, []string{"short answer"}},
		{"fits exactly", "12345", 5, []string{"12345"}},
		{"no limit", "anything", 0, []string{"anything"}},
		{"paragraphs", "First paragraph.\n\nSecond paragraph.\n\nThird.", 30,
			[]string{"First paragraph.", "Second paragraph.\n\nThird."}},
		{"lines before sentences", "line one is here\nline two. Is here\nline three", 30,
			[]string{"line one is here", "line two. Is here\nline three"}},
		{"sentences", "One sentence here. Another one there. A third.", 40,
			[]string{"One sentence here. Another one there.", "A third."}},
		{"sentence with a closing quote", `He said "stop." Then he left the room quickly.`, 20,
			[]string{`He said "stop."`, "Then he left the", "room quickly."}},
		{"words", "alpha beta gamma delta epsilon", 12,
			[]string{"alpha beta", "gamma delta", "epsilon"}},
		{"a word longer than the limit", "abcdefghijklmnop", 5,
			[]string{"abcde", "fghij", "klmno", "p"}},
		{"emoji are two units", "😀😀😀😀😀", 4, []string{"😀😀", "😀😀", "😀"}},
		{"an emoji never split in halves", "a😀b", 2, []string{"a", "😀", "b"}},
		{"accents stay on their letter", "e\u0301e\u0301e\u0301", 3, []string{"e\u0301", "e\u0301", "e\u0301"}},
		{"flags stay whole", "🇩🇪🇫🇷🇮🇹", 6, []string{"🇩🇪", "🇫🇷", "🇮🇹"}},
		{"family emoji stays whole", "ab👨‍👩‍👧cd", 9, []string{"ab", "👨‍👩‍👧c", "d"}},
		{"CJK breaks between characters", "日本語の文章です", 5, []string{"日本語の文", "章です"}},
		{"CJK full stop ends a sentence", "今日は晴れ。明日は雨です。", 8, []string{"今日は晴れ。", "明日は雨です。"}},
		{"code block closed and reopened", "Intro text.\n\n```go\nline1()\nline2()\nline3()\n```\n\nAfter.", 30,
			[]string{"Intro text.\n\n```go\nline1()\n```", "```go\nline2()\nline3()\n```", "After."}},
		{"tilde fence", "~~~\naaaa\nbbbb\ncccc\n~~~", 16,
			[]string{"~~~\naaaa\n~~~", "~~~\nbbbb\n~~~", "~~~\ncccc\n~~~"}},
		{"indentation in code is kept", "```py\ndef f():\n    return 1\n    pass\n```", 30,
			[]string{"```py\ndef f():\n```", "```py\n    return 1\n```", "```py\n    pass\n```"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPieces(t, tt.text, tt.limit)
			got := Split(tt.text, tt.limit)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("Split(%q, %d)\n got  %q\n want %q", tt.text, tt.limit, got, tt.want)
			}
		})
	}
}

// balanced: s closes every code block it opens, so a part renders its code
// as code.
func balanced(s string) bool {
	fs := findFences(s)
	return len(fs) == 0 || fs[len(fs)-1].closeStart < len(s)
}

// TestRealisticAnswer: a 7,758-character Markdown answer (headings, lists,
// a Go code block, a table, umlauts, an emoji) at Rocket.Chat's and
// Telegram's limits.
func TestRealisticAnswer(t *testing.T) {
	b, err := os.ReadFile("testdata/answer_7758.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if Len(text) != 7758 {
		t.Fatalf("testdata has %d units, want 7758", Len(text))
	}
	for _, tt := range []struct {
		limit, want int
	}{{RocketChatLimit, 2}, {TelegramLimit, 2}, {2000, 4}, {1000, 9}} {
		checkPieces(t, text, tt.limit)
		parts := Split(text, tt.limit)
		sizes := make([]int, len(parts))
		for i, p := range parts {
			sizes[i] = Len(p)
			if !balanced(p) {
				t.Errorf("limit %d: part %d leaves a code block open:\n%s", tt.limit, i, p)
			}
		}
		t.Logf("7758 units at limit %d: %d parts, sizes %v", tt.limit, len(parts), sizes)
		if len(parts) != tt.want {
			t.Errorf("limit %d: %d parts, want %d", tt.limit, len(parts), tt.want)
		}
	}
	// At 5,000 the cut falls between paragraphs, not inside the code.
	parts := Split(text, RocketChatLimit)
	if strings.Count(parts[0], "```")%2 != 0 {
		t.Errorf("the first part cuts the code block open")
	}
}

func TestHugeCodeBlock(t *testing.T) {
	var b strings.Builder
	b.WriteString("```go\n")
	for i := range 400 {
		b.WriteString("\tfmt.Println(\"line ")
		b.WriteString(strings.Repeat("x", i%40))
		b.WriteString("\")\n")
	}
	b.WriteString("```")
	text := b.String()
	checkPieces(t, text, 1000)
	parts := Split(text, 1000)
	if len(parts) < 10 {
		t.Fatalf("%d parts for %d units, want at least 10", len(parts), Len(text))
	}
	for i, p := range parts {
		if !strings.HasPrefix(p, "```go\n\tfmt.Println(") || !strings.HasSuffix(p, "\")\n```") {
			t.Errorf("part %d is not a whole code block of whole lines: %q … %q", i, p[:20], p[len(p)-20:])
		}
		if Len(p) > 1000 {
			t.Errorf("part %d has %d units", i, Len(p))
		}
	}
}

func TestLongLine(t *testing.T) {
	line := strings.Repeat("word ", 2000) + strings.Repeat("x", 6000)
	checkPieces(t, line, 5000)
	parts := Split(line, 5000)
	if len(parts) != 4 {
		t.Errorf("%d parts, want 4", len(parts))
	}
}

func TestNearTheLimit(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		wantParts int
	}{
		{"5000 CJK characters", strings.Repeat("漢", 5000), 1},
		{"5001 CJK characters", strings.Repeat("漢", 5001), 2},
		{"2500 emoji", strings.Repeat("😀", 2500), 1},
		{"2501 emoji", strings.Repeat("😀", 2501), 2},
		{"an emoji across the limit", strings.Repeat("a", 4999) + "😀", 2},
		{"families near the limit", strings.Repeat("a", 4995) + strings.Repeat("👨‍👩‍👧", 3), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := checkPieces(t, tt.text, 5000)
			if len(ps) != tt.wantParts {
				t.Errorf("%d parts, want %d", len(ps), tt.wantParts)
			}
			for i, p := range Split(tt.text, 5000) {
				if !utf8.ValidString(p) {
					t.Errorf("part %d is not valid UTF-8", i)
				}
				if r, _ := utf8.DecodeRuneInString(p); r == zwj || joinsPrevious(r) {
					t.Errorf("part %d starts inside a character: %q", i, p[:8])
				}
			}
		})
	}
}

func TestShouldAttach(t *testing.T) {
	tests := []struct {
		parts, max int
		want       bool
	}{
		{1, 4, false}, {4, 4, false}, {5, 4, true}, {5, 0, true}, {4, 0, false}, {2, 1, true},
	}
	for _, tt := range tests {
		if got := ShouldAttach(make([]string, tt.parts), tt.max); got != tt.want {
			t.Errorf("ShouldAttach(%d parts, %d) = %v, want %v", tt.parts, tt.max, got, tt.want)
		}
	}
}

func TestFirstParagraph(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		limit int
		want  string
	}{
		{"first paragraph", "\n\nHere is the plan.\nIt has steps.\n\nStep one.", 100, "Here is the plan.\nIt has steps."},
		{"heading takes the next block along", "# Plan\n\nHere is the plan.\n\nStep one.", 100, "# Plan\n\nHere is the plan."},
		{"code block with blank lines is one paragraph", "```\na\n\nb\n```\n\nafter", 100, "```\na\n\nb\n```"},
		{"too long ends with an ellipsis", "One two three four five six.", 12, "One two…"},
		{"whole text", "only one", 100, "only one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FirstParagraph(tt.text, tt.limit)
			if got != tt.want {
				t.Errorf("FirstParagraph = %q, want %q", got, tt.want)
			}
			if Len(got) > tt.limit {
				t.Errorf("%d units, limit %d", Len(got), tt.limit)
			}
		})
	}
	b, _ := os.ReadFile("testdata/answer_7758.md")
	if got := FirstParagraph(string(b), RocketChatLimit); !strings.HasPrefix(got, "# Migrating") || !strings.HasSuffix(got, "on its own.") {
		t.Errorf("FirstParagraph of the realistic answer = %q", got)
	}
}

func FuzzSplit(f *testing.F) {
	b, _ := os.ReadFile("testdata/answer_7758.md")
	f.Add(string(b), uint16(500))
	f.Add("```go\nx := 1\n\ny := 2\n```\n\ntext. More text! And? Yes.", uint16(20))
	f.Add("日本語の文章です。😀👨‍👩‍👧🇩🇪 e\u0301", uint16(3))
	f.Add("~~~~ info\n  indented\n~~~\n~~~~\n", uint16(12))
	f.Add("a\n\n\n\nb \t \n c", uint16(1))
	f.Fuzz(func(t *testing.T, text string, limit uint16) {
		checkPieces(t, text, int(limit%700))
	})
}

// BenchmarkSplit100KB: a 100 KB answer (the realistic one, repeated) at
// Rocket.Chat's limit.
func BenchmarkSplit100KB(b *testing.B) {
	one, err := os.ReadFile("testdata/answer_7758.md")
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat(string(one)+"\n\n", 100<<10/len(one)+1)[:100<<10]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var parts int
	for b.Loop() {
		parts = len(Split(text, RocketChatLimit))
	}
	b.ReportMetric(float64(parts), "parts")
}
