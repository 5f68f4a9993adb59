package scrub

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
)

// variants lists the spellings under which a secret value may show up in
// text: as configured, trimmed (values read from files often end in a
// newline), JSON-escaped (with and without HTML escaping) and URL-escaped.
func variants(sec string) []string {
	t := strings.TrimSpace(sec)
	out := []string{sec, t, url.QueryEscape(t), url.PathEscape(t)}
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
