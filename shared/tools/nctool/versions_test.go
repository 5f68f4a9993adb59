package nctool_test

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
)

var versionLine = regexp.MustCompile(`^versionId "(\d+)"`)

// versionIDs are the ids of a versions listing, in its order, and the
// index of the line marked as the current content (-1 for none).
func versionIDs(t *testing.T, env sb.Envelope) (ids []string, current int) {
	t.Helper()
	current = -1
	for i, l := range listing(t, env) {
		m := versionLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("versions line %q has no versionId", l)
		}
		ids = append(ids, m[1])
		if strings.HasSuffix(l, "(current content)") {
			if current >= 0 {
				t.Errorf("two lines are marked as the current content: %q", listing(t, env))
			}
			current = i
		}
	}
	return ids, current
}

// Nextcloud 34 (and ncfake) list the current content among the versions.
func TestVersions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("r.md", "v1")
	e.ok(e.invoke("upload", `{"localPath":"r.md"}`))
	e.write("r.md", "v2 is longer")
	e.ok(e.invoke("upload", `{"localPath":"r.md"}`))
	env := e.ok(e.invoke("versions", `{"path":"r.md"}`))
	ids, cur := versionIDs(t, env)
	if env.Data["count"] != float64(2) || env.Data["earlier"] != float64(1) || len(ids) != 2 || cur != 0 {
		t.Fatalf("versions = %q, current line %d (%+v)", listing(t, env), cur, env.Data)
	}
	if env.Data["current_version_id"] != ids[0] {
		t.Errorf("current_version_id = %v, want %s", env.Data["current_version_id"], ids[0])
	}
	if msg := env.Data["message"].(string); !strings.Contains(msg, "2 versions (the newest is the current content)") {
		t.Errorf("message = %q", msg)
	}

	e.nc.ResetRequests()
	e.failed(e.invoke("restore_version", fmt.Sprintf(`{"path":"r.md","versionId":%q}`, ids[0])), sb.EINVALID,
		"is the current content of /r.md", "restoring it would change nothing", "pick an earlier versionId")
	if n := e.nc.Calls("MOVE versions"); n != 0 {
		t.Errorf("restoring the current content sent %d MOVE(s)", n)
	}
	if got, _ := e.file(root + "/r.md"); got != "v2 is longer" {
		t.Errorf("after the refused restore file = %q", got)
	}
	e.ok(e.invoke("restore_version", fmt.Sprintf(`{"path":"r.md","versionId":%q}`, ids[1])))
	if got, _ := e.file(root + "/r.md"); got != "v1" {
		t.Errorf("after restore file = %q", got)
	}
	e.failed(e.invoke("restore_version", `{"path":"r.md","versionId":"../../x"}`), sb.EINVALID, "not a version id")
	e.failed(e.invoke("restore_version", `{"path":"r.md","versionId":"12345"}`), sb.ENOTFOUND, "cannot restore version 12345", `/r.md has no version "12345"`)
	e.ok(e.invoke("mkdir", `{"path":"dir"}`))
	e.failed(e.invoke("versions", `{"path":"dir"}`), sb.EINVALID, "is a folder")
	e.failed(e.invoke("versions", `{"path":"gone.md"}`), sb.ENOTFOUND, "cannot list the versions of /gone.md")

	e.write("new.md", "n")
	e.ok(e.invoke("upload", `{"localPath":"new.md"}`))
	env = e.ok(e.invoke("versions", `{"path":"new.md"}`))
	if _, cur := versionIDs(t, env); cur != 0 || env.Data["earlier"] != float64(0) ||
		!strings.Contains(env.Data["message"].(string), "the current content: no earlier versions") {
		t.Errorf("versions of a new file = %q (%+v)", listing(t, env), env.Data)
	}
}

// versionsServer answers PROPFIND versions/… with body(fileID) and hands
// everything else to the fake.
func versionsServer(e *env, body func(fileID string) string) *nextcloud.Client {
	prefix := "/remote.php/dav/versions/" + e.nc.User() + "/versions/"
	return e.intercept(func(w http.ResponseWriter, r *http.Request) bool {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		if !ok || r.Method != "PROPFIND" {
			return false
		}
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(http.StatusMultiStatus)
		fmt.Fprint(w, body(strings.Trim(rest, "/")))
		return true
	})
}

// nc34Version is one entry as Nextcloud 34 sends it: named after the mtime,
// getetag the name, no label.
type nc34Version struct {
	mtime time.Time
	size  int
}

// nc34Versions is Nextcloud 34's answer (oldest first, as it sends them),
// shaped after a real PROPFIND of versions/{fileid}.
func nc34Versions(user, fileID string, vs ...nc34Version) string {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?>` + "\n" + `<d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">`)
	base := "/remote.php/dav/versions/" + user + "/versions/" + fileID
	fmt.Fprintf(&b, `<d:response><d:href>%s/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`, base)
	for _, v := range vs {
		ts := strconv.FormatInt(v.mtime.Unix(), 10)
		fmt.Fprintf(&b, `<d:response><d:href>%s/%s</d:href><d:propstat><d:prop><d:getlastmodified>%s</d:getlastmodified><d:getcontentlength>%d</d:getcontentlength><d:getcontenttype>text/markdown</d:getcontenttype><d:getetag>%s</d:getetag><d:resourcetype/><nc:version-author>%s</nc:version-author></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat><d:propstat><d:prop><nc:version-label/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat></d:response>`,
			base, ts, v.mtime.UTC().Format(http.TimeFormat), v.size, ts, user)
	}
	b.WriteString(`</d:multistatus>`)
	return b.String()
}

// On Nextcloud 34 the current content is the entry with the file's mtime
// and size — not necessarily the newest: a restored version keeps its
// mtime, so after a restore the current content is an older entry.
func TestVersionsAsNextcloud34ListsThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(root+"/r.md", "restored")
	st, err := e.agent.Get().Client.Stat(t.Context(), root+"/r.md")
	if err != nil {
		t.Fatal(err)
	}
	now := st.Modified
	tests := []struct {
		name        string
		versions    []nc34Version // oldest first
		wantCurrent int           // line of the listing (newest first); -1 none
		wantMsg     string
	}{
		{"current is the newest", []nc34Version{{now.Add(-time.Hour), 3}, {now, 8}}, 0, "2 versions (the newest is the current content)"},
		{"current after a restore", []nc34Version{{now.Add(-time.Hour), 3}, {now, 8}, {now.Add(time.Minute), 12}}, 1,
			fmt.Sprintf("3 versions (versionId %q, modified %s, is the current content)", strconv.FormatInt(now.Unix(), 10), now.UTC().Format("2006-01-02 15:04 UTC"))},
		{"same mtime, another size", []nc34Version{{now.Add(-time.Hour), 3}, {now, 7}}, -1, "2 earlier version(s); the current content is not among them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := versionsServer(e, func(id string) string { return nc34Versions(e.nc.User(), id, tt.versions...) })
			e.configure(func(a *nctool.Agent) { a.Client = c })
			env := e.ok(e.invoke("versions", `{"path":"r.md"}`))
			ids, cur := versionIDs(t, env)
			if cur != tt.wantCurrent {
				t.Errorf("current line = %d, want %d: %q", cur, tt.wantCurrent, listing(t, env))
			}
			for i := 1; i < len(ids); i++ {
				if ids[i-1] < ids[i] {
					t.Errorf("listing is not newest first: %v", ids)
				}
			}
			if msg := env.Data["message"].(string); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message = %q, want it to contain %q", msg, tt.wantMsg)
			}
			if tt.wantCurrent >= 0 {
				e.nc.ResetRequests()
				e.failed(e.invoke("restore_version", fmt.Sprintf(`{"path":"r.md","versionId":%q}`, ids[tt.wantCurrent])), sb.EINVALID, "is the current content")
				if n := e.nc.Calls("MOVE versions"); n != 0 {
					t.Errorf("restoring the current content sent %d MOVE(s)", n)
				}
			}
		})
	}
}

// Servers before Nextcloud 34 list only the earlier contents.
func TestVersionsWithoutTheCurrentContent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(root+"/r.md", "new content")
	st, err := e.agent.Get().Client.Stat(t.Context(), root+"/r.md")
	if err != nil {
		t.Fatal(err)
	}
	c := versionsServer(e, func(id string) string {
		return nc34Versions(e.nc.User(), id, nc34Version{st.Modified.Add(-2 * time.Hour), 3}, nc34Version{st.Modified.Add(-time.Hour), 5})
	})
	e.configure(func(a *nctool.Agent) { a.Client = c })
	env := e.ok(e.invoke("versions", `{"path":"r.md"}`))
	if _, cur := versionIDs(t, env); cur != -1 || env.Data["count"] != float64(2) || env.Data["earlier"] != float64(2) || env.Data["current_version_id"] != nil {
		t.Errorf("versions = %q (%+v)", listing(t, env), env.Data)
	}
	if msg := env.Data["message"].(string); !strings.Contains(msg, "2 earlier version(s); the current content is not among them") {
		t.Errorf("message = %q", msg)
	}
}
