package approvals_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// server serves the approval handler on 127.0.0.1.
func (e *env) server(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(httpapi.Approvals(e.svc))
	t.Cleanup(srv.Close)
	return srv
}

type page struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, req *http.Request) page {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return page{status: res.StatusCode, header: res.Header, body: string(b)}
}

// open requests the page a link points at, on srv instead of the public host.
func open(t *testing.T, srv *httptest.Server, method, link string) page {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, srv.URL+strings.TrimPrefix(u.Path, "/base")+"?"+u.RawQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

func post(t *testing.T, srv *httptest.Server, id string, form url.Values) page {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/approvals/"+id, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, req)
}

func form(decision, token string) url.Values {
	return url.Values{"decision": {decision}, "token": {token}}
}

// checkHeaders asserts the security headers of every approval page, and
// that the CSP admits exactly the page's own style.
func checkHeaders(t *testing.T, p page) {
	t.Helper()
	for k, want := range map[string]string{
		"Referrer-Policy": "no-referrer", "Cache-Control": "no-store", "X-Frame-Options": "DENY",
		"X-Content-Type-Options": "nosniff", "Content-Type": "text/html; charset=utf-8",
	} {
		if got := p.header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	csp := p.header.Get("Content-Security-Policy")
	for _, part := range []string{"default-src 'none'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, part) {
			t.Errorf("CSP %q lacks %q", csp, part)
		}
	}
	if p.body != "" {
		m := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(p.body)
		if m == nil {
			t.Fatal("page without its style")
		}
		sum := sha256.Sum256([]byte(m[1]))
		if !strings.Contains(csp, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
			t.Errorf("CSP %q does not admit the page's style", csp)
		}
		if strings.Contains(p.body, "<script") {
			t.Error("the page has a script")
		}
	}
}

var formRe = regexp.MustCompile(`<form method="post" action="([^"]+)">\s*<input type="hidden" name="token" value="([^"]+)">\s*<input type="hidden" name="decision" value="([^"]+)">`)

func TestGetShowsTheRequestAndChangesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		srv := e.server(t)
		a, req := e.stage(t)
		p := open(t, srv, http.MethodGet, req.ApproveURL)
		if p.status != http.StatusOK {
			t.Fatalf("GET: %d\n%s", p.status, p.body)
		}
		checkHeaders(t, p)
		for _, want := range []string{"hermes", "Nextcloud.delete", "the Q1 report is outdated", "&#34;path&#34;: &#34;reports/q1.md&#34;",
			"2026-03-15 09:26 UTC (in 24h 00min)", "run-ask"} {
			if !strings.Contains(p.body, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		for _, secret := range []string{"hunter2-secret", string(testKey)} {
			if strings.Contains(p.body, secret) {
				t.Errorf("page shows %q", secret)
			}
		}
		forms := formRe.FindAllStringSubmatch(p.body, -1)
		if len(forms) != 2 || forms[0][3] != "approve" || forms[1][3] != "deny" || forms[0][1] != a.ID || forms[1][1] != a.ID {
			t.Fatalf("forms %v", forms)
		}
		_, _, approveToken := linkParts(t, req.ApproveURL)
		if forms[0][2] != approveToken {
			t.Fatal("the approve form does not carry the link's token")
		}
		if err := e.signer.Verify(forms[1][2], a.ID, "deny", a.ArgsHash, e.clock.Now()); err != nil {
			t.Fatalf("the deny form's token: %v", err)
		}
		// Link-preview bots: GET and HEAD, again and again.
		for range 3 {
			if h := open(t, srv, http.MethodHead, req.ApproveURL); h.status != http.StatusOK || h.body != "" {
				t.Fatalf("HEAD: %d %q", h.status, h.body)
			}
			open(t, srv, http.MethodGet, req.ApproveURL)
			open(t, srv, http.MethodGet, req.DenyURL)
		}
		e.assertUnchanged(t, a)
		if len(e.notify.Decisions()) != 0 {
			t.Fatal("a GET told the notifier something")
		}

		// The deny link offers Deny only: it can never become an approval.
		d := open(t, srv, http.MethodGet, req.DenyURL)
		forms = formRe.FindAllStringSubmatch(d.body, -1)
		if d.status != http.StatusOK || len(forms) != 1 || forms[0][3] != "deny" || !strings.Contains(d.body, "open the Approve link") {
			t.Fatalf("deny page: %d forms %v", d.status, forms)
		}
	})
}

func TestGetRefusals(t *testing.T) {
	e := newEnv(t, backends[0])
	srv := e.server(t)
	a, req := e.stage(t)
	id, _, tok := linkParts(t, req.ApproveURL)
	bad := []byte(tok)
	bad[5] ^= 1
	for _, tt := range []struct {
		name, path string
		want       int
	}{
		{"tampered", "/approvals/" + id + "?decision=approve&token=" + string(bad), http.StatusForbidden},
		{"no token", "/approvals/" + id, http.StatusBadRequest},
		{"approve token as deny", "/approvals/" + id + "?decision=deny&token=" + tok, http.StatusForbidden},
		{"unknown", "/approvals/AAAAAAAAAAAAAAAAAAAAAA?decision=approve&token=" + tok, http.StatusNotFound},
		{"script in the id", "/approvals/%3Cscript%3E?decision=approve&token=" + tok, http.StatusNotFound},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+tt.path, nil)
		p := do(t, req)
		if p.status != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, p.status, tt.want)
		}
		checkHeaders(t, p)
		if strings.Contains(p.body, "hermes") || strings.Contains(p.body, "reports/q1.md") || strings.Contains(p.body, "<form") {
			t.Errorf("%s: a refused page shows details or forms:\n%s", tt.name, p.body)
		}
	}
	e.assertUnchanged(t, a)

	e.clock.Add(24 * time.Hour)
	if p := open(t, srv, http.MethodGet, req.ApproveURL); p.status != http.StatusGone || strings.Contains(p.body, "<form") {
		t.Fatalf("expired GET: %d", p.status)
	}
}

func TestPostDecides(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		srv := e.server(t)
		a, req := e.stage(t)
		id, _, approveToken := linkParts(t, req.ApproveURL)
		_, _, denyToken := linkParts(t, req.DenyURL)
		tampered := []byte(approveToken)
		tampered[30] ^= 2

		refusals := []struct {
			name string
			id   string
			form url.Values
			want int
		}{
			{"tampered token", id, form("approve", string(tampered)), http.StatusForbidden},
			{"approve token with decision=deny", id, form("deny", approveToken), http.StatusForbidden},
			{"deny token with decision=approve", id, form("approve", denyToken), http.StatusForbidden},
			{"missing decision", id, url.Values{"token": {approveToken}}, http.StatusBadRequest},
			{"unknown id", "AAAAAAAAAAAAAAAAAAAAAA", form("approve", approveToken), http.StatusNotFound},
		}
		for _, tt := range refusals {
			if p := post(t, srv, tt.id, tt.form); p.status != tt.want || !strings.Contains(p.body, "Nothing was changed") {
				t.Errorf("%s: %d, want %d\n%s", tt.name, p.status, tt.want, p.body)
			}
		}
		// A token in the query string does not count: only the form body decides.
		q, _ := http.NewRequest(http.MethodPost, srv.URL+"/approvals/"+id+"?decision=approve&token="+approveToken, nil)
		if p := do(t, q); p.status != http.StatusBadRequest && p.status != http.StatusForbidden {
			t.Errorf("POST with the token in the query: %d", p.status)
		}
		e.assertUnchanged(t, a)

		p := post(t, srv, id, form("approve", approveToken))
		if p.status != http.StatusOK || !strings.Contains(p.body, "Approved; running") || !strings.Contains(p.body, "hermes will report back") {
			t.Fatalf("approve: %d\n%s", p.status, p.body)
		}
		checkHeaders(t, p)
		if strings.Contains(p.body, "<form") || strings.Contains(p.body, "hunter2-secret") {
			t.Fatalf("the result page has a form or a secret:\n%s", p.body)
		}
		e.work(t)
		if e.exec.n.Load() != 1 || e.status(t, id) != approvals.StatusExecuted {
			t.Fatal("not executed once")
		}
		replay := post(t, srv, id, form("approve", approveToken))
		if replay.status != http.StatusConflict || !strings.Contains(replay.body, "already executed") {
			t.Fatalf("replay: %d\n%s", replay.status, replay.body)
		}
		if p := post(t, srv, id, form("deny", denyToken)); p.status != http.StatusConflict {
			t.Fatalf("deny after approve: %d", p.status)
		}
		if e.exec.n.Load() != 1 || len(e.waker.Jobs()) != 1 {
			t.Fatal("a replay ran the action or woke the agent again")
		}

		b, reqB := e.stage(t)
		idB, _, tokB := linkParts(t, reqB.ApproveURL)
		e.clock.Add(24 * time.Hour)
		if p := post(t, srv, idB, form("approve", tokB)); p.status != http.StatusGone {
			t.Fatalf("expired POST: %d", p.status)
		}
		if e.status(t, b.ID) != approvals.StatusPending || e.exec.n.Load() != 1 {
			t.Fatal("an expired POST changed something")
		}
	})
}

func TestPostDenyAnswersOK(t *testing.T) {
	e := newEnv(t, backends[0])
	srv := e.server(t)
	_, req := e.stage(t)
	id, _, tok := linkParts(t, req.DenyURL)
	p := post(t, srv, id, form("deny", tok))
	if p.status != http.StatusOK || !strings.Contains(p.body, "Denied") || !strings.Contains(p.body, "did not run") {
		t.Fatalf("deny: %d\n%s", p.status, p.body)
	}
	if e.exec.n.Load() != 0 || len(e.waker.Jobs()) != 1 {
		t.Fatal("deny ran the action or did not wake the agent")
	}
}

func TestConcurrentPostsExecuteOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const n = 20
		srv := httptest.NewServer(httpapi.Approvals(e.service(t, newReadBarrier(t, e.store, n))))
		t.Cleanup(srv.Close)
		_, req := e.stage(t)
		id, _, tok := linkParts(t, req.ApproveURL)
		statuses := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				statuses[i] = post(t, srv, id, form("approve", tok)).status
			}()
		}
		close(start)
		wg.Wait()
		e.work(t)
		count := map[int]int{}
		for _, s := range statuses {
			count[s]++
		}
		if count[http.StatusOK] != 1 || count[http.StatusConflict] != n-1 || e.exec.n.Load() != 1 {
			t.Fatalf("statuses %v, %d executions; want one 200, %d 409 and one execution", count, e.exec.n.Load(), n-1)
		}
	})
}

// failingStore is down for reads.
type failingStore struct{ approvals.Store }

func (failingStore) Get(context.Context, string) (approvals.Approval, error) {
	return approvals.Approval{}, sb.E("approvals.get", sb.EUNAVAILABLE, "the database is busy")
}

func TestStoreFailureIsA503AndSaysNothingChanged(t *testing.T) {
	e := newEnv(t, backends[0])
	_, req := e.stage(t)
	srv := httptest.NewServer(httpapi.Approvals(e.service(t, failingStore{e.store})))
	t.Cleanup(srv.Close)
	id, _, tok := linkParts(t, req.ApproveURL)
	for _, p := range []page{open(t, srv, http.MethodGet, req.ApproveURL), post(t, srv, id, form("approve", tok))} {
		if p.status != http.StatusServiceUnavailable || !strings.Contains(p.body, "Nothing was changed") || strings.Contains(p.body, "database") {
			t.Fatalf("%d\n%s", p.status, p.body)
		}
	}
}

func TestOtherMethodsAreRefused(t *testing.T) {
	e := newEnv(t, backends[0])
	srv := e.server(t)
	a, req := e.stage(t)
	for _, m := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch} {
		if p := open(t, srv, m, req.ApproveURL); p.status != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d", m, p.status)
		}
	}
	e.assertUnchanged(t, a)
}

func TestPostBodyIsCapped(t *testing.T) {
	e := newEnv(t, backends[0])
	srv := e.server(t)
	a, _ := e.stage(t)
	big := url.Values{"decision": {"approve"}, "token": {strings.Repeat("A", 20<<10)}}
	if p := post(t, srv, a.ID, big); p.status != http.StatusBadRequest {
		t.Fatalf("oversized form: %d", p.status)
	}
	e.assertUnchanged(t, a)
}
