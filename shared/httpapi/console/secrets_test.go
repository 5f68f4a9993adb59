package console_test

import (
	"context"
	"encoding/json"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/httpapi/console"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake/waketest"
)

// configuredSecret is a value of the instance's configuration (a token, a
// password) that an agent put into arguments under a harmless key. It has
// an '&', which HTML escaping turns into "&amp;": a scrubber of the page's
// bytes would no longer find it.
const configuredSecret = "Conf&igured-Quebec-0013"

// secretCalls are approval arguments with a secret in every shape the
// masking knows, each value unique so that a page can be searched for it;
// shown is what must stay visible.
var secretCalls = []struct {
	tool, action, args string
	secrets, shown     []string
}{
	{"Nextcloud", "share", `{"path":"/reports/q3.pdf","shareType":3,"password":"LinkPw-Alpha-7781"}`,
		[]string{"LinkPw-Alpha-7781"}, []string{"/reports/q3.pdf"}},
	{"Documents", "deliver", `{"localPath":"personal:q3.csv","format":"xlsx","share":{"publicLink":true,"password":"LinkPw-Bravo-4410"}}`,
		[]string{"LinkPw-Bravo-4410"}, []string{"personal:q3.csv", "publicLink"}},
	{"Workspace", "write", `{"path":"creds.md","passwd":"Passwd-Charlie-0001","secret":"Secret-Delta-0002","token":"Token-Echo-0003",` +
		`"apiKey":"ApiKey-Foxtrot-0004","api_key":"ApiKey-Golf-0005","authToken":"AuthToken-Hotel-0006","appPassword":"AppPw-India-0007"}`,
		[]string{"Passwd-Charlie-0001", "Secret-Delta-0002", "Token-Echo-0003", "ApiKey-Foxtrot-0004", "ApiKey-Golf-0005", "AuthToken-Hotel-0006", "AppPw-India-0007"},
		[]string{"creds.md", "appPassword"}},
	{"RocketChat", "send", `{"text":"call it with Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.JulietKilo0008 please","note":"or send Bearer LimaMike0009xyzLimaMike0009 yourself"}`,
		[]string{"JulietKilo0008", "LimaMike0009xyzLimaMike0009"}, []string{"call it with", "yourself"}},
	{"Nextcloud", "upload", `{"path":"a.json","options":{"auth":{"password":"Nested-November-0010"}},` +
		`"accounts":[{"user":"xavier","token":"Array-Oscar-0011"},{"secret":["Array-Papa-0012",90817263]}],` +
		`"payload":"{\"password\":\"Embedded-Romeo-0014\"}"}`,
		[]string{"Nested-November-0010", "Array-Oscar-0011", "Array-Papa-0012", "90817263", "Embedded-Romeo-0014"}, []string{"a.json", "xavier"}},
	{"Workspace", "write", `{"path":"note.md","content":"the door code is ` + configuredSecret + `"}`,
		[]string{configuredSecret}, []string{"note.md", "the door code is"}},
}

// TestNoPageShowsASecretOfTheArguments plants every shape in approvals
// (and, as an audit written before masking would hold them, in the
// chain's tool calls) and reads every console page, the approval page of
// each decision and the Telegram request text: no secret appears, the
// rest does.
func TestNoPageShowsASecretOfTheArguments(t *testing.T) {
	sc := scrub.New([]string{configuredSecret})
	e := newEnv(t, func(o *console.Options) { o.Scrubber = sc })
	ctx := context.Background()
	var planted []sb.Approval
	for i, call := range secretCalls {
		id := "sec" + itoa(i)
		a := e.pendingCall(id, call.tool, call.action, call.args)
		planted = append(planted, a)
		if err := e.store.Append(ctx, sb.AuditEntry{ID: "audit-" + id, At: start, AgentID: "alice", Run: a.Run,
			Tool: call.tool, Action: call.action, Args: call.args, Decision: sb.DecisionApprove, ApprovalID: id, Outcome: "pending_approval"}); err != nil {
			t.Fatal(err)
		}
	}
	c := e.client()
	e.login(c)
	pages := map[string]string{}
	for _, p := range []string{"/console/", "/console/?a=alice&b=all", "/console/approvals", "/console/chain?root=root-x", "/console/health"} {
		res, body := e.get(c, p)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", p, res.StatusCode)
		}
		pages[p] = body
	}
	approvalPage := e.approvalPages(sc)
	for _, a := range planted {
		for _, d := range []approvals.Decision{approvals.Approve, approvals.Deny} {
			link := approvals.DecisionLink("https://approvals.example.org", e.signer, a, d)
			u, _ := url.Parse(link)
			rec := httptest.NewRecorder()
			approvalPage.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u.RequestURI(), nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("approval page of %s (%s): %d\n%s", a.ID, d, rec.Code, rec.Body)
			}
			pages["approval page "+a.ID+" "+string(d)] = rec.Body.String()
		}
		pages["Telegram request "+a.ID] = approvals.Describe(a, "Alice", sc)
	}
	for name, body := range pages {
		text := html.UnescapeString(body)
		for _, call := range secretCalls {
			for _, s := range call.secrets {
				if strings.Contains(body, s) || strings.Contains(text, s) {
					t.Errorf("%s shows the secret %q of %s.%s", name, s, call.tool, call.action)
				}
			}
		}
	}
	for i, call := range secretCalls {
		id := "sec" + itoa(i)
		for _, name := range []string{"/console/approvals", "/console/chain?root=root-x", "approval page " + id + " approve", "Telegram request " + id} {
			text := html.UnescapeString(pages[name])
			for _, s := range append([]string{scrub.Mask}, call.shown...) {
				if !strings.Contains(text, s) {
					t.Errorf("%s does not show %q of %s.%s", name, s, call.tool, call.action)
				}
			}
		}
	}
}

// pendingCall creates a pending approval of tool.action with args.
func (e *env) pendingCall(id, tool, action, args string) sb.Approval {
	e.t.Helper()
	hash, err := approvals.ArgsHash(tool, action, json.RawMessage(args))
	if err != nil {
		e.t.Fatal(err)
	}
	a := sb.Approval{ID: id, AgentID: "alice", Tool: tool, Action: action, Args: json.RawMessage(args), ArgsHash: hash,
		Run: sb.RunContext{RunID: "run-x", RootRunID: "root-x", AgentID: "alice"}, Reason: "needed",
		CreatedAt: e.clock.Now(), ExpiresAt: e.clock.Now().Add(24 * time.Hour).Truncate(time.Second), Status: sb.ApprovalPending}
	if err := e.store.Approvals().Create(context.Background(), a); err != nil {
		e.t.Fatal(err)
	}
	return a
}

// approvalPages is the approvals function's handler over e's store, as the
// function URL serves it (route table, middleware, response scrubbing).
func (e *env) approvalPages(sc *scrub.Scrubber) http.Handler {
	e.t.Helper()
	svc, err := approvals.New(approvals.Options{Store: e.store.Approvals(), Signer: e.signer, Notifier: silent{}, Waker: &waketest.Dispatcher{},
		PublicBaseURL: "https://approvals.example.org", Scrub: sc, Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	routes, err := httpapi.Routes(map[string]http.Handler{"approvals": httpapi.Approvals(svc)})
	if err != nil {
		e.t.Fatal(err)
	}
	return httpapi.Serve(routes, slog.New(slog.DiscardHandler), scrub.New(nil))
}

// silent is a Notifier nobody reads: the test creates approvals directly.
type silent struct{}

func (silent) RequestApproval(context.Context, approvals.Request) (json.RawMessage, error) {
	return nil, nil
}
func (silent) Decided(context.Context, approvals.Approval) error { return nil }
