package nextcloud

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// TestClassify covers the mapping table directly, including answers the
// fake never gives.
func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		op      string
		he      httpError
		want    string
		wantMsg string
	}{
		{"401", "x", httpError{Status: 401}, switchboard.EUNAUTHORIZED, "appPassword"},
		{"403 generic", "x", httpError{Status: 403}, switchboard.EFORBIDDEN, "refused"},
		{"403 password on share", opCreateShare, httpError{Status: 403, OCS: true, OCSStatus: 403, Message: "Passwords are enforced for link and mail shares"},
			switchboard.EFORBIDDEN, "the server requires a password for public links"},
		{"403 password text elsewhere stays generic", "nextcloud.put", httpError{Status: 403, Message: "password"}, switchboard.EFORBIDDEN, "refused"},
		{"404", "x", httpError{Status: 404}, switchboard.ENOTFOUND, "does not exist"},
		{"405", "x", httpError{Status: 405}, switchboard.ECONFLICT, "does not allow"},
		{"409", "x", httpError{Status: 409}, switchboard.ECONFLICT, "parent folder"},
		{"412 OCS", "x", httpError{Status: 412, OCS: true}, switchboard.EINVALID, "OCS-APIRequest"},
		{"412 WebDAV", "x", httpError{Status: 412}, switchboard.ECONFLICT, "overwrite is off"},
		{"423 FileLocked", "x", httpError{Status: 423, Exception: exceptionFileLocked}, switchboard.ECONFLICT, "file is open/locked (probably in Collabora)"},
		{"423 WebDAV lock", "x", httpError{Status: 423, Exception: `Sabre\DAV\Exception\Locked`}, switchboard.ECONFLICT, "another WebDAV client"},
		{"507", "x", httpError{Status: 507}, switchboard.EFORBIDDEN, "quota exceeded"},
		{"429 with wait", "x", httpError{Status: 429, RetryAfter: 90 * time.Second}, switchboard.ERATELIMITED, "wait 1m30s"},
		{"429 without wait", "x", httpError{Status: 429}, switchboard.ERATELIMITED, "a few minutes"},
		{"400", "x", httpError{Status: 400}, switchboard.EINVALID, "invalid"},
		{"500", "x", httpError{Status: 500}, switchboard.EUNAVAILABLE, "HTTP 500"},
		{"502", "x", httpError{Status: 502}, switchboard.EUNAVAILABLE, "try again later"},
		{"OCS 997 on v1 (HTTP 200)", "x", httpError{Status: 200, OCS: true, OCSStatus: 997}, switchboard.EFORBIDDEN, "needs admin rights"},
		{"OCS 998", "x", httpError{Status: 404, OCS: true, OCSStatus: 998}, switchboard.ENOTFOUND, "OCS 998"},
		{"OCS 996", "x", httpError{Status: 500, OCS: true, OCSStatus: 996}, switchboard.EUNAVAILABLE, "OCS 996"},
		{"OCS 999", "x", httpError{Status: 500, OCS: true, OCSStatus: 999}, switchboard.EINTERNAL, "OCS 999"},
		{"OCS v1 404 on HTTP 200", "x", httpError{Status: 200, OCS: true, OCSStatus: 404}, switchboard.ENOTFOUND, "does not exist"},
		{"OCS odd code on HTTP 200", "x", httpError{Status: 200, OCS: true, OCSStatus: 102}, switchboard.EINTERNAL, "OCS status 102"},
		{"share: public disabled", opCreateShare, httpError{Status: 404, OCSStatus: 404, Message: "Public link sharing is disabled by the administrator"}, switchboard.EFORBIDDEN, "disabled"},
		{"share: expiry", opCreateShare, httpError{Status: 404, OCSStatus: 404, Message: "Cannot set expiration date more than 7 days in the future"}, switchboard.EINVALID, "expiry"},
		{"share: account", opCreateShare, httpError{Status: 404, OCSStatus: 404, Message: "Please specify a valid account to share with"}, switchboard.ENOTFOUND, "user or group"},
		{"transport", "x", httpError{Err: errors.New("connection refused")}, switchboard.EUNAVAILABLE, "unreachable"},
		{"cancelled", "x", httpError{Err: context.Canceled}, switchboard.EUNAVAILABLE, "cancelled"},
		{"deadline", "x", httpError{Err: context.DeadlineExceeded}, switchboard.EUNAVAILABLE, "in time"},
		{"undecodable", "x", httpError{Status: 207, Undecodable: true, Err: errors.New("EOF")}, switchboard.EINTERNAL, "cannot read"},
		{"unexpected 3xx", "x", httpError{Status: 302}, switchboard.EINTERNAL, "HTTP 302"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			he := tt.he
			err := classify(tt.op, &he)
			if got := switchboard.ErrorCode(err); got != tt.want {
				t.Errorf("code = %q, want %q", got, tt.want)
			}
			if got := switchboard.ErrorMessage(err); !strings.Contains(got, tt.wantMsg) {
				t.Errorf("message = %q, want it to contain %q", got, tt.wantMsg)
			}
			var se *switchboard.Error
			if errors.As(err, &se) && se.Op != tt.op {
				t.Errorf("Op = %q, want %q", se.Op, tt.op)
			}
			if HTTPStatus(err) != he.Status || OCSStatus(err) != he.OCSStatus {
				t.Errorf("HTTPStatus/OCSStatus = %d/%d", HTTPStatus(err), OCSStatus(err))
			}
			if tt.want == switchboard.ERATELIMITED && se.RetryAfter != he.RetryAfter {
				t.Errorf("RetryAfter = %v, want %v", se.RetryAfter, he.RetryAfter)
			}
		})
	}
}

func TestPathHelpers(t *testing.T) {
	c, err := New("https://example.org/next%20cloud/", "al ice", "pw", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, clean, files string }{
		{"", "/", "/remote.php/dav/files/al%20ice/"},
		{"a/b c/d#e?.txt", "/a/b c/d#e?.txt", "/remote.php/dav/files/al%20ice/a/b%20c/d%23e%3F.txt"},
		{"/../x/./y/", "/x/y", "/remote.php/dav/files/al%20ice/x/y"},
		{"100%.md", "/100%.md", "/remote.php/dav/files/al%20ice/100%25.md"},
	}
	for _, tt := range tests {
		cp, err := cleanPath(tt.in)
		if err != nil || cp != tt.clean {
			t.Errorf("cleanPath(%q) = %q, %v; want %q", tt.in, cp, err, tt.clean)
		}
		if got := c.filesPath(cp); got != tt.files {
			t.Errorf("filesPath(%q) = %q, want %q", cp, got, tt.files)
		}
	}
	if _, err := cleanPath("a\x00b"); err == nil {
		t.Errorf("cleanPath accepted a NUL byte")
	}
	if got := c.filesURL("/a b"); got != "https://example.org/next%20cloud/remote.php/dav/files/al%20ice/a%20b" {
		t.Errorf("filesURL = %q", got)
	}
	for href, want := range map[string]string{
		"/next%20cloud/remote.php/dav/files/al%20ice/":                      "/",
		"/next%20cloud/remote.php/dav/files/al%20ice/Docs/report%20v2.pdf":  "/Docs/report v2.pdf",
		"https://example.org/next%20cloud/remote.php/dav/files/al%20ice/D/": "/D",
	} {
		got, ok := c.relPath(href)
		if !ok || got != want {
			t.Errorf("relPath(%q) = %q, %v; want %q", href, got, ok, want)
		}
	}
	if _, ok := c.relPath("/remote.php/dav/files/al%20icex/a"); ok {
		t.Errorf("relPath accepted another user's href")
	}
	if got := parseOCFileID("00000123ocabc123"); got != 123 {
		t.Errorf("parseOCFileID = %d", got)
	}
	if got := unquoteETag(`W/"abc"`); got != "abc" {
		t.Errorf("unquoteETag = %q", got)
	}
}
