package nextcloud_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncreal"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The contract suite: every WebDAV and OCS request Switchboard makes, with
// the status codes, headers and bodies a real Nextcloud 34 answers. It runs
// against ncfake always and against a real server when the environment
// names one (package ncreal), so the fake cannot drift from the server
// people run: where the two disagree on a status, one of them fails.
//
// Facts the real server taught us, each asserted below:
//   - PUT into a missing folder is 404 (Sabre NotFound), not RFC 4918's
//     409; MKCOL, MOVE and COPY with a missing parent are 409. The chunk
//     PUTs of a chunked upload into a missing folder are 404 too.
//   - The share limit's 429 (the 21st creation in 10 minutes, failed
//     creations count) has no Retry-After and an empty text/html body.
//   - The versions list includes the current content, whose GET is 404;
//     versions are keyed by the whole-second mtime.
//   - A file in the trash no longer counts towards quota-used-bytes.
//   - Two writes within the same second leave the same ETag (it follows
//     the whole-second mtime), so an ETag alone cannot tell quick writes
//     apart; ncfake's ETag changes with every write (not pinned here).

// contractTarget is one account on one server.
type contractTarget struct {
	url, user, password string
	recipient           string // a user the account may share with
	// lock makes another user hold a lock on p until unlock runs.
	lock func(t *testing.T, p string) (unlock func())
	// newAccount gives a fresh account on the same server (own limits).
	newAccount func(t *testing.T) *contractTarget
}

func TestContractNcfake(t *testing.T) {
	var fresh func(t *testing.T) *contractTarget
	fresh = func(t *testing.T) *contractTarget {
		fake := ncfake.Start(t, ncfake.Options{Version: "34.0.1"})
		fake.AddUser("richard")
		fake.SetQuota(1 << 30) // the real tier's accounts get 1 GB
		return &contractTarget{url: fake.URL, user: fake.User(), password: fake.Password(), recipient: "richard",
			lock: func(t *testing.T, p string) func() {
				fake.Lock(p)
				return func() { fake.Unlock(p) }
			},
			newAccount: fresh}
	}
	runContract(t, fresh)
}

func TestContractRealNextcloud(t *testing.T) {
	srv := ncreal.FromEnv(t)
	var fresh func(t *testing.T) *contractTarget
	fresh = func(t *testing.T) *contractTarget {
		owner, holder := srv.NewAccount(t, "agents"), srv.NewAccount(t, "richard")
		return &contractTarget{url: srv.URL, user: owner.User, password: owner.Password, recipient: holder.User,
			lock:       func(t *testing.T, p string) func() { return srv.Lock(t, owner, holder, p) },
			newAccount: fresh}
	}
	runContract(t, fresh)
}

func runContract(t *testing.T, fresh func(t *testing.T) *contractTarget) {
	ctx := context.Background()
	tg := fresh(t)
	c := tg.client(t)

	t.Run("PUT: 201 new, 204 overwrite, same file id, 404 into a missing folder, 409 onto a folder", func(t *testing.T) {
		d := tg.dir(t, c)
		res := put(t, c, d+"/a.txt", "one")
		if !res.Created || res.FileID == 0 || res.ETag == "" {
			t.Errorf("new file: %+v, want Created, a file id and an ETag", res)
		}
		// Nextcloud keeps the ETag of a file written twice within the same
		// second (it follows the whole-second mtime); the overwrite below
		// comes after a write that stated an older mtime, so it must change.
		if st, _, body := tg.raw(t, http.MethodPut, d+"/a.txt", map[string]string{"X-OC-Mtime": "1700000000"}, "one"); st != 204 {
			t.Fatalf("overwrite with X-OC-Mtime: %d %s, want 204", st, body)
		}
		before, err := c.Stat(ctx, d+"/a.txt")
		if err != nil {
			t.Fatal(err)
		}
		again := put(t, c, d+"/a.txt", "two!")
		if again.Created || again.FileID != res.FileID || again.ETag == before.ETag || again.ETag == "" {
			t.Errorf("overwrite: %+v after %+v (ETag %s), want 204, the same id, a new ETag", again, res, before.ETag)
		}
		st, _, body := tg.raw(t, http.MethodPut, d+"/missing/b.txt", nil, "x")
		if st != http.StatusNotFound || !strings.Contains(body, `Sabre\DAV\Exception\NotFound`) {
			t.Errorf("PUT into a missing folder: %d %s, want 404 Sabre NotFound", st, body)
		}
		_, err = c.Put(ctx, d+"/missing/b.txt", strings.NewReader("x"), 1, "")
		if switchboard.ErrorCode(err) != switchboard.ENOTFOUND || nextcloud.HTTPStatus(err) != 404 {
			t.Errorf("client Put into a missing folder: %v, want not_found / 404", err)
		}
		if st, _, _ := tg.raw(t, http.MethodPut, d+"/a.txt/c.txt", nil, "x"); st != http.StatusNotFound {
			t.Errorf("PUT below a file: %d, want 404", st)
		}
		if st, _, body := tg.raw(t, http.MethodPut, d, nil, "x"); st != http.StatusConflict {
			t.Errorf("PUT onto a folder: %d %s, want 409", st, body)
		}
	})

	t.Run("MKCOL: 201 new, 405 existing, 409 missing parent or a file in the way; MkdirAll walks", func(t *testing.T) {
		d := tg.dir(t, c)
		for _, tc := range []struct {
			p    string
			want int
		}{{d + "/x", 201}, {d + "/x", 405}, {d + "/no/such", 409}, {d + "/f.txt", 201}, {d + "/f.txt/below", 409}} {
			if tc.p == d+"/f.txt" {
				put(t, c, d+"/f.txt", "a file in the way")
				continue
			}
			if st, _, body := tg.raw(t, "MKCOL", tc.p, nil, ""); st != tc.want {
				t.Errorf("MKCOL %s: %d %s, want %d", tc.p, st, body, tc.want)
			}
		}
		if err := c.MkdirAll(ctx, d+"/p/q/r"); err != nil {
			t.Fatal(err)
		}
		if e, err := c.Stat(ctx, d+"/p/q/r"); err != nil || !e.IsDir {
			t.Errorf("after MkdirAll: %+v %v", e, err)
		}
	})

	t.Run("PROPFIND and GET: entries, sizes, ids; 404 for a missing path", func(t *testing.T) {
		d := tg.dir(t, c)
		res := put(t, c, d+"/r ä.md", "report")
		if err := c.Mkdir(ctx, d+"/sub"); err != nil {
			t.Fatal(err)
		}
		put(t, c, d+"/sub/s.txt", "12345")
		e, err := c.Stat(ctx, d+"/r ä.md")
		if err != nil {
			t.Fatal(err)
		}
		if e.Name != "r ä.md" || e.IsDir || e.Size != 6 || e.FileID != res.FileID || e.ETag == "" || e.Permissions == "" || e.Modified.IsZero() {
			t.Errorf("Stat = %+v (put %+v)", e, res)
		}
		list, err := c.List(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(list); !slices.Equal(got, []string{"r ä.md", "sub"}) {
			t.Errorf("List = %v", got)
		}
		if i := slices.IndexFunc(list, func(e switchboard.FileInfo) bool { return e.Name == "sub" }); i < 0 || !list[i].IsDir || list[i].Size != 5 {
			t.Errorf("folder entry = %+v, want a folder of 5 bytes (oc:size is recursive)", list)
		}
		if got := get(t, c, d+"/r ä.md"); got != "report" {
			t.Errorf("GET = %q", got)
		}
		_, err = c.Stat(ctx, d+"/none.md")
		if switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
			t.Errorf("Stat of a missing path: %v, want not_found", err)
		}
		if st, _, _ := tg.raw(t, http.MethodGet, d+"/none.md", nil, ""); st != 404 {
			t.Errorf("GET of a missing path: %d, want 404", st)
		}
		if st, _, _ := tg.raw(t, "PROPFIND", d+"/r ä.md/below", map[string]string{"Depth": "0"}, ""); st != 404 {
			t.Errorf("PROPFIND below a file: %d, want 404", st)
		}
	})

	t.Run("MOVE and COPY: 201, 204 overwrite, 409 missing parent, 412 no overwrite, 404 missing source", func(t *testing.T) {
		d := tg.dir(t, c)
		put(t, c, d+"/a.txt", "a")
		put(t, c, d+"/b.txt", "b")
		dst := func(p string) map[string]string { return map[string]string{"Destination": tg.fileURL(p)} }
		for _, tc := range []struct {
			method, from, to string
			hdr              map[string]string
			want             int
		}{
			{"COPY", d + "/a.txt", d + "/c.txt", nil, 201},
			{"COPY", d + "/a.txt", d + "/c.txt", nil, 204},
			{"COPY", d + "/a.txt", d + "/c.txt", map[string]string{"Overwrite": "F"}, 412},
			{"COPY", d + "/a.txt", d + "/none/c.txt", nil, 409},
			{"MOVE", d + "/a.txt", d + "/none/a.txt", nil, 409},
			{"MOVE", d + "/gone.txt", d + "/x.txt", nil, 404},
			{"MOVE", d + "/b.txt", d + "/m.txt", nil, 201},
		} {
			h := dst(tc.to)
			for k, v := range tc.hdr {
				h[k] = v
			}
			if st, _, body := tg.raw(t, tc.method, tc.from, h, ""); st != tc.want {
				t.Errorf("%s %s → %s %v: %d %s, want %d", tc.method, tc.from, tc.to, tc.hdr, st, body, tc.want)
			}
		}
		if created, err := c.Move(ctx, d+"/m.txt", d+"/c.txt", true); err != nil || created {
			t.Errorf("Move onto an existing file: created=%v %v, want overwritten", created, err)
		}
		if _, err := c.Copy(ctx, d+"/c.txt", d+"/none/c.txt", false); nextcloud.HTTPStatus(err) != 409 {
			t.Errorf("Copy into a missing folder: %v, want 409", err)
		}
	})

	t.Run("DELETE moves to the trash: list, restore, empty; 404 for a missing path", func(t *testing.T) {
		d := tg.dir(t, c)
		put(t, c, d+"/t.txt", "trash me")
		if err := c.Delete(ctx, d+"/t.txt"); err != nil {
			t.Fatal(err)
		}
		if st, _, _ := tg.raw(t, http.MethodDelete, d+"/t.txt", nil, ""); st != 404 {
			t.Errorf("DELETE of a missing file: %d, want 404", st)
		}
		items, err := c.Trash(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(items, func(it switchboard.TrashItem) bool { return it.OriginalLocation == d+"/t.txt" })
		if i < 0 {
			t.Fatalf("trash = %+v, want %s", items, d+"/t.txt")
		}
		if items[i].Name != "t.txt" || items[i].ID == "" || items[i].DeletedAt.IsZero() {
			t.Errorf("trash item = %+v", items[i])
		}
		if err := c.RestoreTrash(ctx, items[i].ID); err != nil {
			t.Fatal(err)
		}
		if got := get(t, c, d+"/t.txt"); got != "trash me" {
			t.Errorf("restored content = %q", got)
		}
		if err := c.Delete(ctx, d+"/t.txt"); err != nil {
			t.Fatal(err)
		}
		if err := c.EmptyTrash(ctx); err != nil {
			t.Fatal(err)
		}
		if items, err := c.Trash(ctx); err != nil || len(items) != 0 {
			t.Errorf("after EmptyTrash: %+v %v", items, err)
		}
	})

	t.Run("SEARCH by name, folder and type", func(t *testing.T) {
		d := tg.dir(t, c)
		put(t, c, d+"/q3-report.md", "# q3")
		put(t, c, d+"/q3-data.csv", "a,b")
		put(t, c, d+"/notes.txt", "n")
		hits, err := c.Search(ctx, switchboard.FileSearch{Folder: d, Name: "q3-*"})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(hits); !slices.Equal(got, []string{"q3-data.csv", "q3-report.md"}) {
			t.Errorf("name q3-*: %v", got)
		}
		hits, err = c.Search(ctx, switchboard.FileSearch{Folder: d, Mime: "text/csv"})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(hits); !slices.Equal(got, []string{"q3-data.csv"}) {
			t.Errorf("mime text/csv: %v", got)
		}
	})

	t.Run("versions: the current content is listed too, older ones are readable and restorable", func(t *testing.T) {
		d := tg.dir(t, c)
		// Versions are keyed by the whole-second mtime: the first write
		// states an old one (X-OC-Mtime) instead of waiting a second.
		if st, _, body := tg.raw(t, http.MethodPut, d+"/v.txt", map[string]string{"X-OC-Mtime": "1700000000"}, "first"); st != 201 {
			t.Fatalf("PUT with X-OC-Mtime: %d %s", st, body)
		}
		res := put(t, c, d+"/v.txt", "second!")
		vs, err := c.Versions(ctx, res.FileID)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 2 {
			t.Fatalf("versions = %+v, want 2 (the older one and the current content)", vs)
		}
		old := slices.IndexFunc(vs, func(v switchboard.FileVersion) bool { return v.ID == "1700000000" })
		if old < 0 || vs[old].Size != 5 {
			t.Fatalf("versions = %+v, want one keyed 1700000000 of 5 bytes", vs)
		}
		if old != 0 {
			t.Errorf("versions = %+v, want the older one first (Nextcloud lists oldest first)", vs)
		}
		cur := vs[1-old]
		if st, _, _ := tg.rawPath(t, http.MethodGet, tg.versionsPath(res.FileID)+"/"+cur.ID, nil, ""); st != 404 {
			t.Errorf("GET of the current entry %s: %d, want 404", cur.ID, st)
		}
		if st, _, body := tg.rawPath(t, http.MethodGet, tg.versionsPath(res.FileID)+"/1700000000", nil, ""); st != 200 || body != "first" {
			t.Errorf("GET of the older version: %d %q", st, body)
		}
		if err := c.RestoreVersion(ctx, res.FileID, "1700000000"); err != nil {
			t.Fatal(err)
		}
		if got := get(t, c, d+"/v.txt"); got != "first" {
			t.Errorf("after restore: %q", got)
		}
		if _, err := c.Versions(ctx, 999999999); switchboard.ErrorCode(err) != switchboard.ENOTFOUND {
			t.Errorf("versions of an unknown id: %v, want not_found", err)
		}
	})

	t.Run("chunked upload v2: assembled bytes; 404 into a missing folder, 415 below a file, 400 onto a folder", func(t *testing.T) {
		d := tg.dir(t, c)
		cc := tg.client(t)
		if err := cc.SetChunking(nextcloud.Chunking{Mode: nextcloud.ChunkAlways, Threshold: 1, ChunkSize: nextcloud.MinChunkSize}); err != nil {
			t.Fatal(err)
		}
		data := make([]byte, nextcloud.MinChunkSize+1234)
		rand.Read(data)
		res, err := cc.Put(ctx, d+"/big.bin", bytes.NewReader(data), int64(len(data)), "")
		if err != nil {
			t.Fatal(err)
		}
		if !res.Chunked || !res.Created {
			t.Errorf("chunked put = %+v", res)
		}
		if got := get(t, c, d+"/big.bin"); got != string(data) {
			t.Errorf("assembled %d bytes, want the %d sent", len(got), len(data))
		}
		calls := cc.Calls()
		if calls["MKCOL uploads"] != 1 || calls["PUT uploads"] != 2 || calls["MOVE uploads"] != 1 {
			t.Errorf("calls = %v, want MKCOL + 2 chunk PUTs + MOVE", calls)
		}
		_, err = cc.Put(ctx, d+"/none/big.bin", bytes.NewReader(data), int64(len(data)), "")
		if nextcloud.HTTPStatus(err) != 404 {
			t.Errorf("chunked upload into a missing folder: %v, want 404", err)
		}
		// A file in the way of the folder shows only at the final MOVE
		// (415); a folder at the destination too (400).
		put(t, c, d+"/file.txt", "x")
		if err := c.Mkdir(ctx, d+"/folder"); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			dest string
			want int
		}{{d + "/file.txt/big.bin", 415}, {d + "/folder", 400}} {
			if _, err := cc.Put(ctx, tc.dest, bytes.NewReader(data), int64(len(data)), ""); nextcloud.HTTPStatus(err) != tc.want {
				t.Errorf("chunked upload to %s: %v, want HTTP %d", tc.dest, err, tc.want)
			}
		}
	})

	t.Run("capabilities", func(t *testing.T) {
		caps, err := c.Capabilities(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if caps.Major < 28 {
			t.Errorf("capabilities: version %q (major %d), want 28 or newer", caps.Version, caps.Major)
		}
		for _, f := range []string{"dav.chunking", "sharing.api", "sharing.public", "files.versioning", "files.undelete"} {
			if has, _ := caps.Has(f); !has {
				t.Errorf("capabilities lack %s (apps %v)", f, caps.Apps)
			}
		}
	})

	t.Run("shares: user share, public link, list, delete; 404 for a missing path", func(t *testing.T) {
		d := tg.dir(t, c)
		put(t, c, d+"/s.md", "shared bytes")
		day := time.Now().UTC().AddDate(0, 0, 3)
		us, err := c.CreateShare(ctx, switchboard.ShareRequest{Path: d + "/s.md", Type: switchboard.ShareUser, ShareWith: tg.recipient, ExpireDate: day})
		if err != nil {
			t.Fatal(err)
		}
		if us.ID == "" || us.ShareWith != tg.recipient || us.Type != switchboard.ShareUser || us.Path != d+"/s.md" {
			t.Errorf("user share = %+v", us)
		}
		// An explicit expiry holds for user shares too, as the end of that day.
		if want := time.Date(day.Year(), day.Month(), day.Day(), 23, 59, 59, 0, time.UTC); !us.Expiration.Equal(want) {
			t.Errorf("user share expiry = %v, want %v", us.Expiration, want)
		}
		ls, err := c.CreateShare(ctx, switchboard.ShareRequest{Path: d + "/s.md", Type: switchboard.ShareLink, Password: "correct-horse-battery-9"})
		if err != nil {
			t.Fatal(err)
		}
		if ls.Token == "" || !strings.HasSuffix(ls.URL, "/s/"+ls.Token) || !ls.HasPassword {
			t.Errorf("link share = %+v", ls)
		}
		list, err := c.ListShares(ctx, d+"/s.md")
		if err != nil || len(list) != 2 {
			t.Fatalf("ListShares = %+v %v, want 2", list, err)
		}
		if err := c.DeleteShare(ctx, us.ID); err != nil {
			t.Fatal(err)
		}
		if list, _ := c.ListShares(ctx, d+"/s.md"); len(list) != 1 {
			t.Errorf("after delete: %+v", list)
		}
		_, err = c.CreateShare(ctx, switchboard.ShareRequest{Path: d + "/gone.md", Type: switchboard.ShareUser, ShareWith: tg.recipient})
		if nextcloud.HTTPStatus(err) != 404 && nextcloud.OCSStatus(err) != 404 {
			t.Errorf("share of a missing path: %v, want 404", err)
		}
	})

	t.Run("favorite", func(t *testing.T) {
		d := tg.dir(t, c)
		put(t, c, d+"/f.md", "f")
		if err := c.SetFavorite(ctx, d+"/f.md", true); err != nil {
			t.Fatal(err)
		}
		if e, err := c.Stat(ctx, d+"/f.md"); err != nil || !e.Favorite {
			t.Errorf("after SetFavorite: %+v %v", e, err)
		}
	})

	t.Run("423: a file another user holds locked refuses PUT and DELETE", func(t *testing.T) {
		d := tg.dir(t, c)
		put(t, c, d+"/locked.md", "v1")
		unlock := tg.lock(t, d+"/locked.md")
		st, _, body := tg.raw(t, http.MethodPut, d+"/locked.md", nil, "v2")
		if st != http.StatusLocked {
			t.Errorf("PUT on a locked file: %d %s, want 423", st, body)
		}
		_, err := c.Put(ctx, d+"/locked.md", strings.NewReader("v2"), 2, "")
		if switchboard.ErrorCode(err) != switchboard.ECONFLICT || nextcloud.HTTPStatus(err) != 423 {
			t.Errorf("client Put on a locked file: %v, want conflict / 423", err)
		}
		if st, _, _ := tg.raw(t, http.MethodDelete, d+"/locked.md", nil, ""); st != http.StatusLocked {
			t.Errorf("DELETE on a locked file: %d, want 423", st)
		}
		unlock()
		put(t, c, d+"/locked.md", "v2")
	})

	t.Run("quota: used grows with a file and drops when it goes to the trash", func(t *testing.T) {
		tq := tg.newAccount(t)
		cq := tq.client(t)
		before, err := cq.Quota(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if before.Unlimited || before.Available <= 0 {
			t.Errorf("quota of a 1 GB account = %+v", before)
		}
		data := strings.Repeat("q", 10000)
		put(t, cq, "/q.txt", data)
		mid, _ := cq.Quota(ctx)
		if mid.Used-before.Used != 10000 {
			t.Errorf("used %d → %d after a 10000-byte file", before.Used, mid.Used)
		}
		if err := cq.Delete(ctx, "/q.txt"); err != nil {
			t.Fatal(err)
		}
		after, _ := cq.Quota(ctx)
		if after.Used != before.Used {
			t.Errorf("used after the file went to the trash = %d, want %d (the trash does not count)", after.Used, before.Used)
		}
	})

	t.Run("429: the 21st share creation in the window, failed ones count, no Retry-After", func(t *testing.T) {
		tl := tg.newAccount(t)
		cl := tl.client(t)
		put(t, cl, "/l.md", "l")
		// Two creations that fail (a missing path) use up the limit too.
		for range 2 {
			if _, err := cl.CreateShare(ctx, switchboard.ShareRequest{Path: "/gone.md", Type: switchboard.ShareLink}); err == nil {
				t.Fatal("share of a missing path succeeded")
			}
		}
		for i := range 18 {
			if _, err := cl.CreateShare(ctx, switchboard.ShareRequest{Path: "/l.md", Type: switchboard.ShareLink}); err != nil {
				t.Fatalf("share %d: %v", i+3, err)
			}
		}
		form := url.Values{"path": {"/l.md"}, "shareType": {"3"}}.Encode()
		st, h, body := tl.rawPath(t, http.MethodPost, "/ocs/v2.php/apps/files_sharing/api/v1/shares?format=json",
			map[string]string{"OCS-APIRequest": "true", "Content-Type": "application/x-www-form-urlencoded"}, form)
		if st != http.StatusTooManyRequests || h.Get("Retry-After") != "" || body != "" || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Errorf("21st creation: %d Retry-After %q type %q body %q; want a bare 429", st, h.Get("Retry-After"), h.Get("Content-Type"), body)
		}
		_, err := cl.CreateShare(ctx, switchboard.ShareRequest{Path: "/l.md", Type: switchboard.ShareLink})
		if switchboard.ErrorCode(err) != switchboard.ERATELIMITED {
			t.Errorf("client after the limit: %v, want rate_limited", err)
		}
	})

	t.Run("401 for a wrong password", func(t *testing.T) {
		bad := *tg
		bad.password = "wrong-password-123456"
		if st, _, _ := bad.raw(t, "PROPFIND", "/", map[string]string{"Depth": "0"}, ""); st != 401 {
			t.Errorf("wrong password: %d, want 401", st)
		}
	})
}

func names(es []switchboard.FileInfo) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	slices.Sort(out)
	return out
}

func (tg *contractTarget) client(t *testing.T) *nextcloud.Client {
	t.Helper()
	c, err := nextcloud.New(tg.url, tg.user, tg.password, &http.Client{Timeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dir makes a folder of the test's own, named after it.
func (tg *contractTarget) dir(t *testing.T, c *nextcloud.Client) string {
	t.Helper()
	d := "/contract-" + strconv.Itoa(int(time.Now().UnixNano()%1e9))
	if err := c.Mkdir(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	return d
}

func (tg *contractTarget) filesPath(p string) string {
	segs := strings.Split(strings.TrimLeft(p, "/"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/remote.php/dav/files/" + url.PathEscape(tg.user) + "/" + strings.Join(segs, "/")
}

func (tg *contractTarget) fileURL(p string) string { return tg.url + tg.filesPath(p) }

func (tg *contractTarget) versionsPath(id int64) string {
	return "/remote.php/dav/versions/" + url.PathEscape(tg.user) + "/versions/" + strconv.FormatInt(id, 10)
}

// raw sends one request on a file path as the account.
func (tg *contractTarget) raw(t *testing.T, method, p string, hdr map[string]string, body string) (int, http.Header, string) {
	return tg.rawPath(t, method, tg.filesPath(p), hdr, body)
}

func (tg *contractTarget) rawPath(t *testing.T, method, path string, hdr map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, tg.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(tg.user, tg.password)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}
