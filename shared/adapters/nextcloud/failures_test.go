package nextcloud_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// TestFailureModes drives every failure the fake can produce through the
// client and checks the domain code, the caller-safe message, and the
// third-party facts a tool envelope carries.
func TestFailureModes(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name         string
		arrange      func(*ncfake.Server, *nextcloud.Client)
		act          func(*nextcloud.Client) error
		wantCode     string
		wantHTTP     int
		wantOCS      int
		wantMsg      string
		wantEndpoint string
	}{
		{
			name:         "401 wrong app password (WebDAV)",
			act:          func(c *nextcloud.Client) error { _, err := c.Stat(ctx, "x"); return err },
			arrange:      nil, // the client below uses a wrong password
			wantCode:     switchboard.EUNAUTHORIZED,
			wantHTTP:     http.StatusUnauthorized,
			wantMsg:      "check username and appPassword",
			wantEndpoint: "/remote.php/dav/files/alice/x",
		},
		{
			name:     "403 move onto itself",
			arrange:  func(f *ncfake.Server, _ *nextcloud.Client) { f.WriteFile("a.txt", []byte("a")) },
			act:      func(c *nextcloud.Client) error { _, err := c.Move(ctx, "a.txt", "a.txt", true); return err },
			wantCode: switchboard.EFORBIDDEN, wantHTTP: http.StatusForbidden,
			wantMsg: "Nextcloud refused the action",
		},
		{
			name: "403 public link without the enforced password",
			arrange: func(f *ncfake.Server, _ *nextcloud.Client) {
				f.WriteFile("a.txt", []byte("a"))
				f.SetPasswordEnforced(true)
			},
			act:      linkShare("a.txt"),
			wantCode: switchboard.EFORBIDDEN, wantHTTP: http.StatusForbidden, wantOCS: 403,
			wantMsg:      "the server requires a password for public links",
			wantEndpoint: "/ocs/v2.php/apps/files_sharing/api/v1/shares",
		},
		{
			name: "404 public links disabled",
			arrange: func(f *ncfake.Server, _ *nextcloud.Client) {
				f.WriteFile("a.txt", []byte("a"))
				f.SetPublicLinks(false)
			},
			act:      linkShare("a.txt"),
			wantCode: switchboard.EFORBIDDEN, wantHTTP: http.StatusNotFound, wantOCS: 404,
			wantMsg: "public links are disabled",
		},
		{
			name:     "404 unknown share recipient",
			arrange:  func(f *ncfake.Server, _ *nextcloud.Client) { f.WriteFile("a.txt", []byte("a")) },
			act:      userShare("a.txt", "nobody"),
			wantCode: switchboard.ENOTFOUND, wantHTTP: http.StatusNotFound, wantOCS: 404,
			wantMsg: "no such user or group",
		},
		{
			name: "404 expiry beyond the enforced maximum",
			arrange: func(f *ncfake.Server, _ *nextcloud.Client) {
				f.WriteFile("a.txt", []byte("a"))
				f.SetLinkExpiry(7, true)
			},
			act: func(c *nextcloud.Client) error {
				_, err := c.CreateShare(ctx, switchboard.ShareRequest{Path: "a.txt", Type: switchboard.ShareLink, ExpireDate: time.Now().AddDate(0, 0, 30)})
				return err
			},
			wantCode: switchboard.EINVALID, wantHTTP: http.StatusNotFound, wantOCS: 404,
			wantMsg: "refused the expiry date",
		},
		{
			name:     "404 share on a missing path",
			act:      linkShare("missing.txt"),
			wantCode: switchboard.ENOTFOUND, wantHTTP: http.StatusNotFound, wantOCS: 404,
			wantMsg: "does not exist",
		},
		{
			name:     "404 download of a missing file",
			act:      func(c *nextcloud.Client) error { _, err := c.Get(ctx, "Reports/none.md"); return err },
			wantCode: switchboard.ENOTFOUND, wantHTTP: http.StatusNotFound,
			wantMsg:      "does not exist",
			wantEndpoint: "/remote.php/dav/files/alice/Reports/none.md",
		},
		{
			// Nextcloud answers 404, not RFC 4918's 409, for a PUT into a
			// missing folder (the tool creates the folders and tries again).
			name: "404 upload into a missing folder",
			act: func(c *nextcloud.Client) error {
				_, err := c.Put(ctx, "No/such/dir.md", strings.NewReader("x"), 1, "")
				return err
			},
			wantCode: switchboard.ENOTFOUND, wantHTTP: http.StatusNotFound,
			wantMsg: "does not exist",
		},
		{
			name:     "412 OCS request without OCS-APIRequest",
			arrange:  func(_ *ncfake.Server, c *nextcloud.Client) { nextcloud.OmitOCSHeader(c) },
			act:      func(c *nextcloud.Client) error { _, err := c.Capabilities(ctx); return err },
			wantCode: switchboard.EINVALID, wantHTTP: http.StatusPreconditionFailed,
			wantMsg:      "CSRF",
			wantEndpoint: "/ocs/v2.php/cloud/capabilities",
		},
		{
			name: "423 upload onto a file open in Collabora",
			arrange: func(f *ncfake.Server, _ *nextcloud.Client) {
				f.WriteFile("Reports/q3.xlsx", []byte("x"))
				f.Lock("Reports/q3.xlsx")
			},
			act: func(c *nextcloud.Client) error {
				_, err := c.Put(ctx, "Reports/q3.xlsx", strings.NewReader("y"), 1, "")
				return err
			},
			wantCode: switchboard.ECONFLICT, wantHTTP: http.StatusLocked,
			wantMsg: "file is open/locked (probably in Collabora)",
		},
		{
			name:     "423 delete of a locked file",
			arrange:  func(f *ncfake.Server, _ *nextcloud.Client) { f.WriteFile("q3.xlsx", []byte("x")); f.Lock("q3.xlsx") },
			act:      func(c *nextcloud.Client) error { return c.Delete(ctx, "q3.xlsx") },
			wantCode: switchboard.ECONFLICT, wantHTTP: http.StatusLocked,
			wantMsg: "file is open/locked (probably in Collabora)",
		},
		{
			name: "423 move of a folder holding a locked file",
			arrange: func(f *ncfake.Server, _ *nextcloud.Client) {
				f.WriteFile("D/q3.xlsx", []byte("x"))
				f.Lock("D/q3.xlsx")
			},
			act:      func(c *nextcloud.Client) error { _, err := c.Move(ctx, "D", "E", false); return err },
			wantCode: switchboard.ECONFLICT, wantHTTP: http.StatusLocked,
			wantMsg: "file is open/locked (probably in Collabora)",
		},
		{
			name:    "507 quota exceeded",
			arrange: func(f *ncfake.Server, _ *nextcloud.Client) { f.SetQuota(10) },
			act: func(c *nextcloud.Client) error {
				_, err := c.Put(ctx, "big.bin", strings.NewReader(strings.Repeat("x", 11)), 11, "")
				return err
			},
			wantCode: switchboard.EFORBIDDEN, wantHTTP: http.StatusInsufficientStorage,
			wantMsg: "quota exceeded",
		},
		{
			name: "OCS 997 group share needs admin rights (v2: HTTP 401)",
			arrange: func(f *ncfake.Server, _ *nextcloud.Client) {
				f.WriteFile("a.txt", []byte("a"))
				f.AddGroup("staff")
				f.SetAdminOnly(true)
			},
			act:      groupShare("a.txt", "staff"),
			wantCode: switchboard.EFORBIDDEN, wantHTTP: http.StatusUnauthorized, wantOCS: 997,
			wantMsg: "needs admin rights",
		},
		{
			name: "OCS v1 997 (v1 answers it with HTTP 401 too)",
			arrange: func(f *ncfake.Server, c *nextcloud.Client) {
				f.WriteFile("a.txt", []byte("a"))
				f.AddGroup("staff")
				f.SetAdminOnly(true)
				nextcloud.UseOCSv1(c)
			},
			act:      groupShare("a.txt", "staff"),
			wantCode: switchboard.EFORBIDDEN, wantHTTP: http.StatusUnauthorized, wantOCS: 997,
			wantMsg:      "needs admin rights",
			wantEndpoint: "/ocs/v1.php/apps/files_sharing/api/v1/shares",
		},
		{
			name: "OCS v1 404 arrives as HTTP 200",
			arrange: func(_ *ncfake.Server, c *nextcloud.Client) {
				nextcloud.UseOCSv1(c)
			},
			act:      linkShare("missing.txt"),
			wantCode: switchboard.ENOTFOUND, wantHTTP: http.StatusOK, wantOCS: 404,
			wantMsg: "does not exist",
		},
		{
			name:     "503 maintenance (WebDAV)",
			arrange:  func(f *ncfake.Server, _ *nextcloud.Client) { f.SetDown(true) },
			act:      func(c *nextcloud.Client) error { _, err := c.List(ctx, ""); return err },
			wantCode: switchboard.EUNAVAILABLE, wantHTTP: http.StatusServiceUnavailable,
			wantMsg: "try again later",
		},
		{
			name:     "503 maintenance (OCS)",
			arrange:  func(f *ncfake.Server, _ *nextcloud.Client) { f.SetDown(true) },
			act:      func(c *nextcloud.Client) error { _, err := c.ListShares(ctx, ""); return err },
			wantCode: switchboard.EUNAVAILABLE, wantHTTP: http.StatusServiceUnavailable, wantOCS: 503,
			wantMsg: "try again later",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := ncfake.Start(t, ncfake.Options{})
			password := fake.Password()
			if tt.wantCode == switchboard.EUNAUTHORIZED {
				password = "wrong"
			}
			c := newClient(t, fake, password)
			if tt.arrange != nil {
				tt.arrange(fake, c)
			}
			err := tt.act(c)
			if err == nil {
				t.Fatal("no error")
			}
			wantCode(t, err, tt.wantCode)
			if got := switchboard.ErrorMessage(err); !strings.Contains(got, tt.wantMsg) {
				t.Errorf("message = %q, want it to contain %q", got, tt.wantMsg)
			}
			if got := nextcloud.HTTPStatus(err); got != tt.wantHTTP {
				t.Errorf("HTTPStatus = %d, want %d", got, tt.wantHTTP)
			}
			if got := nextcloud.OCSStatus(err); got != tt.wantOCS {
				t.Errorf("OCSStatus = %d, want %d", got, tt.wantOCS)
			}
			if tt.wantEndpoint != "" && nextcloud.Endpoint(err) != tt.wantEndpoint {
				t.Errorf("Endpoint = %q, want %q", nextcloud.Endpoint(err), tt.wantEndpoint)
			}
			if strings.Contains(switchboard.ErrorMessage(err), "Sabre") || strings.Contains(switchboard.ErrorMessage(err), fake.Password()) {
				t.Errorf("message leaks server internals or the password: %q", switchboard.ErrorMessage(err))
			}
		})
	}
}

func linkShare(p string) func(*nextcloud.Client) error {
	return func(c *nextcloud.Client) error {
		_, err := c.CreateShare(context.Background(), switchboard.ShareRequest{Path: p, Type: switchboard.ShareLink})
		return err
	}
}

func userShare(p, with string) func(*nextcloud.Client) error {
	return func(c *nextcloud.Client) error {
		_, err := c.CreateShare(context.Background(), switchboard.ShareRequest{Path: p, Type: switchboard.ShareUser, ShareWith: with})
		return err
	}
}

func groupShare(p, with string) func(*nextcloud.Client) error {
	return func(c *nextcloud.Client) error {
		_, err := c.CreateShare(context.Background(), switchboard.ShareRequest{Path: p, Type: switchboard.ShareGroup, ShareWith: with})
		return err
	}
}

// TestShareRateLimit: 20 creations per 10 minutes, then 429 with the wait
// from Retry-After and no retry by the client.
func TestShareRateLimit(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	fake := ncfake.Start(t, ncfake.Options{Now: clock.Now})
	c := newClient(t, fake, fake.Password())
	fake.WriteFile("a.txt", []byte("a"))
	for i := range 20 {
		if err := linkShare("a.txt")(c); err != nil {
			t.Fatalf("share %d: %v", i+1, err)
		}
		clock.Add(10 * time.Second)
	}
	err := linkShare("a.txt")(c)
	wantCode(t, err, switchboard.ERATELIMITED)
	var se *switchboard.Error
	if !errors.As(err, &se) {
		t.Fatalf("not a *switchboard.Error: %T", err)
	}
	// Nextcloud's limiter sends no Retry-After: the message says how long
	// the window can last instead.
	if se.RetryAfter != 0 {
		t.Errorf("RetryAfter = %v, want 0 (none sent)", se.RetryAfter)
	}
	if msg := switchboard.ErrorMessage(err); !strings.Contains(msg, "20 per 10 minutes") {
		t.Errorf("message = %q", msg)
	}
	if nextcloud.HTTPStatus(err) != http.StatusTooManyRequests {
		t.Errorf("HTTPStatus = %d", nextcloud.HTTPStatus(err))
	}
	if got := fake.Calls("POST shares"); got != 21 {
		t.Errorf("POST shares = %d, want 21 (no retry storm)", got)
	}
	clock.Add(400 * time.Second)
	if err := linkShare("a.txt")(c); err != nil {
		t.Errorf("after the wait: %v", err)
	}
}

// TestTransportFailures: no server, a cancelled context, a slow server.
func TestTransportFailures(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	c, err := nextcloud.New(deadURL, "alice", "pw", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Stat(context.Background(), "x")
	wantCode(t, err, switchboard.EUNAVAILABLE)
	if nextcloud.HTTPStatus(err) != 0 || nextcloud.Endpoint(err) != "/remote.php/dav/files/alice/x" {
		t.Errorf("HTTPStatus = %d, Endpoint = %q", nextcloud.HTTPStatus(err), nextcloud.Endpoint(err))
	}

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	c, _ = nextcloud.New(slow.URL, "alice", "pw", &http.Client{Timeout: 100 * time.Millisecond})
	_, err = c.Capabilities(context.Background())
	wantCode(t, err, switchboard.EUNAVAILABLE)

	c, _ = nextcloud.New(slow.URL, "alice", "pw", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = c.Get(ctx, "x")
	wantCode(t, err, switchboard.EUNAVAILABLE)
	if !strings.Contains(switchboard.ErrorMessage(err), "in time") {
		t.Errorf("message = %q", switchboard.ErrorMessage(err))
	}
}

// TestUndecodableAnswer: a 207 that is not XML is EINTERNAL, not a success.
func TestUndecodableAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusMultiStatus)
		w.Write([]byte("<html>proxy error</html>"))
	}))
	t.Cleanup(srv.Close)
	c, _ := nextcloud.New(srv.URL, "alice", "pw", nil)
	_, err := c.List(context.Background(), "")
	wantCode(t, err, switchboard.EINTERNAL)
	if nextcloud.HTTPStatus(err) != http.StatusMultiStatus {
		t.Errorf("HTTPStatus = %d", nextcloud.HTTPStatus(err))
	}
}

// TestShortReader: a reader shorter than the announced size is the caller's
// mistake, not a network failure; nothing is left behind.
func TestShortReader(t *testing.T) {
	for _, mode := range []nextcloud.ChunkMode{nextcloud.ChunkNever, nextcloud.ChunkAlways} {
		fake, c := setup(t)
		if err := c.SetChunking(nextcloud.Chunking{Mode: mode, Threshold: 1, ChunkSize: nextcloud.MinChunkSize}); err != nil {
			t.Fatal(err)
		}
		_, err := c.Put(context.Background(), "short.bin", strings.NewReader("only this"), 6<<20, "")
		wantCode(t, err, switchboard.EINVALID)
		if fake.PendingUploads() != 0 {
			t.Errorf("mode %d: upload left on the server", mode)
		}
		// The client may return before the server finished undoing the
		// aborted PUT (Nextcloud's .part handling): the fake's answer to it
		// comes after the undo.
		fake.Until(t, 2*time.Second, fmt.Sprintf("mode %d: the partial file removed", mode), func() bool {
			_, err := fake.File("short.bin")
			return err != nil
		})
	}
}

// TestPutOntoFolder: the folder survives a PUT aimed at it.
func TestPutOntoFolder(t *testing.T) {
	fake, c := setup(t)
	fake.WriteFile("Dir/keep.txt", []byte("k"))
	_, err := c.Put(context.Background(), "Dir", strings.NewReader("x"), 1, "")
	wantCode(t, err, switchboard.ECONFLICT) // Sabre answers 409 for PUT on a collection
	if b, err := fake.File("Dir/keep.txt"); err != nil || string(b) != "k" {
		t.Errorf("folder content after a failed PUT: %q, %v", b, err)
	}
}
