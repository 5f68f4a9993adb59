package baseurl

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	r := Rule{
		Key:         "X.baseUrl",
		NotHTTP:     "use e.g. https://x.example.org",
		Credentials: "put them elsewhere",
		Redact:      func(s string) string { return strings.ReplaceAll(s, "secret", "…") },
	}
	tests := []struct {
		raw     string
		want    string // the URL on success
		wantErr string // a part of the message on failure
	}{
		{raw: "https://x.example.org", want: "https://x.example.org"},
		{raw: "  http://127.0.0.1:3000/  ", want: "http://127.0.0.1:3000"},
		{raw: "https://example.org/chat//", want: "https://example.org/chat"},
		{raw: "https://example.org/a%2Fb/", want: "https://example.org/a/b"},
		{raw: "", wantErr: `X.baseUrl "" is not an http(s) URL; use e.g. https://x.example.org`},
		{raw: "ftp://x.example.org", wantErr: "is not an http(s) URL"},
		{raw: "x.example.org", wantErr: "is not an http(s) URL"},
		{raw: "http:x.example.org", wantErr: "is not an http(s) URL"},
		{raw: "https://", wantErr: "is not an http(s) URL"},
		{raw: "https://u:secret@x.example.org", wantErr: `X.baseUrl "https://u:…@x.example.org" contains credentials; put them elsewhere`},
		{raw: "https://x.example.org/?a=1", wantErr: "has a query or fragment; give only scheme, host and an optional path"},
		{raw: "https://x.example.org/?", wantErr: "has a query or fragment"},
		{raw: "https://x.example.org/#top", wantErr: "has a query or fragment"},
	}
	for _, tt := range tests {
		u, err := r.Parse(tt.raw)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) error = %v, want one containing %q", tt.raw, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("Parse(%q): %v", tt.raw, err)
		case u.String() != tt.want:
			t.Errorf("Parse(%q) = %q, want %q", tt.raw, u.String(), tt.want)
		}
	}
}
