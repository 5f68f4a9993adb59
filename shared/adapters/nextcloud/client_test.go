package nextcloud_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

func setup(t testing.TB) (*ncfake.Server, *nextcloud.Client) {
	t.Helper()
	fake := ncfake.Start(t, ncfake.Options{})
	return fake, newClient(t, fake, fake.Password())
}

func newClient(t testing.TB, fake *ncfake.Server, password string) *nextcloud.Client {
	t.Helper()
	c, err := nextcloud.New(fake.URL, fake.User(), password, &http.Client{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func put(t testing.TB, c *nextcloud.Client, p, content string) switchboard.FilePut {
	t.Helper()
	res, err := c.Put(context.Background(), p, strings.NewReader(content), int64(len(content)), "text/plain")
	if err != nil {
		t.Fatalf("Put(%q): %v", p, err)
	}
	return res
}

func get(t testing.TB, c *nextcloud.Client, p string) string {
	t.Helper()
	d, err := c.Get(context.Background(), p)
	if err != nil {
		t.Fatalf("Get(%q): %v", p, err)
	}
	defer d.Body.Close()
	b, err := io.ReadAll(d.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := switchboard.ErrorCode(err); got != code {
		t.Fatalf("error code = %q, want %q (err: %v)", got, code, err)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name, base, user, pass string
		wantErr                bool
	}{
		{"plain", "https://cloud.example.org", "alice", "pw", false},
		{"subpath and trailing slash", "https://example.org/nextcloud/", "alice", "pw", false},
		{"no scheme", "cloud.example.org", "alice", "pw", true},
		{"ftp", "ftp://cloud.example.org", "alice", "pw", true},
		{"credentials in URL", "https://bob:pw@cloud.example.org", "alice", "pw", true},
		{"query", "https://cloud.example.org?x=1", "alice", "pw", true},
		{"empty user", "https://cloud.example.org", "", "pw", true},
		{"slash in user", "https://cloud.example.org", "a/b", "pw", true},
		{"empty password", "https://cloud.example.org", "alice", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := nextcloud.New(tt.base, tt.user, tt.pass, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("New() err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				wantCode(t, err, switchboard.EINVALID)
			}
		})
	}
}

func TestPutAndGet(t *testing.T) {
	fake, c := setup(t)
	first := put(t, c, "report.md", "v1")
	if !first.Created || first.FileID == 0 || first.ETag == "" || first.Chunked {
		t.Fatalf("first Put = %+v, want Created with id and etag, not chunked", first)
	}
	second := put(t, c, "/report.md", "version two")
	if second.Created {
		t.Errorf("overwrite reported Created (want 204)")
	}
	if second.FileID != first.FileID {
		t.Errorf("overwrite changed file id: %d, want %d", second.FileID, first.FileID)
	}
	if second.ETag == first.ETag {
		t.Errorf("ETag did not change on overwrite")
	}
	if got := get(t, c, "report.md"); got != "version two" {
		t.Errorf("Get = %q, want %q", got, "version two")
	}
	d, err := c.Get(context.Background(), "report.md")
	if err != nil {
		t.Fatal(err)
	}
	d.Body.Close()
	if d.Size != int64(len("version two")) || !strings.HasPrefix(d.ContentType, "text/markdown") || d.Modified.IsZero() {
		t.Errorf("Download = %+v", d)
	}
	if got := fake.Calls("PUT files"); got != 2 {
		t.Errorf("PUT files calls = %d, want 2", got)
	}
	if _, err := c.Put(context.Background(), "x", strings.NewReader(""), -1, ""); err == nil {
		t.Errorf("Put with size -1 succeeded")
	} else {
		wantCode(t, err, switchboard.EINVALID)
	}
}

func TestPathsAreEscapedPerSegment(t *testing.T) {
	fake, c := setup(t)
	ctx := context.Background()
	names := []string{
		"Docs/report v2.pdf",
		"Docs/Grüße & Co.md",
		"Docs/50% done #1?.txt",
		"Docs/semi;colon+plus=eq.txt",
	}
	if err := c.MkdirAll(ctx, "Docs"); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		put(t, c, n, n)
		if got := get(t, c, n); got != n {
			t.Errorf("Get(%q) = %q", n, got)
		}
		b, err := fake.File(n)
		if err != nil || string(b) != n {
			t.Errorf("fake has %q = %q, %v", n, b, err)
		}
	}
	es, err := c.List(ctx, "Docs")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, strings.TrimPrefix(e.Path, "/"))
	}
	slices.Sort(got)
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("List paths = %q, want %q", got, want)
	}
	for _, r := range fake.Requests() {
		if r.Method == http.MethodPut && strings.Contains(r.Path, " ") {
			t.Errorf("unescaped request path %q", r.Path)
		}
	}
	// ".." cannot climb above the user root.
	put(t, c, "../../outside.txt", "x")
	if _, err := fake.File("outside.txt"); err != nil {
		t.Errorf("../../outside.txt did not land at the root: %v", err)
	}
}

func TestMkdir(t *testing.T) {
	fake, c := setup(t)
	ctx := context.Background()
	if err := c.Mkdir(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	if err := c.Mkdir(ctx, "A"); err != nil {
		t.Errorf("Mkdir on an existing folder (405) = %v, want nil", err)
	}
	err := c.Mkdir(ctx, "X/Y")
	wantCode(t, err, switchboard.ECONFLICT)
	if nextcloud.HTTPStatus(err) != http.StatusConflict {
		t.Errorf("HTTPStatus = %d, want 409", nextcloud.HTTPStatus(err))
	}

	fake.ResetRequests()
	if err := c.MkdirAll(ctx, "A/b/c/d"); err != nil {
		t.Fatal(err)
	}
	// A exists: MKCOL d (409), c (409), b (201), c (201), d (201).
	if got := fake.Calls("MKCOL files"); got != 5 {
		t.Errorf("MkdirAll with three missing levels sent %d MKCOLs, want 5", got)
	}
	fake.ResetRequests()
	if err := c.MkdirAll(ctx, "A/b/c/e"); err != nil {
		t.Fatal(err)
	}
	if got := fake.Calls("MKCOL files"); got != 1 {
		t.Errorf("MkdirAll with an existing parent sent %d MKCOLs, want 1", got)
	}
	e, err := c.Stat(ctx, "A/b/c/e")
	if err != nil || !e.IsDir {
		t.Errorf("Stat(A/b/c/e) = %+v, %v", e, err)
	}
	if err := c.MkdirAll(ctx, "/"); err != nil {
		t.Errorf("MkdirAll(/) = %v", err)
	}
}

func TestPropfind(t *testing.T) {
	fake, c := setup(t)
	ctx := context.Background()
	fake.AddUser("bob")
	if err := c.MkdirAll(ctx, "Docs/Sub"); err != nil {
		t.Fatal(err)
	}
	res := put(t, c, "Docs/a.txt", "12345")
	put(t, c, "Docs/Sub/b.txt", "1234567890")
	if err := c.SetFavorite(ctx, "Docs/a.txt", true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateShare(ctx, switchboard.ShareRequest{Path: "Docs/a.txt", Type: switchboard.ShareLink}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateShare(ctx, switchboard.ShareRequest{Path: "Docs/a.txt", Type: switchboard.ShareUser, ShareWith: "bob"}); err != nil {
		t.Fatal(err)
	}

	es, err := c.Propfind(ctx, "Docs", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[0].Path != "/Docs" {
		t.Fatalf("Propfind depth 1 = %+v, want Docs first and two children", es)
	}
	dir := es[0]
	if !dir.IsDir || dir.Size != 15 || dir.Permissions != "RGDNVCK" || dir.FileID == 0 || dir.Name != "Docs" {
		t.Errorf("folder entry = %+v, want dir, size 15 (recursive), RGDNVCK", dir)
	}
	a, err := c.Stat(ctx, "Docs/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if a.IsDir || a.Size != 5 || a.FileID != res.FileID || a.ETag != res.ETag || a.Permissions != "RGDNVW" ||
		!a.Favorite || a.Modified.IsZero() || a.Name != "a.txt" {
		t.Errorf("file entry = %+v (put: %+v)", a, res)
	}
	slices.Sort(a.ShareTypes)
	if !slices.Equal(a.ShareTypes, []switchboard.ShareType{switchboard.ShareUser, switchboard.ShareLink}) {
		t.Errorf("ShareTypes = %v, want [0 3]", a.ShareTypes)
	}
	if err := c.SetFavorite(ctx, "Docs/a.txt", false); err != nil {
		t.Fatal(err)
	}
	if a, _ := c.Stat(ctx, "Docs/a.txt"); a.Favorite {
		t.Errorf("favorite still set after SetFavorite(false)")
	}
	root, err := c.Stat(ctx, "")
	if err != nil || root.Path != "/" || !root.IsDir || root.Name != "" {
		t.Errorf("Stat(root) = %+v, %v", root, err)
	}
	_, err = c.Propfind(ctx, "Docs", 2)
	wantCode(t, err, switchboard.EINVALID)
	_, err = c.Stat(ctx, "nope")
	wantCode(t, err, switchboard.ENOTFOUND)
	err = c.SetFavorite(ctx, "nope", true)
	wantCode(t, err, switchboard.ENOTFOUND)
}

func TestMoveAndCopy(t *testing.T) {
	_, c := setup(t)
	ctx := context.Background()
	a := put(t, c, "a.txt", "A")
	put(t, c, "b.txt", "B")
	if err := c.Mkdir(ctx, "Dir"); err != nil {
		t.Fatal(err)
	}

	created, err := c.Move(ctx, "a.txt", "Dir/a.txt", false)
	if err != nil || !created {
		t.Fatalf("Move = %v, %v, want created", created, err)
	}
	moved, _ := c.Stat(ctx, "Dir/a.txt")
	if moved.FileID != a.FileID {
		t.Errorf("Move changed the file id: %d, want %d", moved.FileID, a.FileID)
	}
	_, err = c.Move(ctx, "b.txt", "Dir/a.txt", false)
	wantCode(t, err, switchboard.ECONFLICT)
	if nextcloud.HTTPStatus(err) != http.StatusPreconditionFailed {
		t.Errorf("HTTPStatus = %d, want 412", nextcloud.HTTPStatus(err))
	}
	created, err = c.Move(ctx, "b.txt", "Dir/a.txt", true)
	if err != nil || created {
		t.Fatalf("Move overwrite = %v, %v, want replaced (204)", created, err)
	}
	if got := get(t, c, "Dir/a.txt"); got != "B" {
		t.Errorf("after overwrite = %q, want B", got)
	}
	_, err = c.Move(ctx, "Dir/a.txt", "Missing/a.txt", false)
	wantCode(t, err, switchboard.ECONFLICT)
	if nextcloud.HTTPStatus(err) != http.StatusConflict {
		t.Errorf("HTTPStatus = %d, want 409", nextcloud.HTTPStatus(err))
	}
	_, err = c.Move(ctx, "nope", "x", false)
	wantCode(t, err, switchboard.ENOTFOUND)

	created, err = c.Copy(ctx, "Dir", "Dir2", false)
	if err != nil || !created {
		t.Fatalf("Copy = %v, %v", created, err)
	}
	cp, _ := c.Stat(ctx, "Dir2/a.txt")
	orig, _ := c.Stat(ctx, "Dir/a.txt")
	if cp.FileID == 0 || cp.FileID == orig.FileID {
		t.Errorf("copy file id = %d, original %d: want a new id", cp.FileID, orig.FileID)
	}
	_, err = c.Move(ctx, "/", "x", true)
	wantCode(t, err, switchboard.EINVALID)
}

func TestDeleteAndTrash(t *testing.T) {
	fake, c := setup(t)
	ctx := context.Background()
	if err := c.MkdirAll(ctx, "Reports/Old"); err != nil {
		t.Fatal(err)
	}
	res := put(t, c, "Reports/q1.md", "quarter one")
	put(t, c, "Reports/Old/q0.md", "quarter zero")

	if err := c.Delete(ctx, "Reports/q1.md"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "Reports/Old"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, c.Delete(ctx, "Reports/q1.md"), switchboard.ENOTFOUND)
	wantCode(t, c.Delete(ctx, "/"), switchboard.EINVALID)

	items, err := c.Trash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Fatalf("Trash = %+v, want 2 items", items)
	}
	var file, dir switchboard.TrashItem
	for _, it := range items {
		if it.IsDir {
			dir = it
		} else {
			file = it
		}
	}
	if file.Name != "q1.md" || file.OriginalLocation != "/Reports/q1.md" || file.FileID != res.FileID ||
		file.Size != 11 || file.DeletedAt.IsZero() || !strings.HasPrefix(file.ID, "q1.md.d") {
		t.Errorf("file trash item = %+v", file)
	}
	if dir.Name != "Old" || dir.OriginalLocation != "/Reports/Old" || dir.Size != 12 {
		t.Errorf("folder trash item = %+v", dir)
	}

	if err := c.RestoreTrash(ctx, file.ID); err != nil {
		t.Fatal(err)
	}
	if got := get(t, c, "Reports/q1.md"); got != "quarter one" {
		t.Errorf("restored content = %q", got)
	}
	if e, _ := c.Stat(ctx, "Reports/q1.md"); e.FileID != res.FileID {
		t.Errorf("restored file id = %d, want %d", e.FileID, res.FileID)
	}
	if err := c.RestoreTrash(ctx, dir.ID); err != nil {
		t.Fatal(err)
	}
	if got := get(t, c, "Reports/Old/q0.md"); got != "quarter zero" {
		t.Errorf("restored folder content = %q", got)
	}
	wantCode(t, c.RestoreTrash(ctx, "nope.d1"), switchboard.ENOTFOUND)
	wantCode(t, c.RestoreTrash(ctx, "a/b"), switchboard.EINVALID)

	if err := c.Delete(ctx, "Reports"); err != nil {
		t.Fatal(err)
	}
	if err := c.EmptyTrash(ctx); err != nil {
		t.Fatal(err)
	}
	if items, err := c.Trash(ctx); err != nil || len(items) != 0 {
		t.Errorf("Trash after EmptyTrash = %+v, %v", items, err)
	}
	if got := fake.Calls("DELETE trashbin"); got != 1 {
		t.Errorf("DELETE trashbin calls = %d, want 1", got)
	}
}

func TestVersions(t *testing.T) {
	_, c := setup(t)
	ctx := context.Background()
	res := put(t, c, "notes.md", "one")
	put(t, c, "notes.md", "two!")
	put(t, c, "notes.md", "three")

	vs, err := c.Versions(ctx, res.FileID)
	if err != nil {
		t.Fatal(err)
	}
	// Nextcloud lists the current content too (oldest first).
	if len(vs) != 3 {
		t.Fatalf("Versions = %+v, want 3 (one per overwrite and the current content)", vs)
	}
	sizes := []int64{vs[0].Size, vs[1].Size, vs[2].Size}
	if !slices.Equal(sizes, []int64{3, 4, 5}) || vs[0].ID == "" || vs[0].Modified.IsZero() || vs[0].ETag == "" {
		t.Errorf("Versions = %+v", vs)
	}
	var one switchboard.FileVersion
	for _, v := range vs {
		if v.Size == 3 {
			one = v
		}
	}
	if err := c.RestoreVersion(ctx, res.FileID, one.ID); err != nil {
		t.Fatal(err)
	}
	if got := get(t, c, "notes.md"); got != "one" {
		t.Errorf("after RestoreVersion = %q, want one", got)
	}
	vs, _ = c.Versions(ctx, res.FileID)
	if len(vs) != 3 {
		t.Errorf("after restore %d versions, want 3 (three became a version, one left the list, the current one)", len(vs))
	}
	_, err = c.Versions(ctx, 999999)
	wantCode(t, err, switchboard.ENOTFOUND)
	wantCode(t, c.RestoreVersion(ctx, res.FileID, "123"), switchboard.ENOTFOUND)
	wantCode(t, c.RestoreVersion(ctx, res.FileID, ""), switchboard.EINVALID)
}

func TestSearch(t *testing.T) {
	fake, c := setup(t)
	ctx := context.Background()
	for _, p := range []string{"Reports/2024", "Other"} {
		if err := c.MkdirAll(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"Reports/q1.pdf", "Reports/Q2.PDF", "Reports/2024/summary.md",
		"Reports/2024/chart.png", "Other/q3.pdf"} {
		put(t, c, p, p)
	}
	future := time.Now().Add(time.Hour)
	tests := []struct {
		name string
		q    switchboard.FileSearch
		want []string
	}{
		{"name glob, case-insensitive", switchboard.FileSearch{Folder: "Reports", Name: "q*.pdf"},
			[]string{"/Reports/Q2.PDF", "/Reports/q1.pdf"}},
		{"whole tree", switchboard.FileSearch{Name: "q?.pdf"},
			[]string{"/Other/q3.pdf", "/Reports/Q2.PDF", "/Reports/q1.pdf"}},
		{"mime exact", switchboard.FileSearch{Folder: "Reports", Mime: "text/markdown"},
			[]string{"/Reports/2024/summary.md"}},
		{"mime glob", switchboard.FileSearch{Mime: "image/*"}, []string{"/Reports/2024/chart.png"}},
		{"name and mime", switchboard.FileSearch{Name: "*1*", Mime: "application/pdf"}, []string{"/Reports/q1.pdf"}},
		{"modified after now-1h", switchboard.FileSearch{Folder: "Reports/2024", ModifiedAfter: time.Now().Add(-time.Hour)},
			[]string{"/Reports/2024/chart.png", "/Reports/2024/summary.md"}},
		{"modified after the future", switchboard.FileSearch{ModifiedAfter: future}, nil},
		{"limit", switchboard.FileSearch{Name: "*.pdf", Limit: 1}, []string{"/Other/q3.pdf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, err := c.Search(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Path)
				if e.FileID == 0 || e.ETag == "" {
					t.Errorf("entry %+v lacks id or etag", e)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Search = %q, want %q", got, tt.want)
			}
		})
	}
	_, err := c.Search(ctx, switchboard.FileSearch{Folder: "Nope"})
	wantCode(t, err, switchboard.ENOTFOUND)
	if got := fake.Calls("SEARCH dav"); got != len(tests)+1 {
		t.Errorf("SEARCH dav calls = %d, want %d", got, len(tests)+1)
	}
}

func TestQuota(t *testing.T) {
	fake, c := setup(t)
	ctx := context.Background()
	put(t, c, "a.bin", strings.Repeat("x", 1000))
	q, err := c.Quota(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !q.Unlimited || q.Used != 1000 {
		t.Errorf("Quota = %+v, want unlimited, 1000 used", q)
	}
	fake.SetQuota(5000)
	q, err = c.Quota(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if q.Unlimited || q.Used != 1000 || q.Available != 4000 {
		t.Errorf("Quota = %+v, want 1000 used, 4000 available", q)
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestChunkedUpload12MB(t *testing.T) {
	fake, c := setup(t)
	ctx := context.Background()
	if err := c.SetChunking(nextcloud.Chunking{Mode: nextcloud.ChunkAuto, Threshold: 1 << 20, ChunkSize: nextcloud.MinChunkSize}); err != nil {
		t.Fatal(err)
	}
	if err := c.Mkdir(ctx, "Big"); err != nil {
		t.Fatal(err)
	}
	body := randomBytes(12 << 20)
	res, err := c.Put(ctx, "Big/data.bin", bytes.NewReader(body), int64(len(body)), "application/octet-stream")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Chunked || !res.Created || res.FileID == 0 || res.ETag == "" {
		t.Errorf("Put = %+v, want chunked and created with id and etag", res)
	}
	got, err := fake.File("Big/data.bin")
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("assembled file differs (len %d, want %d, err %v)", len(got), len(body), err)
	}
	for route, want := range map[string]int{"GET capabilities": 1, "MKCOL uploads": 1, "PUT uploads": 3, "MOVE uploads": 1, "PUT files": 0, "DELETE uploads": 0} {
		if got := fake.Calls(route); got != want {
			t.Errorf("%s calls = %d, want %d", route, got, want)
		}
	}
	var chunkPaths []string
	for _, r := range fake.Requests() {
		if r.Route == "PUT uploads" {
			chunkPaths = append(chunkPaths, r.Path[strings.LastIndexByte(r.Path, '/')+1:])
			if !strings.HasSuffix(r.Header.Get("Destination"), "/remote.php/dav/files/alice/Big/data.bin") {
				t.Errorf("chunk PUT Destination = %q", r.Header.Get("Destination"))
			}
		}
		if r.Route == "MOVE uploads" && r.Header.Get("OC-Total-Length") != "12582912" {
			t.Errorf("MOVE OC-Total-Length = %q", r.Header.Get("OC-Total-Length"))
		}
	}
	if !slices.Equal(chunkPaths, []string{"00001", "00002", "00003"}) {
		t.Errorf("chunk names = %q", chunkPaths)
	}
	if fake.PendingUploads() != 0 {
		t.Errorf("%d uploads left on the server", fake.PendingUploads())
	}

	// A second upload overwrites (204) and does not ask capabilities again.
	res, err = c.Put(ctx, "Big/data.bin", bytes.NewReader(body[:6<<20]), 6<<20, "")
	if err != nil || res.Created || !res.Chunked {
		t.Fatalf("second chunked Put = %+v, %v", res, err)
	}
	if got := fake.Calls("GET capabilities"); got != 1 {
		t.Errorf("capabilities asked %d times, want once", got)
	}
	if got, _ := fake.File("Big/data.bin"); !bytes.Equal(got, body[:6<<20]) {
		t.Errorf("overwritten content differs")
	}
}

func TestChunkingPolicy(t *testing.T) {
	tests := []struct {
		name        string
		mode        nextcloud.ChunkMode
		serverOffer bool
		size        int
		wantChunked bool
	}{
		{"auto, offered, above threshold", nextcloud.ChunkAuto, true, 2 << 20, true},
		{"auto, not offered", nextcloud.ChunkAuto, false, 2 << 20, false},
		{"auto, below threshold", nextcloud.ChunkAuto, true, 1 << 20, false},
		{"always", nextcloud.ChunkAlways, false, 2 << 20, false}, // server refuses: see below
		{"never", nextcloud.ChunkNever, true, 2 << 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, c := setup(t)
			fake.SetChunking(tt.serverOffer)
			if err := c.SetChunking(nextcloud.Chunking{Mode: tt.mode, Threshold: 1 << 20, ChunkSize: nextcloud.MinChunkSize}); err != nil {
				t.Fatal(err)
			}
			body := randomBytes(tt.size)
			res, err := c.Put(context.Background(), "f.bin", bytes.NewReader(body), int64(len(body)), "")
			if tt.mode == nextcloud.ChunkAlways && !tt.serverOffer {
				// Forcing chunking on a server without an uploads collection fails clearly.
				wantCode(t, err, switchboard.ENOTFOUND)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Chunked != tt.wantChunked {
				t.Errorf("Chunked = %v, want %v", res.Chunked, tt.wantChunked)
			}
			if got, _ := fake.File("f.bin"); !bytes.Equal(got, body) {
				t.Errorf("content differs")
			}
		})
	}
	_, c := setup(t)
	wantCode(t, c.SetChunking(nextcloud.Chunking{ChunkSize: 1 << 20}), switchboard.EINVALID)
}

func TestChunkedUploadFailuresAbort(t *testing.T) {
	tests := []struct {
		name      string
		arrange   func(*ncfake.Server)
		wantCode  string
		wantHTTP  int
		wantChunk int // chunk PUTs sent before the failure
	}{
		{"destination locked", func(f *ncfake.Server) { f.Lock("big.bin") }, switchboard.ECONFLICT, http.StatusLocked, 3},
		{"quota known at MKCOL", func(f *ncfake.Server) { f.SetQuota(1 << 20) }, switchboard.EFORBIDDEN, http.StatusInsufficientStorage, 0},
		{"server minimum chunk larger", func(f *ncfake.Server) { f.SetMinChunkSize(6 << 20) }, switchboard.EINVALID, http.StatusBadRequest, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, c := setup(t)
			tt.arrange(fake)
			if err := c.SetChunking(nextcloud.Chunking{Mode: nextcloud.ChunkAlways, Threshold: 1, ChunkSize: nextcloud.MinChunkSize}); err != nil {
				t.Fatal(err)
			}
			body := randomBytes(12 << 20)
			_, err := c.Put(context.Background(), "big.bin", bytes.NewReader(body), int64(len(body)), "")
			wantCode(t, err, tt.wantCode)
			if got := nextcloud.HTTPStatus(err); got != tt.wantHTTP {
				t.Errorf("HTTPStatus = %d, want %d", got, tt.wantHTTP)
			}
			if got := fake.Calls("PUT uploads"); got != tt.wantChunk {
				t.Errorf("chunk PUTs = %d, want %d", got, tt.wantChunk)
			}
			wantDelete := 1
			if tt.wantChunk == 0 {
				wantDelete = 0 // MKCOL itself failed: nothing to clean up
			}
			if got := fake.Calls("DELETE uploads"); got != wantDelete {
				t.Errorf("DELETE uploads = %d, want %d", got, wantDelete)
			}
			if fake.PendingUploads() != 0 {
				t.Errorf("%d uploads left on the server", fake.PendingUploads())
			}
			if _, err := fake.File("big.bin"); err == nil {
				t.Errorf("a failed upload left a file behind")
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	fake, c := setup(t)
	ctx := context.Background()
	caps, err := c.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if caps.Version != "30.0.2" || caps.Major != 30 || caps.Chunking != "1.0" || !caps.BigFileChunking ||
		!caps.Versioning || !caps.Undelete || !caps.Sharing.PublicEnabled || caps.Sharing.PasswordEnforced ||
		caps.Sharing.ExpireDateEnabled || !caps.Sharing.APIEnabled || caps.Sharing.DefaultPermissions != 31 || len(caps.Raw) == 0 {
		t.Errorf("default capabilities = %+v", caps)
	}
	fake.SetVersion("31.0.4")
	fake.SetChunking(false)
	fake.SetPublicLinks(false)
	fake.SetPasswordEnforced(true)
	fake.SetLinkExpiry(7, true)
	caps, err = c.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := caps.Sharing
	if caps.Version != "31.0.4" || caps.Chunking != "" || caps.BigFileChunking || s.PublicEnabled ||
		!s.PasswordEnforced || !s.ExpireDateEnabled || s.ExpireDateDays != 7 || !s.ExpireDateEnforced {
		t.Errorf("toggled capabilities = %+v", caps)
	}
	for feature, want := range map[string]bool{
		"sharing": true, "sharing.public": false, "sharing.public.password_enforced": true,
		"sharing.public.expire_date_enforced": true, "dav.chunking": false, "files.versioning": true,
		"files.undelete": true, "talk": false, "sharing.federation": true,
	} {
		has, known := caps.Has(feature)
		if !known || has != want {
			t.Errorf("Has(%q) = %v, %v; want %v, true", feature, has, known, want)
		}
	}
	for _, f := range switchboard.FileFeatures() {
		if _, known := caps.Has(f); !known {
			t.Errorf("Features lists %q but Has does not know it", f)
		}
	}
	if _, known := caps.Has("bogus"); known {
		t.Errorf("Has(bogus) known")
	}
}

func TestShares(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 5, 1, 22, 30, 0, 0, time.UTC))
	fake := ncfake.Start(t, ncfake.Options{Now: clock.Now})
	c := newClient(t, fake, fake.Password())
	ctx := context.Background()
	fake.AddUser("bob")
	fake.AddGroup("finance")
	if err := c.Mkdir(ctx, "Docs"); err != nil {
		t.Fatal(err)
	}
	res := put(t, c, "Docs/a.pdf", "%PDF")

	user, err := c.CreateShare(ctx, switchboard.ShareRequest{Path: "Docs/a.pdf", Type: switchboard.ShareUser, ShareWith: "bob", Permissions: switchboard.PermRead})
	if err != nil {
		t.Fatal(err)
	}
	if user.ID == "" || user.Type != switchboard.ShareUser || user.ShareWith != "bob" || user.Permissions != 1 ||
		user.Path != "/Docs/a.pdf" || user.FileID != res.FileID || user.URL != "" || user.Token != "" || user.ItemType != "file" {
		t.Errorf("user share = %+v", user)
	}
	group, err := c.CreateShare(ctx, switchboard.ShareRequest{Path: "Docs", Type: switchboard.ShareGroup, ShareWith: "finance"})
	if err != nil || group.ItemType != "folder" || group.Permissions != 31 {
		t.Errorf("group share = %+v, %v", group, err)
	}

	fake.SetLinkExpiry(14, false)
	link, err := c.CreateShare(ctx, switchboard.ShareRequest{Path: "Docs/a.pdf", Type: switchboard.ShareLink, Password: "s3cret-pass", Note: "for the board"})
	if err != nil {
		t.Fatal(err)
	}
	if link.Token == "" || link.URL != fake.URL+"/s/"+link.Token || !link.HasPassword || link.Note != "for the board" {
		t.Errorf("link share = %+v", link)
	}
	// Nextcloud answers the end of the expiry day (server time).
	if want := time.Date(2026, 5, 15, 23, 59, 59, 0, time.UTC); !link.Expiration.Equal(want) {
		t.Errorf("default expiry = %v, want %v", link.Expiration, want)
	}
	if got := link.DownloadURL(""); got != link.URL+"/download" {
		t.Errorf("DownloadURL = %q", got)
	}
	if got := link.DownloadURL("a b.md"); got != link.URL+"/download?files=a+b.md&path=%2F" {
		t.Errorf("DownloadURL(file) = %q", got)
	}
	explicit, err := c.CreateShare(ctx, switchboard.ShareRequest{Path: "Docs/a.pdf", Type: switchboard.ShareLink,
		ExpireDate: time.Date(2026, 5, 3, 23, 0, 0, 0, time.FixedZone("CEST", 2*3600))})
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 5, 3, 23, 59, 59, 0, time.UTC); !explicit.Expiration.Equal(want) || explicit.HasPassword {
		t.Errorf("explicit expiry share = %+v, want expiry %v (UTC date), no password", explicit, want)
	}
	none, err := c.CreateShare(ctx, switchboard.ShareRequest{Path: "Docs/a.pdf", Type: switchboard.ShareLink, NoExpiry: true})
	if err != nil || !none.Expiration.IsZero() {
		t.Errorf("NoExpiry share = %+v, %v", none, err)
	}

	onFile, err := c.ListShares(ctx, "Docs/a.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if len(onFile) != 4 {
		t.Errorf("ListShares(Docs/a.pdf) = %d shares, want 4", len(onFile))
	}
	all, err := c.ListShares(ctx, "")
	if err != nil || len(all) != 5 {
		t.Errorf("ListShares() = %d, %v; want 5", len(all), err)
	}
	if err := c.DeleteShare(ctx, link.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, c.DeleteShare(ctx, link.ID), switchboard.ENOTFOUND)
	wantCode(t, c.DeleteShare(ctx, "1/2"), switchboard.EINVALID)
	all, _ = c.ListShares(ctx, "")
	if len(all) != 4 {
		t.Errorf("after DeleteShare %d shares, want 4", len(all))
	}
	_, err = c.ListShares(ctx, "nope")
	wantCode(t, err, switchboard.ENOTFOUND)

	// Shares follow the file when it moves.
	if _, err := c.Move(ctx, "Docs/a.pdf", "Docs/b.pdf", false); err != nil {
		t.Fatal(err)
	}
	moved, err := c.ListShares(ctx, "Docs/b.pdf")
	if err != nil || len(moved) != 3 {
		t.Errorf("shares after move = %d, %v; want 3", len(moved), err)
	}
}

func TestCalls(t *testing.T) {
	_, c := setup(t)
	ctx := context.Background()
	put(t, c, "a.txt", "a")
	c.Stat(ctx, "a.txt")
	c.Stat(ctx, "missing")
	c.Capabilities(ctx)
	got := c.Calls()
	want := map[string]int{"PUT files": 1, "PROPFIND files": 2, "GET capabilities": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Calls()[%q] = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	got["PUT files"] = 99
	if c.Calls()["PUT files"] != 1 {
		t.Errorf("Calls() returned the internal map")
	}
}
