package nextcloud_test

import (
	"context"
	"encoding/xml"
	"flag"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current request bodies")

// TestGoldenRequestBodies pins the XML the client sends: PROPFIND asks for
// exactly the properties Entry carries, in the oc/nc/d namespaces of the
// ground truth; SEARCH is the documented basicsearch shape.
func TestGoldenRequestBodies(t *testing.T) {
	ctx := context.Background()
	after := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		golden    string
		route     string
		wantDepth string
		act       func(*nextcloud.Client) error
	}{
		{"propfind-depth0", "PROPFIND files", "0", func(c *nextcloud.Client) error { _, err := c.Stat(ctx, "Docs"); return err }},
		{"propfind-depth1", "PROPFIND files", "1", func(c *nextcloud.Client) error { _, err := c.List(ctx, "Docs"); return err }},
		{"propfind-quota", "PROPFIND files", "0", func(c *nextcloud.Client) error { _, err := c.Quota(ctx); return err }},
		{"proppatch-favorite-on", "PROPPATCH files", "", func(c *nextcloud.Client) error { return c.SetFavorite(ctx, "Docs/a b.txt", true) }},
		{"proppatch-favorite-off", "PROPPATCH files", "", func(c *nextcloud.Client) error { return c.SetFavorite(ctx, "Docs/a b.txt", false) }},
		{"propfind-trash", "PROPFIND trashbin", "1", func(c *nextcloud.Client) error { _, err := c.Trash(ctx); return err }},
		{"search-name", "SEARCH dav", "", func(c *nextcloud.Client) error {
			_, err := c.Search(ctx, switchboard.FileSearch{Folder: "Docs", Name: "*.pdf"})
			return err
		}},
		{"search-all-conditions", "SEARCH dav", "", func(c *nextcloud.Client) error {
			_, err := c.Search(ctx, switchboard.FileSearch{Folder: "Docs/Sub dir", Name: "q?_<&>*", Mime: "image/*", ModifiedAfter: after, Limit: 25})
			return err
		}},
		{"search-mime-exact", "SEARCH dav", "", func(c *nextcloud.Client) error {
			_, err := c.Search(ctx, switchboard.FileSearch{Mime: "application/pdf"})
			return err
		}},
		{"search-no-condition", "SEARCH dav", "", func(c *nextcloud.Client) error {
			_, err := c.Search(ctx, switchboard.FileSearch{})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			fake := ncfake.Start(t, ncfake.Options{})
			c := newClient(t, fake, fake.Password())
			fake.WriteFile("Docs/a b.txt", []byte("x"))
			fake.WriteFile("Docs/Sub dir/c.txt", []byte("x"))
			if err := tt.act(c); err != nil {
				t.Fatal(err)
			}
			var body []byte
			found := false
			for _, r := range fake.Requests() {
				if r.Route == tt.route {
					body, found = r.Body, true
					if got := r.Header.Get("Depth"); got != tt.wantDepth {
						t.Errorf("Depth = %q, want %q", got, tt.wantDepth)
					}
					if ct := r.Header.Get("Content-Type"); !strings.Contains(ct, "xml") {
						t.Errorf("Content-Type = %q, want XML", ct)
					}
				}
			}
			if !found {
				t.Fatalf("no %s request recorded", tt.route)
			}
			if err := xml.Unmarshal(body, new(struct{ XMLName xml.Name })); err != nil {
				t.Errorf("body is not well-formed XML: %v", err)
			}
			file := filepath.Join("testdata", tt.golden+".golden")
			if *update {
				if err := os.WriteFile(file, body, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update once)", err)
			}
			if string(body) != string(want) {
				t.Errorf("body differs from %s\n--- got ---\n%s\n--- want ---\n%s", file, body, want)
			}
		})
	}
}

// TestGoldenVersionsBody pins the versions PROPFIND, which needs a file id.
func TestGoldenVersionsBody(t *testing.T) {
	fake, c := setup(t)
	res := put(t, c, "v.txt", "1")
	if _, err := c.Versions(context.Background(), res.FileID); err != nil {
		t.Fatal(err)
	}
	for _, r := range fake.Requests() {
		if r.Route != "PROPFIND versions" {
			continue
		}
		file := filepath.Join("testdata", "propfind-versions.golden")
		if *update {
			os.WriteFile(file, r.Body, 0o644)
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Body) != string(want) {
			t.Errorf("versions body differs\n%s", r.Body)
		}
		return
	}
	t.Fatal("no PROPFIND versions recorded")
}
