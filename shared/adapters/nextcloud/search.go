package nextcloud

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Search finds files and folders below q.Folder, indexed on the server —
// much faster than walking the tree with PROPFIND.
func (c *Client) Search(ctx context.Context, q switchboard.FileSearch) ([]switchboard.FileInfo, error) {
	op := "nextcloud.search " + q.Folder
	folder, err := cleanPath(q.Folder)
	if err != nil {
		return nil, invalidPath(op, err)
	}
	if q.Limit < 0 {
		return nil, switchboard.E(op, switchboard.EINVALID, "limit must not be negative")
	}
	body := c.searchBody(folder, q)
	rq := &request{method: "SEARCH", area: "dav", path: "/remote.php/dav/",
		header: http.Header{"Content-Type": {"text/xml; charset=utf-8"}},
		body:   strings.NewReader(body), size: int64(len(body))}
	return c.entries(ctx, op, rq)
}

// searchBody renders the basicsearch request (docs: WebDAV/search.html). The
// select list is the PROPFIND one so results decode into the same Entry.
// getlastmodified literals are unix seconds, which FileSearchBackend casts
// as is. The scope href is escaped per segment like every other path.
func (c *Client) searchBody(folder string, q switchboard.FileSearch) string {
	var conds []string
	if q.Name != "" {
		conds = append(conds, comparison("like", "d:displayname", globToLike(q.Name)))
	}
	if q.Mime != "" {
		if strings.ContainsAny(q.Mime, "*?") {
			conds = append(conds, comparison("like", "d:getcontenttype", globToLike(q.Mime)))
		} else {
			conds = append(conds, comparison("eq", "d:getcontenttype", q.Mime))
		}
	}
	if !q.ModifiedAfter.IsZero() {
		conds = append(conds, comparison("gt", "d:getlastmodified", strconv.FormatInt(q.ModifiedAfter.Unix(), 10)))
	}
	var where string
	switch len(conds) {
	case 0: // basicsearch needs a condition; match every name
		where = indent(comparison("like", "d:displayname", "%"), "      ")
	case 1:
		where = indent(conds[0], "      ")
	default:
		where = "      <d:and>\n" + indent(strings.Join(conds, ""), "        ") + "      </d:and>\n"
	}
	limit := ""
	if q.Limit > 0 {
		limit = fmt.Sprintf("    <d:limit>\n      <d:nresults>%d</d:nresults>\n    </d:limit>\n", q.Limit)
	}
	scope := "/files/" + c.escUser()
	if folder != "/" {
		scope += escapePath(folder)
	}
	return `<?xml version="1.0" encoding="UTF-8"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
  <d:basicsearch>
    <d:select>
      <d:prop>
` + indent(fileProps, "    ") + `      </d:prop>
    </d:select>
    <d:from>
      <d:scope>
        <d:href>` + escapeXML(scope) + `</d:href>
        <d:depth>infinity</d:depth>
      </d:scope>
    </d:from>
    <d:where>
` + where + `    </d:where>
    <d:orderby/>
` + limit + `  </d:basicsearch>
</d:searchrequest>
`
}

// comparison renders one operator, unindented, one element per line.
func comparison(op, prop, literal string) string {
	return fmt.Sprintf("<d:%s>\n  <d:prop><%s/></d:prop>\n  <d:literal>%s</d:literal>\n</d:%s>\n",
		op, prop, escapeXML(literal), op)
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

// globToLike turns a shell glob into an SQL LIKE pattern.
func globToLike(g string) string {
	r := strings.NewReplacer("*", "%", "?", "_")
	return r.Replace(g)
}
