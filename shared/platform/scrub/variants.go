package scrub

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"strings"
)

// variants lists the spellings under which a secret value may show up in
// text: as configured, trimmed (values read from files often end in a
// newline), JSON-escaped (with and without HTML escaping), URL-escaped and
// HTML-escaped (as html.EscapeString and as html/template write it, the
// latter also turning '+' into "&#43;"), so a secret is found in a page or a
// Telegram HTML message too.
func variants(sec string) []string {
	t := strings.TrimSpace(sec)
	h := html.EscapeString(t)
	out := []string{sec, t, url.QueryEscape(t), url.PathEscape(t), h, strings.ReplaceAll(h, "+", "&#43;")}
	if b, err := json.Marshal(t); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(t) == nil {
		b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		out = append(out, string(b[1:len(b)-1]))
	}
	return out
}
