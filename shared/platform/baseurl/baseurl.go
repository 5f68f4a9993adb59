// Package baseurl checks the base URL a client of another server (Rocket.Chat,
// the Telegram Bot API) is configured with, and says in the configuration's
// words what is wrong with a bad one.
package baseurl

import (
	"fmt"
	"net/url"
	"strings"
)

// Rule is how one configuration key is checked and named in messages.
type Rule struct {
	// Key names the setting in messages: "RocketChat.baseUrl".
	Key string
	// NotHTTP is the advice for a value that is not an http(s) URL:
	// "use e.g. https://chat.example.org".
	NotHTTP string
	// Credentials is the advice for a value with user info in it: "remove
	// them".
	Credentials string
	// Redact shows a bad value in a message without what must not be
	// shown (user info, a token). nil shows it as it is.
	Redact func(string) string
}

// Parse reads raw (surrounding spaces ignored) as the base of a server's
// API: an absolute http or https URL with a host, no user info, no query or
// fragment (not even a bare "?"), and an optional path prefix. It returns
// that URL with the path's trailing slashes removed, so that endpoint paths
// can be appended, or an error that names r.Key and says what to do.
func (r Rule) Parse(raw string) (*url.URL, error) {
	s := strings.TrimSpace(raw)
	shown := s
	if r.Redact != nil {
		shown = r.Redact(s)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%s %q is not an http(s) URL; %s", r.Key, shown, r.NotHTTP)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%s %q contains credentials; %s", r.Key, shown, r.Credentials)
	}
	if u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") {
		return nil, fmt.Errorf("%s %q has a query or fragment; give only scheme, host and an optional path", r.Key, shown)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}
