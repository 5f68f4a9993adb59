package scrub

import (
	"context"
	"html/template"
	"strings"
	"testing"
)

func TestWithAddsSecrets(t *testing.T) {
	base := New([]string{"instance-secret-1"})
	s := base.With("client-token-2", "instance-secret-1", "")
	got := s.String("a instance-secret-1 b client-token-2 c")
	if want := "a *** b *** c"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if base.With("instance-secret-1") != base {
		t.Errorf("With of a known secret built a new Scrubber")
	}
	if got := base.String("client-token-2"); got != "client-token-2" {
		t.Errorf("With changed the original Scrubber: %q", got)
	}
	var none *Scrubber
	if got := none.With("client-token-2").String("x client-token-2"); got != "x ***" {
		t.Errorf("nil.With: got %q", got)
	}
}

func TestHTMLEscapedSecrets(t *testing.T) {
	sec := `a+b<c>&"d'e-key`
	s := New([]string{sec})
	var page strings.Builder
	tpl := template.Must(template.New("p").Parse(`<p>{{.}}</p><input value="{{.}}">`))
	if err := tpl.Execute(&page, sec); err != nil {
		t.Fatal(err)
	}
	got := s.String(page.String())
	if want := `<p>***</p><input value="***">`; got != want {
		t.Errorf("page %q scrubbed to %q, want %q", page.String(), got, want)
	}
}

func TestStringContextKeepsAllowedValues(t *testing.T) {
	const tok = "Xq0AAAAAZ2Vfc2lnbmF0dXJlLWJ5dGVzLWhlcmUtMTIzNDU2Nzg5MA"
	link := "https://sb.example/approvals/ap-1?decision=approve&token=" + tok
	other := "https://x.example/hook?token=other-link-token-99"
	s := New([]string{"configured-secret-7"})
	text := "Approve: " + link + "\nalso " + other + " and configured-secret-7 and password=pw1"
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"no allowance masks the link token", context.Background(),
			"Approve: https://sb.example/approvals/ap-1?decision=approve&token=***\nalso https://x.example/hook?token=*** and *** and password=***"},
		{"allowed link stays, the rest is masked", Allow(context.Background(), link),
			"Approve: " + link + "\nalso https://x.example/hook?token=*** and *** and password=***"},
		{"nested allowances add up", Allow(Allow(context.Background(), "unrelated-value-123456"), link),
			"Approve: " + link + "\nalso https://x.example/hook?token=*** and *** and password=***"},
		{"short values are not allowed", Allow(context.Background(), "pw1"),
			"Approve: https://sb.example/approvals/ap-1?decision=approve&token=***\nalso https://x.example/hook?token=*** and *** and password=***"},
		{"a value holding a configured secret is masked", Allow(context.Background(), "and configured-secret-7 and"),
			"Approve: https://sb.example/approvals/ap-1?decision=approve&token=***\nalso https://x.example/hook?token=*** and *** and password=***"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.StringContext(tt.ctx, text); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestStringContextSecretAcrossAllowedEdge(t *testing.T) {
	s := New([]string{"tail-of-allowed+more"})
	ctx := Allow(context.Background(), "this value ends in tail-of-allowed")
	got := s.StringContext(ctx, "see this value ends in tail-of-allowed+more")
	if strings.Contains(got, "tail-of-allowed+more") {
		t.Errorf("a secret spanning the edge of an allowed value survived: %q", got)
	}
}

// TestOutboundContentStays pins what messages legitimately carry and must
// arrive unchanged: ids, hashes, links without credentials, prose about
// secrets.
func TestOutboundContentStays(t *testing.T) {
	s := New(configured)
	for _, text := range []string{
		"Rocket.Chat message id aBcD2345EfGh6789j in room GENERAL",
		"https://chat.example.org/channel/finanz-team?msg=Xy7pQ2mN4kL9wR3tZ",
		"Mongo id 65f1c0ffee0ddba11c0ffee1 and sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"run 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b, approval ap_01HZX3K9Q2W8E7R6T5Y4U3I2O1",
		"https://cloud.example.org/s/AbCdEf9876543210 (password protected, expires 2026-12-31)",
		"https://cloud.example.org:8443/remote.php/dav/files/alice/Reports/Q3.pdf",
		"mail richard@example.org or see https://example.org/a@b",
		"the password policy needs 12 characters; ask the admin for a token",
		"Upload Q3-report.pdf (1.2 MB) done at 12:30:45",
		"ETag \"5d41402abc4b2a76b9719d911017c592\" version 30.0.2",
		"[the report](https://example.org/reports?id=42&view=full)",
	} {
		if got := s.String(text); got != text {
			t.Errorf("String(%q)\n changed to %q", text, got)
		}
	}
}
