package switchboard_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// answered is a RemoteFailure as an adapter keeps it.
type answered struct{ status, code int }

func (a answered) Error() string          { return fmt.Sprintf("HTTP %d", a.status) }
func (a answered) RemoteStatus() int      { return a.status }
func (a answered) RemoteEndpoint() string { return "/remote.php/dav/files/x" }
func (a answered) RemoteCode() int        { return a.code }

func TestRemoteFailureIsReadThroughTheDomainError(t *testing.T) {
	err := fmt.Errorf("upload: %w", sb.Wrap("nextcloud.put", sb.ECONFLICT, "locked", answered{423, 0}))
	if got, want := sb.HTTPStatus(err), 423; got != want {
		t.Errorf("HTTPStatus = %d, want %d", got, want)
	}
	if got, want := sb.Endpoint(err), "/remote.php/dav/files/x"; got != want {
		t.Errorf("Endpoint = %q, want %q", got, want)
	}
	if got := sb.ServiceStatus(sb.Wrap("nextcloud.share", sb.EFORBIDDEN, "admin", answered{200, 997})); got != 997 {
		t.Errorf("ServiceStatus = %d, want 997", got)
	}
	plain := errors.New("no server answered")
	if sb.HTTPStatus(plain) != 0 || sb.Endpoint(plain) != "" || sb.ServiceStatus(nil) != 0 {
		t.Error("an error without a RemoteFailure reports a remote answer")
	}
}

func TestEveryFileFeatureIsKnown(t *testing.T) {
	caps := &sb.FilesCapabilities{Chunking: "1.0", Apps: []string{"spreed"}, Sharing: sb.SharingCapabilities{APIEnabled: true, PublicEnabled: true}}
	for _, f := range sb.FileFeatures() {
		if _, known := caps.Has(f); !known {
			t.Errorf("Has(%q) is unknown", f)
		}
	}
	for _, f := range []string{"talk", "sharing.public", "dav.chunking"} {
		if has, _ := caps.Has(f); !has {
			t.Errorf("Has(%q) = false, want true", f)
		}
	}
	if _, known := caps.Has("nope"); known {
		t.Error(`Has("nope") is known`)
	}
}

func TestShareDownloadURL(t *testing.T) {
	s := sb.Share{URL: "https://cloud.example.org/s/AbC"}
	for _, tc := range []struct{ file, want string }{
		{"", "https://cloud.example.org/s/AbC/download"},
		{"q3 report.pdf", "https://cloud.example.org/s/AbC/download?files=q3+report.pdf&path=%2F"},
	} {
		if got := s.DownloadURL(tc.file); got != tc.want {
			t.Errorf("DownloadURL(%q) = %q, want %q", tc.file, got, tc.want)
		}
	}
	if got := (sb.Share{}).DownloadURL("x"); got != "" {
		t.Errorf("a share without URL has download URL %q", got)
	}
}

func TestConvertFormats(t *testing.T) {
	got := sb.ConvertFormats()
	if !slices.IsSorted(got) || len(got) != 6 {
		t.Errorf("ConvertFormats = %v, want six sorted formats", got)
	}
	for _, f := range got {
		if sb.ConvertContentType(f) == "" {
			t.Errorf("format %s has no content type", f)
		}
	}
	if sb.ConvertContentType("md") != "" {
		t.Error("md has a content type")
	}
}
