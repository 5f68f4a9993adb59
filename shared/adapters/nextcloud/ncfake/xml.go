package ncfake

import (
	"encoding/xml"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
)

// multistatus builds the 207 answers ncfake writes itself (search,
// versions, trash) with Nextcloud's prefixes d/s/oc/nc.
type multistatus struct{ b strings.Builder }

func newMultistatus() *multistatus {
	m := &multistatus{}
	m.b.WriteString(`<?xml version="1.0"?>` + "\n" +
		`<d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">` + "\n")
	return m
}

// add writes one response. href is an unescaped path; props maps prefixed
// names to already-escaped inner XML.
func (m *multistatus) add(href string, props map[string]string) {
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(&m.b, " <d:response>\n  <d:href>%s</d:href>\n  <d:propstat><d:prop>\n", xmlText((&url.URL{Path: href}).EscapedPath()))
	for _, n := range names {
		if props[n] == "" {
			fmt.Fprintf(&m.b, "    <%s/>\n", n)
		} else {
			fmt.Fprintf(&m.b, "    <%s>%s</%s>\n", n, props[n], n)
		}
	}
	m.b.WriteString("  </d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>\n </d:response>\n")
}

func (m *multistatus) write(w http.ResponseWriter) {
	m.b.WriteString("</d:multistatus>\n")
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	w.Write([]byte(m.b.String()))
}

func xmlText(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// contentType guesses by extension, as Nextcloud's mimetype detector does.
func contentType(p string, isDir bool) string {
	if isDir {
		return "httpd/unix-directory"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		if mt, _, err := mime.ParseMediaType(t); err == nil {
			return mt
		}
	}
	return "application/octet-stream"
}
