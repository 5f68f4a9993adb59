package console_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/httpapi/console"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

const password = "correct horse battery staple"

// clock is the fake time of the console and its stores.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// env is a console on a fresh table set in dynalite, served on 127.0.0.1
// through the same route table and middleware as the function URL.
type env struct {
	t       testing.TB
	srv     *httptest.Server
	handler http.Handler // what srv serves: the route table and middleware
	store   *dynamo.Store
	own     *dynamo.Store
	msgs    *dynamo.AgentMessages
	clock   *clock
	signer  *approvals.Signer
	opts    console.Options
	baseURL string
}

var start = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

func newEnv(t testing.TB, tweak func(*console.Options)) *env {
	t.Helper()
	c := dynamotest.Client(t)
	getenv := dynamotest.FreshTables(t, c)
	clk := &clock{t: start}
	store := dynamo.New(c, getenv)
	store.Now = clk.Now
	own := store.ConsoleState(getenv)
	signer, err := approvals.NewSigner([]byte("a-signing-key-of-32-characters!!"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: store, own: own, msgs: store.AgentMessages(nil), clock: clk, signer: signer}
	e.opts = console.Options{
		Password:  password,
		Reader:    reader{store, e.msgs},
		Approvals: store.Approvals(),
		ApprovalLink: func(a sb.Approval, d string) string {
			return approvals.DecisionLink("https://approvals.example.org", signer, a, approvals.Decision(d))
		},
		Health: store.KV(), HealthKey: "health#rocketchat",
		Sessions: own.KV(), Attempts: own,
		Agents: []console.Agent{{ID: "alice", Name: "Alice", DailyBudgetUSD: 2}, {ID: "bob", Name: "Bob"}, {ID: "carol", Name: "Carol", DailyBudgetUSD: 1}},
		Jobs:   []console.Job{{Name: "heartbeat", Schedule: "rate(5 minutes)"}, {Name: "rocketchat-health", Schedule: "rate(5 minutes)"}, {Name: "telegram-poll", Schedule: "rate(5 minutes)"}},
		Now:    clk.Now,
	}
	if tweak != nil {
		tweak(&e.opts)
	}
	h, err := console.New(e.opts)
	if err != nil {
		t.Fatal(err)
	}
	routes, err := httpapi.Routes(map[string]http.Handler{"console": h})
	if err != nil {
		t.Fatal(err)
	}
	e.handler = httpapi.Serve(routes, slog.New(slog.DiscardHandler), scrub.New(nil))
	e.srv = httptest.NewServer(e.handler)
	t.Cleanup(e.srv.Close)
	e.baseURL = e.srv.URL
	return e
}

type reader struct {
	*dynamo.Store
	*dynamo.AgentMessages
}

// client is a browser-like client: a cookie jar, no redirects followed.
func (e *env) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// get fetches path and returns status and body.
func (e *env) get(c *http.Client, path string) (*http.Response, string) {
	e.t.Helper()
	res, err := c.Get(e.baseURL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	return res, readAll(res)
}

func readAll(res *http.Response) string {
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// post sends a form.
func (e *env) post(c *http.Client, path string, form url.Values, header ...string) (*http.Response, string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.baseURL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	return res, readAll(res)
}

// login logs c in and fails the test otherwise.
func (e *env) login(c *http.Client) {
	e.t.Helper()
	_, body := e.get(c, "/console/login")
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		e.t.Fatalf("login form without a CSRF token:\n%s", body)
	}
	res, body := e.post(c, "/console/login", url.Values{"csrf": {m[1]}, "password": {password}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/" {
		e.t.Fatalf("login: %d %s, want 303 to /console/\n%s", res.StatusCode, res.Header.Get("Location"), body)
	}
}

// csrf is the token of a page's logout form.
func csrfOf(t testing.TB, body string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", body)
	}
	return m[1]
}

// msg records one message between from and to.
func (e *env) msg(from, to string, at time.Time, content string, tweak func(*sb.AgentMessage)) sb.AgentMessage {
	e.t.Helper()
	m := sb.AgentMessage{ID: sb.NewID(at), From: from, To: to, Channel: sb.ChannelAsk, Direction: sb.DirectionRequest,
		Content: content, RunID: "run-" + from + "-1", RootRunID: "root-1", Status: sb.MessageDelivered, OccurredAt: at}
	if tweak != nil {
		tweak(&m)
	}
	if err := e.msgs.Record(context.Background(), m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

// pending creates a pending approval.
func (e *env) pending(id, agent, reason string, args string) sb.Approval {
	e.t.Helper()
	hash, err := approvals.ArgsHash("Nextcloud", "delete", json.RawMessage(args))
	if err != nil {
		e.t.Fatal(err)
	}
	a := sb.Approval{ID: id, AgentID: agent, Tool: "Nextcloud", Action: "delete", Args: json.RawMessage(args), ArgsHash: hash,
		Run: sb.RunContext{RunID: "run-x", RootRunID: "root-x", AgentID: agent}, Reason: reason,
		CreatedAt: e.clock.Now(), ExpiresAt: e.clock.Now().Add(24 * time.Hour).Truncate(time.Second), Status: sb.ApprovalPending}
	if err := e.store.Approvals().Create(context.Background(), a); err != nil {
		e.t.Fatal(err)
	}
	return a
}

func itoa(i int) string { return strconv.Itoa(i) }

func regexpFind(s, expr string) string {
	m := regexp.MustCompile(expr).FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	return m[1]
}

func htmlUnescape(s string) string { return html.UnescapeString(s) }
