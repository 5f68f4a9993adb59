package safehtml

import (
	htmlstd "html"
	"io"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// hostile are values that try to leave a text node or an attribute value.
var hostile = []string{
	``,
	`plain`,
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(2)>`,
	`' onmouseover='alert(3)`,
	`</p><p>`,
	`&lt;b&gt; &amp; &#60;`,
	"a\x00b",
	"line\r\nbreak\rand\n",
	`<!-- comment --> <![CDATA[x]]>`,
	`+ADw-script+AD4-`,
	"\u202eevil\u202c",
	"\xff\xfe invalid utf-8",
}

// TestTextAndAttrStayInside renders each hostile value as text and as an
// attribute value and parses the page the way a browser's tokenizer does:
// exactly one element with exactly its one attribute comes back, and the
// text and the value read as what was written.
func TestTextAndAttrStayInside(t *testing.T) {
	for _, s := range hostile {
		checkInside(t, s, s)
	}
}

// FuzzTextAndAttr runs the same check on generated text and attribute
// values (make fuzz).
func FuzzTextAndAttr(f *testing.F) {
	for _, s := range hostile {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, text, attr string) {
		checkInside(t, text, attr)
	})
}

func checkInside(t *testing.T, text, attr string) {
	t.Helper()
	var w Writer
	w.M(`<p`)
	w.Attr("title", attr)
	w.M(`>`)
	w.Text(text)
	w.M(`</p>`)
	page := w.String()

	z := html.NewTokenizer(strings.NewReader(page))
	var toks []html.Token
	for z.Next() != html.ErrorToken {
		toks = append(toks, z.Token())
	}
	if z.Err() != io.EOF {
		t.Fatalf("tokenizer: %v", z.Err())
	}
	want := func(s string) string { // what the tokenizer makes of any text
		s = strings.ReplaceAll(s, "\x00", "\ufffd")
		s = strings.ReplaceAll(s, "\r\n", "\n")
		return strings.ReplaceAll(s, "\r", "\n")
	}
	if text == "" {
		toks = append(toks[:1], append([]html.Token{{Type: html.TextToken}}, toks[1:]...)...)
	}
	if len(toks) != 3 || toks[0].Type != html.StartTagToken || toks[0].Data != "p" ||
		toks[1].Type != html.TextToken || toks[2].Type != html.EndTagToken || toks[2].Data != "p" {
		t.Fatalf("text %q, attr %q: page %q parses to %d tokens %v, want <p>text</p>", text, attr, page, len(toks), toks)
	}
	if a := toks[0].Attr; len(a) != 1 || a[0].Key != "title" || a[0].Val != want(attr) {
		t.Errorf("attr %q: page %q has attributes %+v, want title=%q", attr, page, a, want(attr))
	}
	if got := toks[1].Data; got != want(text) {
		t.Errorf("text %q: page %q reads %q", text, page, got)
	}
}

// TestEscapeLikeHTMLTemplate pins the escaping: the characters that can end
// a text node or a quoted value, '+' and NUL, nothing else.
func TestEscapeLikeHTMLTemplate(t *testing.T) {
	for in, want := range map[string]string{
		`<a href="x">'&'</a>`: `&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;&lt;/a&gt;`,
		"U+202E \x00":         "U&#43;202E \ufffd",
		"plain äöü / = ( ) ;": "plain äöü / = ( ) ;",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
		// The escaper and html.EscapeString agree wherever the latter acts.
		if in != "U+202E \x00" && htmlstd.UnescapeString(Escape(in)) != in {
			t.Errorf("Escape(%q) does not read back", in)
		}
	}
}

// TestLinkAllowsOnlyRelativeAndHTTP keeps links to other schemes (and
// links a browser would repair into one) out of href attributes.
func TestLinkAllowsOnlyRelativeAndHTTP(t *testing.T) {
	for in, want := range map[string]string{
		"/console/chain?root=r1":            "/console/chain?root=r1",
		"?a=1&b=2":                          "?a=1&b=2",
		"https://sb.example/approvals/a1?x": "https://sb.example/approvals/a1?x",
		"HTTP://sb.example/":                "HTTP://sb.example/",
		"javascript:alert(1)":               Blocked,
		"JavaScript:alert(1)":               Blocked,
		" javascript:alert(1)":              Blocked,
		"java\tscript:alert(1)":             Blocked,
		"\x01javascript:alert(1)":           Blocked,
		"data:text/html,<script>":           Blocked,
		"vbscript:msgbox":                   Blocked,
		"mailto:x@example.org":              Blocked,
	} {
		if got := Link(in).String(); got != want {
			t.Errorf("Link(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPathEncodesTheQuery keeps values inside their parameter.
func TestPathEncodesTheQuery(t *testing.T) {
	u := Path("/console/chain", url.Values{"root": {`r1&a=2#"><x`}})
	if got, want := u.String(), "/console/chain?root=r1%26a%3D2%23%22%3E%3Cx"; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if got := Path("/console/", nil).String(); got != "/console/" {
		t.Errorf("Path without a query = %q", got)
	}
	var w Writer
	w.M("<a")
	w.Href("href", Link("/x?a=1&b=<2>"))
	w.M(">")
	w.El("span", "a<b")
	if got, want := w.String(), `<a href="/x?a=1&amp;b=&lt;2&gt;"><span>a&lt;b</span>`; got != want {
		t.Errorf("page = %q, want %q", got, want)
	}
}

// TestMarkupTakesOnlyConstants proves the rule the package rests on: code
// outside it cannot pass a string variable as markup (it does not compile),
// while constants do.
func TestMarkupTakesOnlyConstants(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a package")
	}
	// A throw-away package inside the module (so that it may import this
	// one); go vet type-checks it.
	// Under testdata, so that no ./... pattern meets it meanwhile.
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	pkgDir, err := os.MkdirTemp("testdata", "misuse")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(pkgDir)
		os.Remove("testdata") // only when empty
	})
	src := func(body string) string {
		return "package misuse\n\nimport \"github.com/switchboard-dev/switchboard/shared/platform/safehtml\"\n\n" +
			"func F(w *safehtml.Writer, s string) {\n" + body + "\n}\n"
	}
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`w.M("<p>"); w.Text(s); const c = "</p>"; w.M(c)`, true},
		{`w.M(s)`, false},
		{`w.Attr("title", s); w.Attr(s, "x")`, false},
		{`w.El(s, "x")`, false},
		{`_ = safehtml.Path(s, nil)`, false},
	} {
		if err := os.WriteFile(filepath.Join(pkgDir, "m.go"), []byte(src(tc.body)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("go", "vet", "./"+pkgDir).CombinedOutput()
		if (err == nil) != tc.ok {
			t.Errorf("%s: compiles = %v, want %v\n%s", tc.body, err == nil, tc.ok, out)
		}
	}
}

// TestNumIsANumber pins the numbers of a drawing: two decimals at most, no
// exponent, and 0 for what is not a finite number.
func TestNumIsANumber(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {12, "12"}, {12.5, "12.5"}, {1.005, "1"}, {-3.14159, "-3.14"}, {-0.001, "0"},
		{1e21, "1000000000000000000000"}, {math.NaN(), "0"}, {math.Inf(1), "0"}, {math.Inf(-1), "0"},
	} {
		var w Writer
		w.M("<rect")
		w.Num("x", tc.in)
		if got, want := w.String(), `<rect x="`+tc.want+`"`; got != want {
			t.Errorf("Num(%v) = %q, want %q", tc.in, got, want)
		}
	}
}

// FuzzSVG draws what the console's charts draw — a rect with a number, a
// class and a title, a text label — from generated values, and parses the
// page as a browser does: the drawing keeps exactly its elements and
// attributes, and the texts read as written.
func FuzzSVG(f *testing.F) {
	for _, s := range hostile {
		f.Add(s, s, 1.5)
	}
	f.Add("</svg><script>x</script>", "<![CDATA[", math.NaN())
	f.Fuzz(func(t *testing.T, label, class string, x float64) {
		var w Writer
		w.M(`<svg viewBox="0 0 100 20"><rect`)
		w.Num("x", x)
		w.Attr("class", class)
		w.M("><title>")
		w.Text(label)
		w.M("</title></rect><text")
		w.Num("y", x)
		w.M(">")
		w.Text(label)
		w.M("</text></svg>")
		doc, err := html.Parse(strings.NewReader("<!doctype html><body>" + w.String()))
		if err != nil {
			t.Fatal(err)
		}
		var body *html.Node
		var find func(n *html.Node)
		find = func(n *html.Node) {
			if n.Type == html.ElementNode && n.Data == "body" {
				body = n
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				find(c)
			}
		}
		find(doc)
		shape := func(n *html.Node) string {
			var b strings.Builder
			var walk func(n *html.Node)
			walk = func(n *html.Node) {
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode {
						b.WriteString("<" + c.Data + ">")
						walk(c)
						b.WriteString("</" + c.Data + ">")
					}
				}
			}
			walk(n)
			return b.String()
		}
		if got, want := shape(body), "<svg><rect><title></title></rect><text></text></svg>"; got != want {
			t.Fatalf("label %q, class %q: the drawing parses to %s, want %s\n%s", label, class, got, want, w.String())
		}
		svg := body.FirstChild
		rect, text := svg.FirstChild, svg.FirstChild.NextSibling
		if len(rect.Attr) != 2 || rect.Attr[0].Key != "x" || rect.Attr[1].Key != "class" {
			t.Errorf("rect attributes %+v, want x and class", rect.Attr)
		}
		wantText := strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(label, "\r\n", "\n"), "\r", "\n"), "\x00", "\ufffd")
		for _, n := range []*html.Node{rect.FirstChild, text} {
			got := ""
			if n.FirstChild != nil {
				got = n.FirstChild.Data
			}
			if got != wantText {
				t.Errorf("label %q reads %q in <%s>", label, got, n.Data)
			}
		}
	})
}
