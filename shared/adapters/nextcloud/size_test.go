package nextcloud_test

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"golang.org/x/net/webdav"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
)

// plainWebDAV is a standard WebDAV server (golang.org/x/net/webdav over
// memory) at Nextcloud's files path for user "alice": it knows
// getcontentlength but none of Nextcloud's oc: properties. It holds
// /reports/q3.md (50 bytes).
func plainWebDAV(t *testing.T) *nextcloud.Client {
	t.Helper()
	fs := webdav.NewMemFS()
	ctx := context.Background()
	if err := fs.Mkdir(ctx, "/reports", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.OpenFile(ctx, "/reports/q3.md", os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(strings.Repeat("x", 50))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	h := &webdav.Handler{Prefix: "/remote.php/dav/files/alice", FileSystem: fs, LockSystem: webdav.NewMemLS()}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := nextcloud.New(srv.URL, "alice", "app-password", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSizesOnAnyWebDAVServer: a file's size comes from oc:size where the
// server has it and from getcontentlength where it has not; a size nobody
// stated is unknown (-1), never 0.
func TestSizesOnAnyWebDAVServer(t *testing.T) {
	ctx := context.Background()
	t.Run("plain WebDAV", func(t *testing.T) {
		c := plainWebDAV(t)
		e, err := c.Stat(ctx, "/reports/q3.md")
		if err != nil {
			t.Fatal(err)
		}
		if e.IsDir || e.Size != 50 {
			t.Errorf("Stat(q3.md): dir %v size %d, want a file of 50", e.IsDir, e.Size)
		}
		list, err := c.Propfind(ctx, "/reports", 1)
		if err != nil {
			t.Fatal(err)
		}
		sizes := map[string]int64{}
		for _, e := range list {
			sizes[e.Path] = e.Size
		}
		if sizes["/reports/q3.md"] != 50 || sizes["/reports"] != -1 {
			t.Errorf("Propfind sizes = %v, want q3.md 50 and the folder unknown (-1)", sizes)
		}
	})
	t.Run("Nextcloud", func(t *testing.T) {
		_, c := setup(t)
		if err := c.MkdirAll(ctx, "/reports"); err != nil {
			t.Fatal(err)
		}
		put(t, c, "/reports/q3.md", strings.Repeat("x", 50))
		put(t, c, "/reports/q4.md", strings.Repeat("y", 30))
		e, err := c.Stat(ctx, "/reports/q3.md")
		if err != nil || e.Size != 50 {
			t.Errorf("Stat(q3.md) = size %d, %v; want 50", e.Size, err)
		}
		dir, err := c.Stat(ctx, "/reports")
		if err != nil || !dir.IsDir || dir.Size != 80 {
			t.Errorf("Stat(reports) = size %d, %v; want the folder's oc:size 80", dir.Size, err)
		}
	})
}
