package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/httpapi/console"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/health"
)

func TestNoPasswordMeansNotFound(t *testing.T) {
	e := newEnv(t, func(o *console.Options) { o.Password = "" })
	c := e.client()
	for _, p := range []string{"/console/", "/console/login", "/console/app.js", "/console/health", "/console/chain?root=x"} {
		if res, _ := e.get(c, p); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s without a password: %d, want 404", p, res.StatusCode)
		}
	}
	if res, _ := e.post(c, "/console/login", url.Values{"password": {""}}); res.StatusCode != http.StatusNotFound {
		t.Errorf("POST /console/login without a password: %d, want 404", res.StatusCode)
	}
}

func TestEveryAnswerIsUncachedUnderAStrictPolicy(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client()
	e.login(c)
	for _, p := range []string{"/console/", "/console/login", "/console/app.js", "/console/app.css", "/console/health", "/console/approvals", "/console/attention", "/console/chain?root=r"} {
		res, _ := e.get(c, p)
		want := http.StatusOK
		if strings.HasPrefix(p, "/console/chain") {
			want = http.StatusNotFound // no chain r: the error page, under the same policy
		}
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", p, res.StatusCode, want)
		}
		if got := res.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("GET %s: Cache-Control %q, want no-store", p, got)
		}
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "form-action 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: CSP %q lacks %q", p, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: CSP allows inline code: %q", p, csp)
		}
	}
}

func TestLoginFlow(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client()
	res, _ := e.get(c, "/console/")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login" {
		t.Fatalf("GET /console/ before login: %d to %q, want 303 to /console/login", res.StatusCode, res.Header.Get("Location"))
	}
	_, body := e.get(c, "/console/login")
	tok := csrfOf(t, body)

	res, body = e.post(c, "/console/login", url.Values{"csrf": {tok}, "password": {"wrong password!"}})
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Wrong password.") {
		t.Errorf("wrong password: %d, want 401 with a notice\n%s", res.StatusCode, body)
	}
	if len(sessionCookies(res)) != 0 {
		t.Errorf("wrong password set a session cookie")
	}
	_, body = e.get(c, "/console/login")
	res, _ = e.post(c, "/console/login", url.Values{"csrf": {csrfOf(t, body)}, "password": {password}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("right password: %d, want 303", res.StatusCode)
	}
	ck := sessionCookies(res)
	if len(ck) != 1 {
		t.Fatalf("session cookies %v, want one", ck)
	}
	if !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Secure || ck[0].MaxAge != 12*3600 {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Strict, not Secure on loopback, Max-Age 12 h", ck[0])
	}
	if res, _ := e.get(c, "/console/"); res.StatusCode != http.StatusOK {
		t.Errorf("GET /console/ after login: %d", res.StatusCode)
	}
}

func sessionCookies(res *http.Response) []*http.Cookie {
	var out []*http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "sb_console" && c.Value != "" {
			out = append(out, c)
		}
	}
	return out
}

// TestCookieIsSecureOutsideLoopback: behind a function URL the host is a
// public name, and the cookies must only travel over HTTPS.
func TestCookieIsSecureOutsideLoopback(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client()
	req, _ := http.NewRequest(http.MethodGet, e.baseURL+"/console/login", nil)
	req.Host = "abc.lambda-url.eu-central-1.on.aws"
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, ck := range res.Cookies() {
		if !ck.Secure {
			t.Errorf("cookie %s on a public host is not Secure", ck.Name)
		}
	}
	if len(res.Cookies()) == 0 {
		t.Fatal("the login form set no cookie")
	}
}

func TestCSRFIsRequiredOnEveryPost(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client()
	_, body := e.get(c, "/console/login")
	tok := csrfOf(t, body)
	cases := []struct {
		name   string
		form   url.Values
		header []string
	}{
		{"no token", url.Values{"password": {password}}, nil},
		{"wrong token", url.Values{"password": {password}, "csrf": {"forged"}}, nil},
		{"other origin", url.Values{"password": {password}, "csrf": {tok}}, []string{"Origin", "https://evil.example"}},
		{"cross-site fetch", url.Values{"password": {password}, "csrf": {tok}}, []string{"Sec-Fetch-Site", "cross-site"}},
	}
	for _, tc := range cases {
		t.Run("login "+tc.name, func(t *testing.T) {
			res, _ := e.post(c, "/console/login", tc.form, tc.header...)
			if res.StatusCode != http.StatusForbidden || len(sessionCookies(res)) != 0 {
				t.Errorf("%d with %d session cookies, want 403 and none", res.StatusCode, len(sessionCookies(res)))
			}
		})
	}
	e.login(c)
	res, _ := e.post(c, "/console/logout", url.Values{})
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("logout without a token: %d, want 403", res.StatusCode)
	}
	if res, _ := e.get(c, "/console/"); res.StatusCode != http.StatusOK {
		t.Errorf("the session ended on a refused logout: %d", res.StatusCode)
	}
}

func TestLogoutEndsTheSessionEvenForACopiedCookie(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client()
	e.login(c)
	u, _ := url.Parse(e.baseURL + "/console/")
	copied := c.Jar.Cookies(u)
	_, body := e.get(c, "/console/")
	res, _ := e.post(c, "/console/logout", url.Values{"csrf": {csrfOf(t, body)}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d, want 303", res.StatusCode)
	}
	thief := e.client()
	thief.Jar.SetCookies(u, copied)
	if res, _ := e.get(thief, "/console/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a copy of the cookie still works after logout: %d", res.StatusCode)
	}
}

func TestSessionExpires(t *testing.T) {
	e := newEnv(t, func(o *console.Options) { o.SessionHours = 2 })
	c := e.client()
	e.login(c)
	e.clock.Add(119 * time.Minute)
	if res, _ := e.get(c, "/console/"); res.StatusCode != http.StatusOK {
		t.Fatalf("before expiry: %d", res.StatusCode)
	}
	e.clock.Add(2 * time.Minute)
	// The browser would have dropped the cookie (Max-Age); a client that
	// keeps it must be refused by the server too.
	if res, _ := e.get(c, "/console/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("after expiry: %d, want 303 to the login", res.StatusCode)
	}
}

func TestForgedSessionCookieIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client()
	u, _ := url.Parse(e.baseURL + "/console/")
	c.Jar.SetCookies(u, []*http.Cookie{{Name: "sb_console", Value: "someid.c2lnbmF0dXJl", Path: "/console/"}})
	if res, _ := e.get(c, "/console/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("forged cookie: %d, want 303 to the login", res.StatusCode)
	}
}

func TestLoginAttemptsAreLimited(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client()
	for i := range 10 {
		_, body := e.get(c, "/console/login")
		res, _ := e.post(c, "/console/login", url.Values{"csrf": {csrfOf(t, body)}, "password": {"guess " + string(rune('a'+i))}})
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d, want 401", i+1, res.StatusCode)
		}
	}
	_, body := e.get(c, "/console/login")
	res, body := e.post(c, "/console/login", url.Values{"csrf": {csrfOf(t, body)}, "password": {password}})
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || len(sessionCookies(res)) != 0 {
		t.Errorf("11th attempt (right password): %d, Retry-After %q; want 429 with Retry-After and no session\n%s",
			res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	e.clock.Add(15 * time.Minute)
	e.login(c) // a new window
}

func TestPairViewShowsNewest200AndLoadsOlder(t *testing.T) {
	e := newEnv(t, nil)
	for i := range 230 {
		from, to := "alice", "bob"
		if i%2 == 1 {
			from, to = to, from
		}
		e.msg(from, to, start.Add(-time.Duration(230-i)*time.Hour), "message number "+itoa(i), nil)
	}
	e.msg("alice", "carol", start, "not in the pair", nil)
	c := e.client()
	e.login(c)
	before, own := e.store.Stats(), e.own.Stats()
	_, body := e.get(c, "/console/?a=alice&b=bob")
	after, ownAfter := e.store.Stats(), e.own.Stats()
	if got := after.Total.Calls - before.Total.Calls; got != 1 {
		t.Errorf("pair view made %d DynamoDB calls on the data tables, want 1 (one Query)", got)
	}
	if got := ownAfter.Total.Calls - own.Total.Calls; got != 1 {
		t.Errorf("pair view made %d calls on the console table, want 1 (the session)", got)
	}
	if n := strings.Count(body, `<li class="msg `); n != 200 {
		t.Errorf("%d messages shown, want the newest 200", n)
	}
	if !strings.Contains(body, "message number 229") || strings.Contains(body, "message number 29<") || strings.Contains(body, "not in the pair") {
		t.Errorf("wrong messages on the first page")
	}
	if strings.Index(body, "message number 228") > strings.Index(body, "message number 229") {
		t.Errorf("messages are not oldest first")
	}
	if !strings.Contains(body, `class="msg right`) || !strings.Contains(body, `class="msg left`) {
		t.Errorf("A's messages should be right, B's left")
	}
	if !strings.Contains(body, `<li class="day">`) {
		t.Errorf("no day separators")
	}
	older := regexpFind(body, `href="(/console/\?[^"]*cursor=[^"]+)" id="load-older"`)
	if older == "" {
		t.Fatalf("no load-older link")
	}
	_, body = e.get(c, htmlUnescape(older))
	if n := strings.Count(body, `<li class="msg `); n != 30 || !strings.Contains(body, "message number 0<") {
		t.Errorf("older page: %d messages, want the 30 oldest", n)
	}
}

func TestFiltersAndSearch(t *testing.T) {
	e := newEnv(t, nil)
	e.msg("alice", "bob", start.Add(-72*time.Hour), "quarterly invoice draft", func(m *sb.AgentMessage) { m.Channel = sb.ChannelTask; m.TaskID = "T-17" })
	e.msg("bob", "alice", start.Add(-time.Hour), "the invoice is sent", func(m *sb.AgentMessage) { m.Channel = sb.ChannelTaskResult })
	e.msg("carol", "alice", start.Add(-2*time.Hour), "lunch menu", nil)
	e.msg("alice", "bob", start.Add(-40*24*time.Hour), "old invoice reminder", nil)
	c := e.client()
	e.login(c)
	cases := []struct {
		name, query string
		want, not   []string
	}{
		{"all partners", "a=alice&b=all", []string{"quarterly", "sent", "lunch"}, nil},
		{"channel", "a=alice&b=all&ch=task_result", []string{"sent"}, []string{"quarterly", "lunch"}},
		{"range", "a=alice&b=all&from=2026-12-01", []string{"sent", "lunch"}, []string{"quarterly"}},
		{"search", "a=alice&b=bob&q=invoice", []string{"quarterly", "sent"}, []string{"lunch"}},
		{"search everyone", "q=lunch", []string{"lunch"}, []string{"invoice"}},
		// Without a start date a search covers the last 30 days, and
		// the form shows that start date.
		{"search default range", "q=invoice", []string{"quarterly", "sent", `name="from" value="2026-11-02"`}, []string{"reminder"}},
		{"search older", "q=invoice&from=2026-10-01", []string{"quarterly", "sent", "reminder"}, nil},
		{"task link", "a=alice&b=bob", []string{`href="/console/?q=T-17"`, "task T-17"}, nil},
		{"bad date", "a=alice&from=yesterday", []string{"The start date must look like"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, body := e.get(c, "/console/?"+tc.query)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%d", res.StatusCode)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(body, n) {
					t.Errorf("page shows %q", n)
				}
			}
		})
	}
}

// TestWhatOthersWroteIsEscaped plants markup and bidi controls in every
// field an agent or a model controls.
func TestWhatOthersWroteIsEscaped(t *testing.T) {
	e := newEnv(t, nil)
	for _, p := range plants {
		e.msg("alice", "bob", start.Add(-time.Minute), p, nil)
	}
	if err := e.store.Append(context.Background(), sb.AuditEntry{ID: "a1", At: start, AgentID: "alice",
		Run: sb.RunContext{RunID: "run-alice-1", RootRunID: "root-1"}, Tool: "Nextcloud", Action: "upload",
		Args: `{"path":"<script>alert(1)</script>.txt"}`, Decision: sb.DecisionAuto, Outcome: "error", Error: `"><img src=x onerror=alert(2)>`}); err != nil {
		t.Fatal(err)
	}
	e.pending("evil1", "alice", `<script>alert(3)</script>`, `{"path":"\"><img src=x onerror=alert(4)>"}`)
	c := e.client()
	e.login(c)
	for _, p := range []string{"/console/?a=alice&b=bob", "/console/chain?root=root-1", "/console/approvals"} {
		_, body := e.get(c, p)
		for _, bad := range []string{"<script>alert", "<img src=x", "\u202e"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s contains %q unescaped", p, bad)
			}
		}
	}
	_, body := e.get(c, "/console/?a=alice&b=bob")
	for _, want := range []string{"&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;", "&#34;&gt;&lt;img src=x onerror=", "invoice [U&#43;202E]gnp.exe[U&#43;202C] for you"} {
		if !strings.Contains(body, want) {
			t.Errorf("the plants are not shown as text: no %q", want)
		}
	}
}

// plants are what an agent could write to attack the operator's browser.
var plants = []string{
	`<script>alert('pwned')</script>`,
	`"><img src=x onerror="document.title='pwned'">`,
	"invoice \u202egnp.exe\u202c for you",
	`<a href="javascript:alert(1)">click</a>`,
}

func TestChainPageShowsRunsCallsAndCost(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	root := "root-chain"
	for i, agent := range []string{"alice", "bob", "carol"} {
		run := sb.RunContext{RunID: "run-" + agent, RootRunID: root, AgentID: agent}
		if i > 0 {
			run.ParentRunID = "run-alice"
		}
		if err := e.store.Put(ctx, sb.Receipt{Run: run, AgentID: agent, Model: "m", StartedAt: start.Add(time.Duration(i) * time.Minute),
			Duration: time.Second, TokensIn: 100, TokensOut: 10, CostUSD: 0.25, Steps: 2, Outcome: "answered"}); err != nil {
			t.Fatal(err)
		}
		if err := e.store.Append(ctx, sb.AuditEntry{ID: "call-" + agent, At: start.Add(time.Duration(i) * time.Minute), AgentID: agent, Run: run,
			Tool: "Workspace", Action: "write", Args: `{"path":"notes-` + agent + `.md"}`, Decision: sb.DecisionAuto, Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	e.msg("alice", "bob", start, "please check the notes", func(m *sb.AgentMessage) { m.RunID, m.RootRunID = "run-alice", root })
	c := e.client()
	e.login(c)
	_, body := e.get(c, "/console/chain?root="+root)
	for _, want := range []string{"3 runs", "total <strong>$0.7500</strong>", "notes-bob.md", "Workspace.write", "please check the notes", "Carol"} {
		if !strings.Contains(body, want) {
			t.Errorf("chain page lacks %q", want)
		}
	}
}

// A root run id no run has is a 404 naming it, not an empty chain.
func TestUnknownChainIsNotFound(t *testing.T) {
	e := newEnv(t, nil)
	c := e.client()
	e.login(c)
	res, body := e.get(c, "/console/chain?root=no-such-root")
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "no-such-root") {
		t.Errorf("GET an unknown chain = %d, want 404 naming the root:\n%s", res.StatusCode, body)
	}
}

func TestApprovalsPageLinksToTheSignedConfirmation(t *testing.T) {
	e := newEnv(t, nil)
	a := e.pending("appr1", "alice", "the report is outdated", `{"path":"/reports/q3.pdf"}`)
	c := e.client()
	e.login(c)
	_, body := e.get(c, "/console/approvals")
	for _, want := range []string{"Alice wants <code>Nextcloud.delete</code>", "the report is outdated", "/reports/q3.pdf", "in 24h0m0s"} {
		if !strings.Contains(body, want) {
			t.Errorf("approvals page lacks %q", want)
		}
	}
	link := htmlUnescape(regexpFind(body, `class="approve" href="([^"]+)"`))
	u, err := url.Parse(link)
	if err != nil || u.Host != "approvals.example.org" || u.Path != "/approvals/appr1" {
		t.Fatalf("approve link %q: want the approvals page of appr1", link)
	}
	if err := e.signer.Verify(u.Query().Get("token"), a.ID, u.Query().Get("decision"), a.ArgsHash, start); err != nil || u.Query().Get("decision") != "approve" {
		t.Errorf("approve link does not carry a valid approve token: %v", err)
	}
	// The console adds no way to decide: its only form is the logout.
	if n := strings.Count(body, "<form"); n != 1 || !strings.Contains(body, `action="/console/logout"`) {
		t.Errorf("%d forms on the approvals page, want only the logout form", n)
	}
}

func TestHealthPage(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if err := e.store.RecordRun(ctx, sb.JobRun{Job: "heartbeat", StartedAt: start, Duration: 40 * time.Millisecond, Outcome: "ok", Trigger: "schedule"}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.RecordRun(ctx, sb.JobRun{Job: "telegram-poll", StartedAt: start, Outcome: "error", Detail: "telegram: 401 <b>Unauthorized</b>", Trigger: "schedule"}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.KV().Put(ctx, "health#rocketchat", `{"failures":4,"since":"2026-12-02T08:40:00Z","notified":true}`, time.Time{}); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	e.login(c)
	_, body := e.get(c, "/console/health")
	if regexpFind(body, `(rocketchat-health</td><td>rate\(5 minutes\)</td>\s*<td colspan="4">never ran)`) == "" {
		t.Errorf("a job that never ran is not shown as such")
	}
	for _, want := range []string{"unreachable: 4 failed checks in a row since 2026-12-02 08:40:00 UTC; the human was told", "telegram: 401 &lt;b&gt;Unauthorized&lt;/b&gt;", `<tr class="error">`} {
		if !strings.Contains(body, want) {
			t.Errorf("health page lacks %q\n", want)
		}
	}
}

func TestStartPageShowsCostTodayAgainstBudget(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if err := e.store.Put(ctx, sb.Receipt{Run: sb.RunContext{RunID: "r1", RootRunID: "r1"}, AgentID: "alice", StartedAt: start.Add(-time.Hour), CostUSD: 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Put(ctx, sb.Receipt{Run: sb.RunContext{RunID: "r0", RootRunID: "r0"}, AgentID: "alice", StartedAt: start.Add(-24 * time.Hour), CostUSD: 9}); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	e.login(c)
	_, body := e.get(c, "/console/")
	for _, want := range []string{"$0.5000</td>", "$2.0000", `value="25"`, "no limit"} {
		if !strings.Contains(body, want) {
			t.Errorf("start page lacks %q", want)
		}
	}
}

// TestHealthPageReadsTheHealthJobsState: the console decodes the state the
// rocketchat-health job writes (health.State), so the two must agree.
func TestHealthPageReadsTheHealthJobsState(t *testing.T) {
	e := newEnv(t, nil)
	st, err := json.Marshal(health.State{Failures: 3, Since: start.Add(-15 * time.Minute), Notified: true, Version: "7.4.0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.KV().Put(context.Background(), "health#rocketchat", string(st), time.Time{}); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	e.login(c)
	_, body := e.get(c, "/console/health")
	if want := "unreachable: 3 failed checks in a row since 2026-12-02 08:45:00 UTC; the human was told"; !strings.Contains(body, want) {
		t.Errorf("health page lacks %q", want)
	}
	if err := e.store.KV().Put(context.Background(), "health#rocketchat", `{"failures":0,"notified":false,"version":"7.4.0"}`, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, body = e.get(c, "/console/health"); !strings.Contains(body, "reachable (version 7.4.0)") {
		t.Errorf("a reachable Rocket.Chat is not shown as such")
	}
}

// TestApprovalsPageLinksOnlyOverHTTP: a link that is neither relative nor
// http(s) never becomes an href, whatever made it.
func TestApprovalsPageLinksOnlyOverHTTP(t *testing.T) {
	e := newEnv(t, func(o *console.Options) {
		o.ApprovalLink = func(a sb.Approval, decision string) string { return " javascript:alert('" + decision + "')" }
	})
	e.pending("appr1", "alice", "r", `{}`)
	c := e.client()
	e.login(c)
	_, body := e.get(c, "/console/approvals")
	if strings.Contains(body, "javascript:") {
		t.Errorf("the approvals page carries a javascript: link:\n%s", body)
	}
	if got := regexpFind(body, `class="approve" href="([^"]+)"`); got != "#blocked" {
		t.Errorf("approve href = %q, want #blocked", got)
	}
}
