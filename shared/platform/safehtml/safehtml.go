// Package safehtml writes HTML pages by hand, escaping by construction:
// text and attribute values always pass through the escaper, tag and
// attribute names and every other piece of markup can only be string
// constants, and links are URL values that are either relative or http(s).
//
// It replaces html/template for the server-rendered pages. The template
// engine calls methods by name through reflection, which stops the
// linker from dropping unused methods anywhere in the binary: a Lambda
// that merely links html/template grows by about half.
//
// The one way to write markup verbatim is Writer.M, whose parameter has an
// unexported type: from another package only an untyped string constant
// converts to it, never a variable, so text someone else wrote cannot be
// passed as markup without an escape.
package safehtml

import (
	"math"
	"net/url"
	"strconv"
	"strings"
)

// markup is constant markup. The type is unexported on purpose: callers can
// pass string constants ("<p>") but no string variable.
type markup string

// Writer accumulates one page. The zero value is ready to use.
type Writer struct {
	b strings.Builder
}

// escaper escapes text for an HTML text node and for a quoted attribute
// value, byte for byte as html/template does in those places (so pages
// read the same as before): the five characters html.EscapeString handles,
// '+' (a UTF-7 guard), and NUL, which becomes U+FFFD.
var escaper = strings.NewReplacer(
	"\x00", "\uFFFD",
	`"`, "&#34;",
	"'", "&#39;",
	"&", "&amp;",
	"+", "&#43;",
	"<", "&lt;",
	">", "&gt;",
)

// Escape returns s escaped for a text node or a quoted attribute value.
func Escape(s string) string { return escaper.Replace(s) }

// M writes constant markup verbatim.
func (w *Writer) M(m markup) { w.b.WriteString(string(m)) }

// Text writes s as text: escaped.
func (w *Writer) Text(s string) { _, _ = escaper.WriteString(&w.b, s) }

// Texts writes each of parts as text.
func (w *Writer) Texts(parts ...string) {
	for _, p := range parts {
		w.Text(p)
	}
}

// Attr writes ` name="value"` with value escaped; call it between
// M("<tag") and M(">").
func (w *Writer) Attr(name markup, value string) {
	w.b.WriteByte(' ')
	w.b.WriteString(string(name))
	w.b.WriteString(`="`)
	w.Text(value)
	w.b.WriteByte('"')
}

// Href writes ` name="url"` for a link attribute (href, action, src …).
func (w *Writer) Href(name markup, u URL) { w.Attr(name, u.String()) }

// El writes <tag>text</tag>.
func (w *Writer) El(tag markup, text string) {
	w.b.WriteByte('<')
	w.b.WriteString(string(tag))
	w.b.WriteByte('>')
	w.Text(text)
	w.b.WriteString("</")
	w.b.WriteString(string(tag))
	w.b.WriteByte('>')
}

// Num writes ` name="v"` for a number attribute of an inline SVG drawing
// (x, y, width, a coordinate …): v with at most two decimals, never an
// exponent; NaN and ±Inf become 0, so that no computed value can break
// the drawing or leave the attribute. Texts in a drawing (<text>, <title>)
// are written with Text: an inline SVG's text is escaped as HTML's is.
func (w *Writer) Num(name markup, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		v = 0
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		s = "0"
	}
	w.b.WriteByte(' ')
	w.b.WriteString(string(name))
	w.b.WriteString(`="`)
	w.b.WriteString(s)
	w.b.WriteByte('"')
}

// String is the page so far.
func (w *Writer) String() string { return w.b.String() }

// Len is the page's length so far, in bytes.
func (w *Writer) Len() int { return w.b.Len() }

// URL is a link that is safe in an href: relative, or absolute with the
// http or https scheme. Build one with Path or Link.
type URL struct{ s string }

// Blocked is what a link that is not relative or http(s) turns into: a
// fragment of the page itself, so that following it does nothing.
const Blocked = "#blocked"

// Path is a link to one of the site's own paths (a constant such as
// "/console/chain") with the query q (nil or empty: none). The query is
// encoded, so values cannot add parameters or leave the query; the result
// passes the same check as Link.
func Path(path markup, q url.Values) URL {
	s := string(path)
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return Link(s)
}

// Link checks a link made elsewhere (a signed approval link, a query kept
// from the request): it is kept when it parses and is relative or http(s),
// and becomes Blocked otherwise (javascript:, data:, links with control
// characters a browser would strip …).
func Link(s string) URL {
	u, err := url.Parse(s)
	if err != nil {
		return URL{Blocked}
	}
	switch u.Scheme {
	case "", "http", "https": // url.Parse lower-cases the scheme
		return URL{s}
	}
	return URL{Blocked}
}

// String is the link unescaped; Href escapes it into the attribute.
func (u URL) String() string { return u.s }
