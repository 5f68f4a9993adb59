package nextcloud_test

import (
	"context"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
)

// TestShareNoteIsScrubbed: the note Nextcloud mails to the recipient and the
// label never carry a configured secret, the app password or a URL
// password; the share's own password goes as given.
func TestShareNoteIsScrubbed(t *testing.T) {
	fake := ncfake.Start(t, ncfake.Options{})
	const configured = "rc-auth-token-Zq81xW"
	c, err := nextcloud.New(fake.URL, fake.User(), fake.Password(), &http.Client{Timeout: 30 * time.Second},
		nextcloud.WithScrubber(scrub.New([]string{configured})))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put(t, c, "a.txt", "hello")
	plant := "use " + configured + " or " + fake.Password() + " at https://bob:hunter22@nc.example/x"
	sh, err := c.CreateShare(ctx, switchboard.ShareRequest{Path: "a.txt", Type: switchboard.ShareLink,
		Password: "Share-Pass-4821!", Note: plant, Label: "label " + configured})
	if err != nil {
		t.Fatal(err)
	}
	var form url.Values
	for _, r := range fake.Requests() {
		if r.Route == "POST shares" {
			form, _ = url.ParseQuery(string(r.Body))
		}
	}
	if form == nil {
		t.Fatal("no POST shares recorded")
	}
	for _, leak := range []string{configured, fake.Password(), "hunter22"} {
		if strings.Contains(form.Get("note"), leak) || strings.Contains(form.Get("label"), leak) {
			t.Errorf("note %q / label %q carries %q", form.Get("note"), form.Get("label"), leak)
		}
	}
	if !strings.Contains(sh.Note, scrub.Mask) || !strings.Contains(sh.Label, scrub.Mask) {
		t.Errorf("share note %q, label %q: want the mask", sh.Note, sh.Label)
	}
	if form.Get("password") != "Share-Pass-4821!" {
		t.Errorf("the share password was changed: %q", form.Get("password"))
	}
}
