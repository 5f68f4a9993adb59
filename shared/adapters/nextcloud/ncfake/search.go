package ncfake

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/webdav"
)

// xnode is a generic XML element for reading basicsearch.
type xnode struct {
	XMLName  xml.Name
	Text     string  `xml:",chardata"`
	Children []xnode `xml:",any"`
}

func (n *xnode) child(space, local string) *xnode {
	for i := range n.Children {
		if n.Children[i].XMLName.Space == space && n.Children[i].XMLName.Local == local {
			return &n.Children[i]
		}
	}
	return nil
}

// query is a parsed basicsearch.
type query struct {
	scope string // user path
	where *xnode
	limit int
}

func (s *Server) parseSearch(body io.Reader) (*query, error) {
	var root xnode
	if err := xml.NewDecoder(body).Decode(&root); err != nil {
		return nil, fmt.Errorf("request body is not XML: %v", err)
	}
	if root.XMLName.Space != nsDAV || root.XMLName.Local != "searchrequest" {
		return nil, fmt.Errorf("expected d:searchrequest")
	}
	bs := root.child(nsDAV, "basicsearch")
	if bs == nil {
		return nil, fmt.Errorf("expected d:basicsearch")
	}
	q := &query{limit: 100} // FileSearchBackend's default
	from := bs.child(nsDAV, "from")
	var href *xnode
	if from != nil {
		if sc := from.child(nsDAV, "scope"); sc != nil {
			href = sc.child(nsDAV, "href")
		}
	}
	if href == nil {
		return nil, fmt.Errorf("missing d:from/d:scope/d:href")
	}
	u, err := url.Parse(strings.TrimSpace(href.Text))
	if err != nil {
		return nil, fmt.Errorf("bad scope href")
	}
	rest, ok := strings.CutPrefix(u.Path, "/files/"+s.opts.User)
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return nil, fmt.Errorf("scope %s is not in the user's files", u.Path)
	}
	q.scope = clean(rest)
	if q.where = bs.child(nsDAV, "where"); q.where == nil || len(q.where.Children) != 1 {
		return nil, fmt.Errorf("d:where needs exactly one operator")
	}
	q.where = &q.where.Children[0]
	if l := bs.child(nsDAV, "limit"); l != nil {
		if nr := l.child(nsDAV, "nresults"); nr != nil {
			if n, err := strconv.Atoi(strings.TrimSpace(nr.Text)); err == nil && n > 0 {
				q.limit = n
			}
		}
	}
	return q, nil
}

// hit is one candidate of a search.
type hit struct {
	path string
	fi   os.FileInfo
	fav  bool
	id   int64
}

// value returns the property a comparison names, as string or number.
func (h hit) value(prop xml.Name) (str string, num int64, isNum bool, ok bool) {
	switch prop {
	case xml.Name{Space: nsDAV, Local: "displayname"}:
		return path.Base(h.path), 0, false, true
	case xml.Name{Space: nsDAV, Local: "getcontenttype"}:
		return contentType(h.path, h.fi.IsDir()), 0, false, true
	case xml.Name{Space: nsDAV, Local: "getlastmodified"}:
		return "", h.fi.ModTime().Unix(), true, true
	case xml.Name{Space: nsOC, Local: "size"}, xml.Name{Space: nsDAV, Local: "getcontentlength"}:
		return "", h.fi.Size(), true, true
	case xml.Name{Space: nsOC, Local: "fileid"}:
		return "", h.id, true, true
	case xml.Name{Space: nsOC, Local: "favorite"}:
		if h.fav {
			return "", 1, true, true
		}
		return "", 0, true, true
	}
	return "", 0, false, false
}

// match evaluates an operator; errors name what is unsupported.
func (h hit) match(op *xnode) (bool, error) {
	if op.XMLName.Space != nsDAV {
		return false, fmt.Errorf("unsupported operator %s", op.XMLName.Local)
	}
	switch op.XMLName.Local {
	case "and", "or":
		all := op.XMLName.Local == "and"
		for i := range op.Children {
			ok, err := h.match(&op.Children[i])
			if err != nil {
				return false, err
			}
			if ok != all {
				return ok, nil
			}
		}
		return all, nil
	case "not":
		if len(op.Children) != 1 {
			return false, fmt.Errorf("d:not needs one operand")
		}
		ok, err := h.match(&op.Children[0])
		return !ok, err
	case "is-collection":
		return h.fi.IsDir(), nil
	case "eq", "gt", "gte", "lt", "lte", "like":
	default:
		return false, fmt.Errorf("unsupported operator %s", op.XMLName.Local)
	}
	prop := op.child(nsDAV, "prop")
	lit := op.child(nsDAV, "literal")
	if prop == nil || lit == nil || len(prop.Children) != 1 {
		return false, fmt.Errorf("d:%s needs d:prop and d:literal", op.XMLName.Local)
	}
	str, num, isNum, ok := h.value(prop.Children[0].XMLName)
	if !ok {
		return false, fmt.Errorf("unsupported property for search: %s", prop.Children[0].XMLName.Local)
	}
	literal := lit.Text
	if op.XMLName.Local == "like" {
		if isNum {
			return false, fmt.Errorf("like needs a text property")
		}
		return likeRegexp(literal).MatchString(str), nil
	}
	var cmp int
	if isNum {
		want, err := parseLiteralNumber(literal)
		if err != nil {
			return false, err
		}
		cmp = compare(num, want)
	} else {
		cmp = strings.Compare(str, literal)
	}
	switch op.XMLName.Local {
	case "eq":
		return cmp == 0, nil
	case "gt":
		return cmp > 0, nil
	case "gte":
		return cmp >= 0, nil
	case "lt":
		return cmp < 0, nil
	default:
		return cmp <= 0, nil
	}
}

func compare(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// parseLiteralNumber accepts an integer or, for dates, an ATOM timestamp
// (FileSearchBackend::castValue).
func parseLiteralNumber(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.Unix(), nil
	}
	return 0, fmt.Errorf("literal %q is neither a number nor a date", s)
}

// likeRegexp turns an SQL LIKE pattern into a case-insensitive regexp.
func likeRegexp(pattern string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?is)^")
	for _, r := range pattern {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// serveSearch answers SEARCH /remote.php/dav/ with the files below the
// scope that match, ordered by path, with the PROPFIND property set.
func (s *Server) serveSearch(w http.ResponseWriter, r *http.Request) {
	q, err := s.parseSearch(r.Body)
	if err != nil {
		sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`, err.Error())
		return
	}
	scope, err := s.stat(q.scope)
	if err != nil || !scope.IsDir() {
		sabre(w, http.StatusNotFound, `Sabre\DAV\Exception\NotFound`, "Search scope not found")
		return
	}
	// Validate the query even when the tree is empty.
	if _, err := (hit{path: q.scope, fi: scope}).match(q.where); err != nil {
		sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`, err.Error())
		return
	}
	var hits []hit
	var matchErr error
	s.walk(q.scope, func(p string, fi os.FileInfo) {
		if p == q.scope || matchErr != nil {
			return
		}
		h := hit{path: p, fi: fi, id: s.idOf(p), fav: s.favorite(p)}
		ok, err := h.match(q.where)
		if err != nil {
			matchErr = err
			return
		}
		if ok {
			hits = append(hits, h)
		}
	})
	if matchErr != nil {
		sabre(w, http.StatusBadRequest, `Sabre\DAV\Exception\BadRequest`, matchErr.Error())
		return
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].path < hits[j].path })
	if len(hits) > q.limit {
		hits = hits[:q.limit]
	}
	ms := newMultistatus()
	for _, h := range hits {
		ms.add(s.fileHref(h.path, h.fi.IsDir()), s.entryProps(h.path, h.fi))
	}
	ms.write(w)
}

func (s *Server) fileHref(p string, isDir bool) string {
	href := "/remote.php/dav/files/" + s.opts.User + p
	if isDir && !strings.HasSuffix(href, "/") {
		href += "/"
	}
	return href
}

// entryProps is the PROPFIND property set of a file, as prefixed inner XML.
func (s *Server) entryProps(p string, fi os.FileInfo) map[string]string {
	nc := s.ncProps(p, fi.IsDir(), fi.Size())
	fav := "0"
	if s.favorite(p) {
		fav = "1"
	}
	props := map[string]string{
		"d:displayname":     xmlText(path.Base(p)),
		"d:getlastmodified": fi.ModTime().UTC().Format(http.TimeFormat),
		"d:getetag":         xmlText(etag(fi)),
		"d:resourcetype":    "",
		"oc:fileid":         nc[xml.Name{Space: nsOC, Local: "fileid"}],
		"oc:permissions":    nc[xml.Name{Space: nsOC, Local: "permissions"}],
		"oc:size":           nc[xml.Name{Space: nsOC, Local: "size"}],
		"oc:share-types":    nc[xml.Name{Space: nsOC, Local: "share-types"}],
		"oc:favorite":       fav,
	}
	if fi.IsDir() {
		props["d:resourcetype"] = "<d:collection/>"
	} else {
		props["d:getcontenttype"] = contentType(p, false)
		props["d:getcontentlength"] = strconv.FormatInt(fi.Size(), 10)
	}
	return props
}

// favorite reads the oc:favorite dead property a PROPPATCH stored.
func (s *Server) favorite(p string) bool {
	f, err := s.mem.OpenFile(context.Background(), p, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	dph, ok := f.(webdav.DeadPropsHolder)
	if !ok {
		return false
	}
	props, err := dph.DeadProps()
	if err != nil {
		return false
	}
	v, ok := props[xml.Name{Space: nsOC, Local: "favorite"}]
	return ok && strings.TrimSpace(string(v.InnerXML)) == "1"
}
