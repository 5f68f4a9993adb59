package nctool_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
)

func publicEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.configure(func(a *nctool.Agent) { a.AllowPublicShares = true })
	e.seed(root+"/reports/q3.md", "# Q3")
	e.seed(root+"/reports/q4.md", "# Q4")
	return e
}

func TestShareWithUserIsReadOnlyByDefault(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	env := e.ok(e.invoke("share", `{"path":"reports/q3.md","shareWith":"richard"}`))
	d := env.Data
	if d["share_type"] != "user" || d["share_with"] != "richard" || d["permissions"] != float64(1) || d["expires"] != nil {
		t.Errorf("user share = %+v", d)
	}
	if fmt.Sprint(d["permissions_meaning"]) != "[read]" || d["url"] != nil || d["password"] != nil {
		t.Errorf("user share = %+v", d)
	}
	if want := fmt.Sprintf("https://cloud.example.org/f/%d", e.nc.FileID(root+"/reports/q3.md")); d["internal_url"] != want {
		t.Errorf("internal_url = %v, want %s", d["internal_url"], want)
	}
	if want := `Nextcloud.unshare with share_id 1: {"shareId": "1"}`; d["revoke"] != want {
		t.Errorf("revoke = %v, want %s", d["revoke"], want)
	}
	env = e.ok(e.invoke("share", `{"path":"reports","shareType":1,"shareWith":"finance","permissions":"edit","expireDays":3}`))
	if env.Data["share_type"] != "group" || env.Data["permissions"] != float64(15) {
		t.Errorf("group share = %+v", env.Data)
	}
	// An explicit expireDays applies to user and group shares too (Nextcloud
	// 34 keeps it: expiration "… 23:59:59"); ncfake does not store it, so the
	// request is what is checked.
	if body := lastShareForm(t, e); body.Get("expireDate") != "2026-05-04" {
		t.Errorf("group share with expireDays 3 sent %v", body)
	}
	// shareDefaultExpireDays is for public links: a user share without
	// expireDays does not expire (as on Nextcloud, whose default expiry for
	// internal shares is a separate setting).
	e.configure(func(a *nctool.Agent) { a.ShareDefaultExpireDays = 7 })
	if d := e.ok(e.invoke("share", `{"path":"reports/q4.md","shareWith":"anna"}`)).Data; d["expires"] != nil {
		t.Errorf("user share without expireDays expires %v", d["expires"])
	}
	if body := lastShareForm(t, e); body.Has("expireDate") {
		t.Errorf("user share without expireDays sent expireDate %q", body.Get("expireDate"))
	}
	e.failed(e.invoke("share", `{"path":"reports/q3.md","shareWith":"nobody"}`), sb.ENOTFOUND, "no such user or group")
	e.failed(e.invoke("share", `{"path":"reports/q3.md"}`), sb.EINVALID, "shareWith is missing")
	e.failed(e.invoke("share", `{"path":"reports/q3.md","shareWith":"richard","password":"secret123"}`), sb.EINVALID, "public links (shareType 3) only")
	e.failed(e.invoke("share", `{"path":"../Atlas/x.md","shareWith":"richard"}`), sb.EINVALID, "climbs out")
	e.failed(e.invokeRaw("share", `{"path":"reports/q3.md","shareType":4,"shareWith":"a@b.c"}`), sb.EINVALID, "shareType must be 0")
	e.failed(e.invokeRaw("share", `{"path":"reports/q3.md","shareWith":"richard","permissions":"all"}`), sb.EINVALID, `"read" (the default) or "edit"`)
}

func TestPublicLinkRefusedWhenNotAllowed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.seed(root+"/q3.md", "x")
	e.nc.ResetRequests()
	e.failed(e.invoke("share", `{"path":"q3.md","shareType":3}`), sb.EFORBIDDEN, "allowPublicShares is false", "shareType 0")
	if got := e.calls(); got != 0 {
		t.Errorf("a refused link sent %d requests (%v)", got, e.routes())
	}
	if e.nc.Shares() != 0 {
		t.Errorf("a share was created")
	}
}

func TestPublicLinkLifecycle(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	env := e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3}`))
	d := env.Data
	url, _ := d["url"].(string)
	token, _ := d["token"].(string)
	if url == "" || token == "" || url != e.nc.URL+"/s/"+token {
		t.Fatalf("url %q token %q", url, token)
	}
	// Expiry from the UTC date of now (21:30 UTC on 1 May) + 14 days.
	if d["expires"] != "2026-05-15" || d["download_url"] != url+"/download" || d["has_password"] != false || d["permissions"] != float64(1) {
		t.Errorf("link = %+v", d)
	}
	if d["password"] != nil || d["share_type"] != "link" {
		t.Errorf("link = %+v", d)
	}
	if msg := d["message"].(string); !strings.Contains(msg, "public link") || !strings.Contains(msg, "To revoke: Nextcloud.unshare") {
		t.Errorf("message = %q", msg)
	}
	d = e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3,"expireDays":0}`)).Data
	if d["expires"] != nil {
		t.Errorf("expireDays 0 gave expires %v", d["expires"])
	}
	d = e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3,"expireDays":2}`)).Data
	if d["expires"] != "2026-05-03" {
		t.Errorf("expireDays 2 gave expires %v", d["expires"])
	}
	e.configure(func(a *nctool.Agent) { a.ShareDefaultExpireDays = 30 })
	d = e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3}`)).Data
	if d["expires"] != "2026-05-31" {
		t.Errorf("shareDefaultExpireDays 30 gave expires %v", d["expires"])
	}
	e.failed(e.invoke("share", `{"path":"reports/q3.md","shareType":3,"shareWith":"richard"}`), sb.EINVALID, "no shareWith")
}

func TestPublicLinkFolderWithFile(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	d := e.ok(e.invoke("share", `{"path":"reports","shareType":3,"file":"q4.md"}`)).Data
	if want := d["url"].(string) + "/download?files=q4.md&path=%2F"; d["download_url"] != want {
		t.Errorf("download_url = %v, want %s", d["download_url"], want)
	}
	e.nc.ResetRequests()
	e.failed(e.invoke("share", `{"path":"reports","shareType":3,"file":"missing.md"}`), sb.ENOTFOUND, `"missing.md" inside /reports`)
	e.failed(e.invoke("share", `{"path":"reports","shareType":3,"file":"../q3.md"}`), sb.EINVALID, "bare name")
	if got := e.nc.Calls("POST shares"); got != 0 {
		t.Errorf("a bad file argument still created %d share(s)", got)
	}
}

func TestPublicLinkExpiryClampedWithNotice(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	e.nc.SetLinkExpiry(7, true)
	d := e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3,"expireDays":30}`)).Data
	if d["expires"] != "2026-05-08" {
		t.Errorf("expires = %v, want the server maximum 2026-05-08", d["expires"])
	}
	notices := fmt.Sprint(d["notices"])
	if !strings.Contains(notices, "at most 7 days") || !strings.Contains(notices, "instead of 30") {
		t.Errorf("notices = %v", d["notices"])
	}
	d = e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3,"expireDays":0}`)).Data
	if d["expires"] != "2026-05-08" || !strings.Contains(fmt.Sprint(d["notices"]), "instead of none") {
		t.Errorf("no expiry under an enforced maximum: %+v", d)
	}
	d = e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3,"expireDays":5}`)).Data
	if d["expires"] != "2026-05-06" || d["notices"] != nil {
		t.Errorf("within the maximum: %+v", d)
	}
}

func TestPublicLinkPasswordEnforcedIsGenerated(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	e.nc.SetPasswordEnforced(true)
	d := e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3}`)).Data
	pw, _ := d["password"].(string)
	if len(pw) != nctool.GeneratedPasswordLen || d["has_password"] != true {
		t.Fatalf("link = %+v", d)
	}
	var lower, upper, digit, other bool
	for _, r := range pw {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsDigit(r):
			digit = true
		default:
			other = true
		}
	}
	if !lower || !upper || !digit || !other {
		t.Errorf("password %q lacks a character class", pw)
	}
	if n := fmt.Sprint(d["notices"]); !strings.Contains(n, "requires a password") || !strings.Contains(n, "only this once") {
		t.Errorf("notices = %v", d["notices"])
	}
	d2 := e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3}`)).Data
	if d2["password"] == pw {
		t.Errorf("two generated passwords are equal")
	}
	// The caller's own password is used and not echoed.
	d = e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3,"password":"Correct-Horse-9"}`)).Data
	if d["password"] != nil || d["has_password"] != true {
		t.Errorf("own password: %+v", d)
	}
	e.nc.SetPasswordEnforced(false)
	d = e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3,"generatePassword":true}`)).Data
	if pw, _ := d["password"].(string); len(pw) != nctool.GeneratedPasswordLen || d["has_password"] != true {
		t.Errorf("generatePassword: %+v", d)
	}
	e.failed(e.invoke("share", `{"path":"reports/q3.md","shareType":3,"generatePassword":true,"password":"x"}`), sb.EINVALID, "not both")
}

// lastShareForm is the form of the last share creation the fake saw.
func lastShareForm(t *testing.T, e *env) url.Values {
	t.Helper()
	reqs := e.nc.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Route == "POST shares" {
			v, err := url.ParseQuery(string(reqs[i].Body))
			if err != nil {
				t.Fatalf("share form %q: %v", reqs[i].Body, err)
			}
			return v
		}
	}
	t.Fatal("no share creation was sent")
	return nil
}

// Nextcloud 34 answers the 21st share creation in 10 minutes with a bare
// 429: no Retry-After, an empty text/html body.
func TestShareRateLimitReportsTheWait(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	for i := range 20 {
		e.ok(e.invoke("share", fmt.Sprintf(`{"path":"reports/q3.md","shareWith":"richard","note":"n%d"}`, i)))
	}
	e.clock.Set(start.Add(4*time.Minute + 20*time.Second)) // the latest end is 21:44:20, said as 21:45
	e.nc.ResetRequests()
	env := e.failed(e.invoke("share", `{"path":"reports/q3.md","shareType":3}`), sb.ERATELIMITED,
		"Nextcloud allows 20 share creations per 10 minutes", "failed attempts count too",
		"wait up to 10 minutes (until 21:45 UTC at the latest)", "report the wait instead of retrying")
	if env.HTTPStatus != 429 || env.Data["retryAfterSeconds"] != nil || env.Data["retry_at"] != nil {
		t.Errorf("429 envelope = %+v; the server named no wait, so none is passed on as its", env)
	}
	if got := e.nc.Calls("POST shares"); got != 1 {
		t.Errorf("POST shares = %d after a 429, want exactly 1 (no retry)", got)
	}
}

// A proxy (or a later Nextcloud) that names the wait gets it passed on.
func TestShareRateLimitWithRetryAfter(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	c := e.intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/apps/files_sharing/api/v1/shares") {
			return false
		}
		w.Header().Set("Retry-After", "360")
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	})
	e.configure(func(a *nctool.Agent) { a.Client = c })
	env := e.failed(e.invoke("share", `{"path":"reports/q3.md","shareWith":"richard"}`), sb.ERATELIMITED,
		"20 share creations per 10 minutes", "wait 6m0s (until 21:36 UTC)", "report the wait instead of retrying")
	if env.HTTPStatus != 429 || env.Data["retryAfterSeconds"] != float64(360) || env.Data["retry_at"] != "2026-05-01T21:36:00Z" {
		t.Errorf("429 envelope = %+v", env)
	}
}

// A share of a path that does not exist never reaches the POST: every
// POST, failed ones too, counts against the 20 per 10 minutes.
func TestShareOfAMissingPathSpendsNoShareCreation(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	for _, args := range []string{
		`{"path":"reports/gone.md","shareWith":"richard"}`,
		`{"path":"reports/gone.md","shareType":3}`,
		`{"path":"gone","shareType":3,"file":"q3.md"}`,
	} {
		e.nc.ResetRequests()
		e.failed(e.invoke("share", args), sb.ENOTFOUND, "cannot ")
		if n := e.nc.Calls("POST shares"); n != 0 {
			t.Errorf("share %s sent %d POST(s)", args, n)
		}
	}
	env := e.failed(e.invoke("share", `{"path":"reports/gone.md","shareWith":"richard"}`), sb.ENOTFOUND,
		"cannot share /reports/gone.md: it does not exist, so nothing was shared", "none of Nextcloud's 20 share creations")
	if env.HTTPStatus != 404 {
		t.Errorf("http_status = %d, want the PROPFIND's 404", env.HTTPStatus)
	}
	// The limit is untouched: 20 creations still go through.
	for i := range 20 {
		e.ok(e.invoke("share", fmt.Sprintf(`{"path":"reports/q3.md","shareWith":"richard","note":"n%d"}`, i)))
	}
}

// Something shared with the account without the right to share it on
// (no R in its permissions) is refused before the POST.
func TestShareWithoutTheRightToShare(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	c := e.intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != "PROPFIND" || !strings.HasSuffix(r.URL.Path, "/reports/q3.md") {
			return false
		}
		rec := httptest.NewRecorder()
		e.nc.ServeHTTP(rec, r)
		body := strings.ReplaceAll(rec.Body.String(), "RGDNVW", "GDNVW")
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		io.WriteString(w, body)
		return true
	})
	e.configure(func(a *nctool.Agent) { a.Client = c })
	e.nc.ResetRequests()
	e.failed(e.invoke("share", `{"path":"reports/q3.md","shareWith":"richard"}`), sb.EFORBIDDEN,
		"cannot share /reports/q3.md: the account may not share it", "ask its owner")
	if n := e.nc.Calls("POST shares"); n != 0 {
		t.Errorf("sent %d POST(s)", n)
	}
}

func TestShareNeedsAdminRights(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	e.nc.SetAdminOnly(true)
	env := e.failed(e.invoke("share", `{"path":"reports","shareType":1,"shareWith":"finance"}`), sb.EFORBIDDEN, "needs admin rights")
	if env.HTTPStatus != 401 || env.Data["ocs_status"] != float64(997) || !strings.Contains(env.Endpoint, "/apps/files_sharing/api/v1/shares") {
		t.Errorf("997 envelope = %+v", env)
	}
}

func TestPublicLinksDisabledOnServer(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	e.nc.SetPublicLinks(false)
	e.nc.ResetRequests()
	e.failed(e.invoke("share", `{"path":"reports/q3.md","shareType":3}`), sb.EFORBIDDEN, "disabled on this Nextcloud")
	if got := e.routes(); len(got) != 1 || got[0] != "GET capabilities" {
		t.Errorf("routes = %v, want only the capabilities check", got)
	}
}

func TestUnshare(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	link := e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3}`)).Data
	user := e.ok(e.invoke("share", `{"path":"reports/q3.md","shareWith":"anna"}`)).Data
	other := e.ok(e.invoke("share", `{"path":"reports/q4.md","shareWith":"anna"}`)).Data

	// By token.
	env := e.ok(e.invoke("unshare", fmt.Sprintf(`{"token":%q}`, link["token"])))
	if env.Data["revoked"] != true || env.Data["share_id"] != link["share_id"] || !strings.Contains(env.Data["message"].(string), "keeps their copy") {
		t.Errorf("unshare by token = %+v", env.Data)
	}
	// By path: confirmation first, listing what would go.
	env = e.invoke("unshare", `{"path":"reports/q3.md"}`)
	if env.Status != "ok" || !env.NeedsConfirmation || env.Data["count"] != float64(1) {
		t.Fatalf("unshare path without confirm = %+v", env)
	}
	if shares, _ := env.Data["shares"].([]any); len(shares) != 1 || shares[0].(map[string]any)["share_with"] != "anna" {
		t.Errorf("confirmation lists %v", env.Data["shares"])
	}
	if e.nc.Shares() != 2 {
		t.Fatalf("unshare without confirm revoked something")
	}
	env = e.ok(e.invoke("unshare", `{"path":"reports/q3.md","confirm":true}`))
	if env.Data["revoked"] != float64(1) || fmt.Sprint(env.Data["revoked_ids"]) != fmt.Sprint([]any{user["share_id"]}) {
		t.Errorf("unshare path = %+v", env.Data)
	}
	env = e.ok(e.invoke("unshare", `{"path":"reports/q3.md"}`))
	if env.NeedsConfirmation || !strings.Contains(env.Data["message"].(string), "has no shares") {
		t.Errorf("unshare path without shares = %+v", env)
	}
	// By id.
	e.ok(e.invoke("unshare", fmt.Sprintf(`{"shareId":%q}`, other["share_id"])))
	if e.nc.Shares() != 0 {
		t.Errorf("%d shares left", e.nc.Shares())
	}
	e.failed(e.invoke("unshare", `{"shareId":"999"}`), sb.ENOTFOUND, "none of your shares")
	e.failed(e.invoke("unshare", `{}`), sb.EINVALID, "exactly one of shareId, token or path")
	e.failed(e.invoke("unshare", `{"shareId":"1","token":"x"}`), sb.EINVALID, "exactly one")
}

func TestSharesList(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	e.seed("/Switchboard/Atlas/theirs.md", "t")
	e.ok(e.invoke("share", `{"path":"reports/q3.md","shareType":3,"generatePassword":true}`))
	e.ok(e.invoke("share", `{"path":"reports/q4.md","shareWith":"anna"}`))
	e.configure(func(a *nctool.Agent) { a.RootPath = "/Switchboard/Atlas" })
	e.ok(e.invoke("share", `{"path":"theirs.md","shareWith":"anna"}`))
	e.configure(func(a *nctool.Agent) { a.RootPath = root })

	d := e.ok(e.invoke("shares", `{}`)).Data
	list, _ := d["shares"].([]any)
	if d["count"] != float64(2) || len(list) != 2 {
		t.Fatalf("shares = %+v", d)
	}
	link := list[0].(map[string]any)
	if link["share_type"] != "link" || link["path"] != "/reports/q3.md" || link["has_password"] != true || link["expires"] != "2026-05-15" ||
		link["password"] != nil || !strings.HasSuffix(link["download_url"].(string), "/download") || link["revoke"] == nil {
		t.Errorf("link entry = %+v", link)
	}
	d = e.ok(e.invoke("shares", `{"path":"reports/q4.md"}`)).Data
	if d["count"] != float64(1) {
		t.Errorf("shares of q4 = %+v", d)
	}
	e.failed(e.invoke("shares", `{"path":"../Atlas/theirs.md"}`), sb.EINVALID, "climbs out")
	e.failed(e.invoke("shares", `{"path":"gone.md"}`), sb.ENOTFOUND, "cannot list the shares of /gone.md")
}

func TestUnshareLeavesOtherAgentsAlone(t *testing.T) {
	t.Parallel()
	e := publicEnv(t)
	e.seed("/Switchboard/Atlas/theirs.md", "t")
	// Atlas shares through the same service account.
	sh := e.ok(e.invoke("share", `{"path":"reports/q3.md","shareWith":"anna"}`)) // id 1, Hermes
	_ = sh
	e.configure(func(a *nctool.Agent) { a.RootPath = "/Switchboard/Atlas" })
	theirs := e.ok(e.invoke("share", `{"path":"theirs.md","shareType":3}`)).Data
	e.configure(func(a *nctool.Agent) { a.RootPath = root })
	e.failed(e.invoke("unshare", fmt.Sprintf(`{"shareId":%q}`, theirs["share_id"])), sb.ENOTFOUND, "none of your shares")
	e.failed(e.invoke("unshare", fmt.Sprintf(`{"token":%q}`, theirs["token"])), sb.ENOTFOUND, "none of your shares")
	if e.nc.Shares() != 2 {
		t.Errorf("shares = %d, want both still there", e.nc.Shares())
	}
}

func TestCondition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	call := func(action, args string) sb.ToolCall {
		return sb.ToolCall{AgentID: agentID, Tool: nctool.ToolName, Action: action, Args: []byte(args)}
	}
	tests := []struct {
		name   string
		allow  bool
		action string
		args   string
		want   string
	}{
		{"user share", false, "share", `{"path":"a","shareWith":"richard"}`, ""},
		{"default type", true, "share", `{"path":"a"}`, ""},
		{"group share", true, "share", `{"path":"a","shareType":1}`, ""},
		{"link not allowed", false, "share", `{"path":"a","shareType":3}`, "public_not_allowed"},
		{"link allowed", true, "share", `{"path":"a","shareType":3}`, "public"},
		{"link as string", true, "share", `{"path":"a","shareType":"3"}`, "public"},
		{"link as float", false, "share", `{"path":"a","shareType":3.0}`, "public_not_allowed"},
		{"broken args", true, "share", `{"path":`, ""},
		{"other action", true, "upload", `{"shareType":3}`, ""},
		{"delete", true, "delete", `{"path":"a"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.configure(func(a *nctool.Agent) { a.AllowPublicShares = tt.allow })
			if got := e.tool.Condition(call(tt.action, tt.args)); got != tt.want {
				t.Errorf("Condition = %q, want %q", got, tt.want)
			}
		})
	}
	unknown := sb.ToolCall{AgentID: "atlas", Action: "share", Args: []byte(`{"shareType":3}`)}
	if got := e.tool.Condition(unknown); got != "public_not_allowed" {
		t.Errorf("unknown agent: Condition = %q", got)
	}
}
