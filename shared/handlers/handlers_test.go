package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/jobs"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// eventsDir is the catalogue of sample payloads, relative to this
// package.
const eventsDir = "../../events"

// sampleEvent is one events/<fn>/<file>.json.
type sampleEvent struct {
	fn   string
	path string
	raw  []byte
}

func (e sampleEvent) name() string { return e.fn + "/" + filepath.Base(e.path) }

func loadEvents(t *testing.T) []sampleEvent {
	t.Helper()
	dirs, err := os.ReadDir(eventsDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []sampleEvent
	for _, d := range dirs {
		if !d.IsDir() {
			t.Errorf("events/%s: only one directory per function belongs in events/", d.Name())
			continue
		}
		files, err := os.ReadDir(filepath.Join(eventsDir, d.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			path := filepath.Join(eventsDir, d.Name(), f.Name())
			if f.IsDir() || filepath.Ext(f.Name()) != ".json" {
				t.Errorf("%s: only <name>.json sample events belong in events/%s/", path, d.Name())
				continue
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, sampleEvent{fn: d.Name(), path: path, raw: raw})
		}
	}
	if len(out) == 0 {
		t.Fatal("no sample events under events/")
	}
	return out
}

// TestEventsCoverCatalogue: every sample event belongs to a catalogued
// function, and every catalogued function has a sample.
func TestEventsCoverCatalogue(t *testing.T) {
	count := map[string]int{}
	for _, ev := range loadEvents(t) {
		count[ev.fn]++
		if _, ok := deploy.FunctionByName(ev.fn); !ok {
			t.Errorf("%s: %q is not a function in the deploy catalogue (shared/platform/deploy)", ev.path, ev.fn)
		}
	}
	for _, fn := range deploy.Functions {
		if count[fn.Name] == 0 {
			t.Errorf("function %q has no sample event; add events/%s/<name>.json", fn.Name, fn.Name)
		}
	}
}

// awsOnlyFields are fields that real function-URL payloads carry (AWS
// Lambda developer guide, "Request payload format") but that
// events.LambdaFunctionURLRequest of aws-lambda-go v1.55.1 does not model.
// They are checked against the one value AWS sends for function URLs and
// removed before the strict decode; any other unknown field fails it.
var awsOnlyFields = map[string][]any{
	"routeKey":                                      {"$default"},
	"requestContext.routeKey":                       {"$default"},
	"requestContext.stage":                          {"$default"},
	"requestContext.authentication":                 {nil},
	"requestContext.authorizer.iam.cognitoIdentity": {nil},
	"requestContext.authorizer.iam.principalOrgId":  {nil},
	"pathParameters":                                {nil},
	"stageVariables":                                {nil},
}

// eventType returns a pointer to a new value of the function's event type.
func eventType(t *testing.T, fn string) any {
	t.Helper()
	f, ok := deploy.FunctionByName(fn)
	switch {
	case !ok:
		t.Fatalf("no function %q in the deploy catalogue", fn)
	case f.URLAuth != "":
		return &events.LambdaFunctionURLRequest{}
	case fn == "jobs":
		return &jobs.Event{}
	case fn == "agent-worker":
		return &sb.WakeJob{}
	case fn == "telemetry-export":
		return &events.DynamoDBEvent{} // the span table's stream
	}
	t.Fatalf("function %q: no event type known to this test; add it to eventType", fn)
	return nil
}

// TestEventsDecodeStrictly: each sample decodes into its function's event
// type with unknown fields refused, and re-encodes without losing a field
// (STYLE habit 7).
func TestEventsDecodeStrictly(t *testing.T) {
	for _, ev := range loadEvents(t) {
		t.Run(ev.name(), func(t *testing.T) {
			var generic map[string]any
			if err := json.Unmarshal(ev.raw, &generic); err != nil {
				t.Fatalf("not a JSON object: %v", err)
			}
			v := taskEventType(t, ev.raw)
			if v == nil {
				v = eventType(t, ev.fn)
			}
			if _, queued := generic["Records"]; queued && ev.fn == "agent-worker" {
				v = &events.SQSEvent{} // the wake queue's batch of jobs
			}
			input := ev.raw
			if _, isURL := v.(*events.LambdaFunctionURLRequest); isURL {
				stripAWSOnly(t, generic)
				var err error
				if input, err = json.Marshal(generic); err != nil {
					t.Fatal(err)
				}
			}
			dec := json.NewDecoder(bytes.NewReader(input))
			dec.DisallowUnknownFields()
			if err := dec.Decode(v); err != nil {
				t.Fatalf("strict decode into %T: %v", v, err)
			}
			if dec.More() {
				t.Fatal("data after the event object")
			}
			again, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := json.Unmarshal(again, &back); err != nil {
				t.Fatal(err)
			}
			for _, lost := range missing("", generic, back) {
				t.Errorf("re-encoding %T loses %s", v, lost)
			}
			if u, ok := v.(*events.LambdaFunctionURLRequest); ok {
				checkURLEvent(t, ev.fn, u)
			}
		})
	}
}

// stripAWSOnly removes the awsOnlyFields from m after checking their values.
func stripAWSOnly(t *testing.T, m map[string]any) {
	t.Helper()
	for path, allowed := range awsOnlyFields {
		keys := strings.Split(path, ".")
		parent := m
		for _, k := range keys[:len(keys)-1] {
			parent, _ = parent[k].(map[string]any)
		}
		last := keys[len(keys)-1]
		v, present := parent[last]
		if !present {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || reflect.DeepEqual(v, a)
		}
		if !ok {
			t.Errorf("%s = %#v; function URLs always send one of %v", path, v, allowed)
		}
		delete(parent, last)
	}
}

// missing lists the paths of want that got lacks or holds differently.
func missing(prefix string, want, got map[string]any) []string {
	var out []string
	for k, w := range want {
		path := strings.TrimPrefix(prefix+"."+k, ".")
		g, ok := got[k]
		switch {
		case !ok:
			out = append(out, path)
		case isMap(w) && isMap(g):
			out = append(out, missing(path, w.(map[string]any), g.(map[string]any))...)
		case !reflect.DeepEqual(w, g):
			out = append(out, fmt.Sprintf("%s (%#v became %#v)", path, w, g))
		}
	}
	sort.Strings(out)
	return out
}

func isMap(v any) bool { _, ok := v.(map[string]any); return ok }

// checkURLEvent: a sample function-URL event must name a route its function
// serves, agree with itself and carry a real IAM identity.
func checkURLEvent(t *testing.T, fn string, u *events.LambdaFunctionURLRequest) {
	t.Helper()
	f, _ := deploy.FunctionByName(fn)
	served := false
	for _, r := range f.Routes {
		mux := http.NewServeMux() // match the pattern the way the dev listener does
		mux.HandleFunc(r.Method+" "+r.Path, func(http.ResponseWriter, *http.Request) {})
		req := httptest.NewRequest(u.RequestContext.HTTP.Method, u.RawPath, nil)
		if _, pattern := mux.Handler(req); pattern != "" {
			served = true
		}
	}
	if !served {
		t.Errorf("%s %s is not a route of function %q (%v)", u.RequestContext.HTTP.Method, u.RawPath, fn, f.Routes)
	}
	if u.Version != "2.0" || u.RequestContext.HTTP.Path != u.RawPath {
		t.Errorf("version %q, http.path %q, rawPath %q: want 2.0 and equal paths", u.Version, u.RequestContext.HTTP.Path, u.RawPath)
	}
	if f.URLAuth == "AWS_IAM" && (u.RequestContext.Authorizer == nil || u.RequestContext.Authorizer.IAM == nil) {
		t.Errorf("function %q has AuthType AWS_IAM but the event has no requestContext.authorizer.iam", fn)
	}
	if u.Body != "" && !u.IsBase64Encoded && !json.Valid([]byte(u.Body)) {
		t.Errorf("body is not JSON: %s", u.Body)
	}
}

// newApp builds the production App on fresh dynalite tables and an
// in-process S3, with the example config.
func newApp(t *testing.T) *app.App {
	t.Helper()
	config, err := filepath.Abs("../../switchboard.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return newAppWith(t, config)
}

// newAppWith builds the App from the config file at config.
func newAppWith(t *testing.T, config string) *app.App {
	t.Helper()
	return newAppOn(t, config, dynamotest.Endpoint(t))
}

// newAppOn is newAppWith with DynamoDB at ddbEndpoint (a fault proxy).
func newAppOn(t *testing.T, config, ddbEndpoint string) *app.App {
	t.Helper()
	ctx := context.Background()
	tables := dynamotest.FreshTables(t, dynamotest.Client(t))
	s3URL, stopS3, err := s3fake.StartFake("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopS3)
	// The SDK reads endpoints from the process environment (STYLE habit 8).
	// Everything else that could point it at a real account is cleared.
	home := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB":   ddbEndpoint,
		"AWS_ENDPOINT_URL_S3":         s3URL,
		"AWS_ENDPOINT_URL":            "",
		"AWS_REGION":                  "us-east-1",
		"AWS_ACCESS_KEY_ID":           "test",
		"AWS_SECRET_ACCESS_KEY":       "test",
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             filepath.Join(home, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "credentials"),
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
	const bucket = "handlers-test"
	s3c, err := s3blob.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s3blob.EnsureBucket(ctx, s3c, bucket); err != nil {
		t.Fatal(err)
	}
	getenv := func(key string) string {
		switch key {
		case deploy.EnvConfig:
			return config
		case deploy.EnvBucket:
			return bucket
		}
		return tables(key)
	}
	a, err := app.New(ctx, getenv)
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	envOf.Store(a, getenv)
	t.Cleanup(func() { envOf.Delete(a) })
	return a
}

// envOf remembers the environment each test App was built from, so that
// invoke can build the function's own handler from the same one.
var envOf sync.Map // *app.App → func(string) string

var builders = app.Builders

// invoke runs raw through the production decode path of function fn, as
// its main.go builds it (the lean builder) on a's environment.
func invoke(t *testing.T, a *app.App, fn string, raw []byte) ([]byte, error) {
	t.Helper()
	build, ok := builders[fn]
	if !ok {
		t.Fatalf("no builder for function %q", fn)
	}
	getenv, _ := envOf.Load(a)
	h, err := build(context.Background(), getenv.(func(string) string))
	if err != nil {
		t.Fatalf("build %s: %v", fn, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return lambda.NewHandler(h).Invoke(ctx, raw)
}

// streamed is a function-URL streaming response: a JSON prelude, 8 NUL
// bytes, then the body.
type streamed struct {
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers"`
	Cookies    []string          `json:"cookies"`
	Body       []byte            `json:"-"`
}

func parseStreamed(t *testing.T, resp []byte) streamed {
	t.Helper()
	prelude, body, ok := bytes.Cut(resp, make([]byte, 8))
	if !ok {
		t.Fatalf("response has no 8-NUL separator after the prelude: %q", resp)
	}
	var s streamed
	dec := json.NewDecoder(bytes.NewReader(prelude))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("prelude %q: %v", prelude, err)
	}
	s.Body = body
	return s
}

// TestEventsRunThroughHandler replays every sample through
// lambda.NewHandler(…).Invoke with a real App, as `make invoke` and the
// Lambda runtime do.
func TestEventsRunThroughHandler(t *testing.T) {
	for _, ev := range loadEvents(t) {
		if ev.fn == "agent-worker" || taskEventType(t, ev.raw) != nil {
			continue // TestAgentWorkerEventRepliesInRocketChat, TestTaskEventsRunThroughHandler
		}
		t.Run(ev.name(), func(t *testing.T) {
			a := newApp(t)
			resp, err := invoke(t, a, ev.fn, ev.raw)
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			f, _ := deploy.FunctionByName(ev.fn)
			switch {
			case f.URLAuth != "":
				checkURLResponse(t, a, ev, parseStreamed(t, resp))
			case ev.fn == "jobs":
				var run struct {
					Job, Outcome, Detail, Trigger string
				}
				if err := json.Unmarshal(resp, &run); err != nil {
					t.Fatalf("response %s: %v", resp, err)
				}
				var want jobs.Event
				_ = json.Unmarshal(ev.raw, &want)
				if run.Outcome != "ok" || run.Job != want.Job || run.Trigger != "schedule" {
					t.Errorf("job run = %+v, want job %q, outcome ok, trigger schedule", run, want.Job)
				}
				last, err := a.Store().LastRuns(context.Background())
				if err != nil || len(last) != 1 || last[0].Job != want.Job || last[0].Outcome != "ok" {
					t.Errorf("LastRuns = %+v, %v; want the one run recorded", last, err)
				}
			case ev.fn == "telemetry-export":
				// The example config sets no instance.telemetry.otlp: the
				// items are acknowledged, none reported failed.
				var out events.DynamoDBEventResponse
				if err := json.Unmarshal(resp, &out); err != nil || len(out.BatchItemFailures) != 0 {
					t.Errorf("response %s (%v), want no batch item failures", resp, err)
				}
			default:
				t.Fatalf("function %q: no response check; add one", ev.fn)
			}
		})
	}
}

func checkURLResponse(t *testing.T, a *app.App, ev sampleEvent, s streamed) {
	t.Helper()
	var raw events.LambdaFunctionURLRequest
	if err := json.Unmarshal(ev.raw, &raw); err != nil {
		t.Fatal(err)
	}
	switch {
	case strings.HasPrefix(raw.RawPath, "/approvals/"):
		// The example config has no publicBaseUrl, so approvals are not set
		// up outside `switchboard dev`: the link fails closed.
		if s.StatusCode != 404 || !strings.Contains(string(s.Body), "not set up") {
			t.Errorf("approval link without approvals = %d %s, want 404 naming the missing setup", s.StatusCode, s.Body)
		}
		return
	case strings.HasPrefix(raw.RawPath, "/console/"):
		// No console password in the example config: the console is off.
		if s.StatusCode != 404 || s.Headers["Cache-Control"] != "no-store" {
			t.Errorf("console without a password = %d (Cache-Control %q) %s, want 404, no-store", s.StatusCode, s.Headers["Cache-Control"], s.Body)
		}
		return
	case raw.RawPath == "/mcp":
		// The example's MCP client hermes-desktop lists Hermes's tools.
		if s.StatusCode != 200 || !strings.Contains(string(s.Body), `"Workspace__write"`) {
			t.Errorf("MCP tools/list = %d %s, want 200 with Workspace__write", s.StatusCode, s.Body)
		}
		return
	case raw.RawPath == "/hooks/telegram":
		// No webhookSecret in the example config: every update is refused.
		if s.StatusCode != 401 || !strings.Contains(string(s.Body), "Secret-Token") {
			t.Errorf("telegram update without a configured secret = %d %s, want 401", s.StatusCode, s.Body)
		}
		return
	}
	if s.StatusCode != 200 {
		t.Fatalf("statusCode = %d, want 200; body %s", s.StatusCode, s.Body)
	}
	if ct := s.Headers["Content-Type"]; ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var body map[string]any
	if err := json.Unmarshal(s.Body, &body); err != nil {
		t.Fatalf("body is not a JSON object (%v): %q", err, s.Body)
	}
	var req events.LambdaFunctionURLRequest
	if err := json.Unmarshal(ev.raw, &req); err != nil {
		t.Fatal(err)
	}
	if req.RequestContext.HTTP.Method == "GET" && req.RawPath == "/tools" {
		list, _ := body["tools"].([]any)
		var names []string
		for _, x := range list {
			m, _ := x.(map[string]any)
			names = append(names, fmt.Sprint(m["name"]))
		}
		if !contains(names, "Workspace") {
			t.Errorf("tools = %v, want a list with Workspace; body %s", names, s.Body)
		}
		return
	}
	if req.RawPath == "/hooks/rocketchat" {
		// Rocket.Chat counts a non-empty JSON body without text as delivered
		// and posts nothing.
		if body["success"] != true || body["text"] != nil {
			t.Errorf("webhook answer = %s, want {\"success\":true} and no text", s.Body)
		}
		return
	}
	if body["status"] != "ok" {
		t.Errorf("envelope = %s, want status ok", s.Body)
	}
	var call struct{ Action string }
	_ = json.Unmarshal([]byte(req.Body), &call)
	if call.Action == "write" {
		blobs, err := a.Blobs().List(context.Background(), "", 10)
		if err != nil || len(blobs) != 1 {
			t.Errorf("bucket holds %v (%v) after a write, want one object", blobs, err)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestURLEventsWithoutIAMAreRefused: the same samples with the IAM
// authorizer removed (a function URL misconfigured with AuthType NONE) get
// 403 and change nothing.
func TestURLEventsWithoutIAMAreRefused(t *testing.T) {
	ran := 0
	for _, ev := range loadEvents(t) {
		f, _ := deploy.FunctionByName(ev.fn)
		if f.URLAuth != "AWS_IAM" || taskEventType(t, ev.raw) != nil {
			continue // a Task payload is not a URL request; IAM guards who may invoke at all
		}
		ran++
		t.Run(ev.name(), func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(ev.raw, &m); err != nil {
				t.Fatal(err)
			}
			rc, _ := m["requestContext"].(map[string]any)
			delete(rc, "authorizer")
			raw, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			a := newApp(t)
			resp, err := invoke(t, a, ev.fn, raw)
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			s := parseStreamed(t, resp)
			if s.StatusCode != 403 {
				t.Fatalf("statusCode = %d, want 403; body %s", s.StatusCode, s.Body)
			}
			var env map[string]any
			if err := json.Unmarshal(s.Body, &env); err != nil || env["status"] != "error" ||
				!strings.Contains(fmt.Sprint(env["error"]), "AWS_IAM") {
				t.Errorf("body = %s, want an error envelope naming AWS_IAM", s.Body)
			}
			if blobs, err := a.Blobs().List(context.Background(), "", 10); err != nil || len(blobs) != 0 {
				t.Errorf("bucket holds %v (%v) after a refused call, want nothing", blobs, err)
			}
		})
	}
	if ran == 0 {
		t.Fatal("no sample event for an AWS_IAM function URL")
	}
}

// TestJobsUnknownJobFails: a schedule naming a job the code lacks makes the
// invocation fail, so Lambda's retries and the error alarm see it.
func TestJobsUnknownJobFails(t *testing.T) {
	a := newApp(t)
	_, err := invoke(t, a, "jobs", []byte(`{"job":"no-such-job"}`))
	if err == nil || !strings.Contains(err.Error(), `no job "no-such-job"`) {
		t.Errorf("Invoke = %v, want an error naming the unknown job", err)
	}
}

// TestEveryFunctionHasABuilder: every catalogued function has its lean
// builder and a handler on the full App (`switchboard invoke`), and the App
// names the functions when asked for an unknown one.
func TestEveryFunctionHasABuilder(t *testing.T) {
	a := newApp(t)
	for _, f := range deploy.Functions {
		if _, ok := builders[f.Name]; !ok {
			t.Errorf("function %q has no builder", f.Name)
		}
		if _, err := a.Handler(f.Name); err != nil {
			t.Errorf("Handler(%q): %v", f.Name, err)
		}
	}
	for name := range builders {
		if _, ok := deploy.FunctionByName(name); !ok {
			t.Errorf("builder %q names no function in the deploy catalogue", name)
		}
	}
	_, err := a.Handler("nope")
	if err == nil || !strings.Contains(err.Error(), "jobs") || !strings.Contains(err.Error(), "tools") {
		t.Errorf(`Handler("nope") = %v, want an error listing the functions`, err)
	}
}

// TestAgentWorkerEventRepliesInRocketChat replays the agent-worker samples
// with an agent whose Rocket.Chat is a fake: the run happens and its answer
// is posted into the room the wake names.
func TestAgentWorkerEventRepliesInRocketChat(t *testing.T) {
	for _, ev := range loadEvents(t) {
		if ev.fn != "agent-worker" || taskEventType(t, ev.raw) != nil {
			continue
		}
		t.Run(ev.name(), func(t *testing.T) {
			rc := rcfake.New()
			t.Cleanup(rc.Close)
			rc.SetRateLimit(0, 0)
			rc.AddUser("richard")
			id, token := rc.AddUser("agent-hermes", "bot", "user")
			room := rc.AddChannel("general", "richard", "agent-hermes")
			cfg := fmt.Sprintf(`instance:
  name: handlers-worker
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}"}
agents:
  - id: hermes
    name: Hermes
    tools:
      RocketChat: {baseUrl: %s, userId: %s, authToken: %s, username: agent-hermes}
`, rc.URL, id, token)
			path := filepath.Join(t.TempDir(), "worker.yaml")
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			a := newAppWith(t, path)
			if _, err := invoke(t, a, ev.fn, ev.raw); err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			raw := ev.raw
			var queued events.SQSEvent
			if json.Unmarshal(raw, &queued) == nil && len(queued.Records) == 1 {
				raw = []byte(queued.Records[0].Body) // the wake queue's message
			}
			var job sb.WakeJob
			if err := json.Unmarshal(raw, &job); err != nil {
				t.Fatal(err)
			}
			var replies []string
			for _, m := range rc.Messages(room) {
				if m.Username == "agent-hermes" {
					replies = append(replies, m.Text)
				}
			}
			if len(replies) != 1 || !strings.HasPrefix(replies[0], "Hermes heard:") {
				t.Fatalf("replies in %s = %q, want one answer from the run", room, replies)
			}
			if job.ReplyTo == nil || job.ReplyTo.RoomID != room {
				t.Errorf("sample replyTo = %+v, want room %s", job.ReplyTo, room)
			}
		})
	}
}
