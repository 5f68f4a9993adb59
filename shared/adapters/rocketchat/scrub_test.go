package rocketchat

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
)

// TestOutboundTextIsScrubbed plants a configured secret, the client's own
// token and well-known secret shapes in every text the client sends and
// checks that none reaches the server, while the mask and ordinary ids do.
func TestOutboundTextIsScrubbed(t *testing.T) {
	f := newFixture(t)
	const configured = "nc-app-password-Zq81x"
	awsID := "AKIA" + "QWERTYUIOPASDFGH"
	c, err := New(f.s.URL, f.ids["hermes"], f.token, f.s.Client(), WithScrubber(scrub.New([]string{configured})))
	if err != nil {
		t.Fatal(err)
	}
	plant := "see " + configured + " / " + f.token + " / " + awsID + " / https://bob:hunter22@nc.example/x / Authorization: Bearer eyJhbGciOi.secret-part"
	leaks := []string{configured, f.token, awsID[4:], "hunter22", "secret-part"}
	keep := "message id aBcD2345EfGh6789j, https://chat.example.org/channel/general?msg=Xy7pQ2mN4kL9wR3tZ"

	sent, err := c.PostMessage(ctx(t), f.general, plant+"\n"+keep, "")
	if err != nil {
		t.Fatal(err)
	}
	dm, err := c.PostMessage(ctx(t), "@alice", plant, "")
	if err != nil {
		t.Fatal(err)
	}
	up, err := c.UploadFile(ctx(t), f.team, "notes-"+configured+".txt", "text/plain", strings.NewReader("file bytes "+configured), -1, plant, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.s.Requests() {
		body := string(r.Body)
		if r.Route == "rooms.media" {
			// The file's bytes are the user's data and go as they are.
			body = strings.ReplaceAll(body, "file bytes "+configured, "")
		}
		for _, leak := range leaks {
			if strings.Contains(body, leak) {
				t.Errorf("%s %s body carries %q:\n%s", r.Method, r.Path, leak, r.Body)
			}
		}
	}
	for _, m := range []struct{ name, text string }{{"message", sent.Text}, {"dm", dm.Text}, {"upload", up.Text}} {
		if !strings.Contains(m.text, scrub.Mask) {
			t.Errorf("%s = %q, want the mask", m.name, m.text)
		}
	}
	if !strings.Contains(sent.Text, keep) {
		t.Errorf("message = %q, want %q unchanged", sent.Text, keep)
	}
}

// A client built without WithScrubber still masks its own token and the
// well-known shapes.
func TestDefaultScrubberMasksOwnToken(t *testing.T) {
	f := newFixture(t)
	sent, err := f.c.PostMessage(ctx(t), f.general, "my token is "+f.token+" and https://u:pw123456@h/", "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sent.Text, f.token) || strings.Contains(sent.Text, "pw123456") {
		t.Errorf("sent %q", sent.Text)
	}
}

// Allowed values (an approval link minted for this person) pass.
func TestOutboundAllowedLink(t *testing.T) {
	f := newFixture(t)
	link := "https://sb.example/approvals/ap-1?decision=approve&token=Xq0AAAAAZ2Vfc2lnbmF0dXJl"
	sent, err := f.c.PostMessage(scrub.Allow(context.Background(), link), f.general, "Approve: "+link, "")
	if err != nil {
		t.Fatal(err)
	}
	if sent.Text != "Approve: "+link {
		t.Errorf("sent %q, want the link unchanged", sent.Text)
	}
}
