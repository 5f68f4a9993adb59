package workspace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

const testBucket = "workspace-test"

// env is one fresh in-process S3 server with the bucket, and the tool over it.
type env struct {
	tool  *workspace.Tool
	store *s3blob.Store
	stop  func()
}

// limits: hermes and atlas have a Workspace block (hermes 1 KB per file,
// atlas the default), nobody else has.
func limits(agentID string) (int64, bool) {
	switch agentID {
	case "hermes":
		return 1024, true
	case "atlas":
		return 0, true
	}
	return 0, false
}

func newEnv(t *testing.T) *env {
	t.Helper()
	endpoint, stop, err := s3fake.StartFake("")
	if err != nil {
		t.Fatalf("StartFake: %v", err)
	}
	t.Cleanup(stop)
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL"} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", dir+"/config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/credentials")
	t.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
	t.Setenv("AWS_MAX_ATTEMPTS", "1")
	ctx := context.Background()
	client, err := s3blob.NewClient(ctx)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	if err := s3blob.EnsureBucket(ctx, client, testBucket); err != nil {
		t.Fatalf("EnsureBucket: %v", err)
	}
	store := s3blob.New(client, testBucket)
	return &env{tool: workspace.NewTool(store, limits), store: store, stop: stop}
}

// call runs an action the way the executor does and returns the envelope
// as the model sees it (marshalled JSON, decoded into a map).
func (e *env) call(t *testing.T, agent, action, args string) map[string]any {
	t.Helper()
	env := e.tool.Invoke(context.Background(), sb.ToolCall{
		AgentID: agent, Tool: workspace.ToolName, Action: action, Args: json.RawMessage(args),
		Run: sb.RunContext{RunID: "r1", RootRunID: "r1", AgentID: agent}, Origin: sb.OriginAgent,
	})
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatalf("marshal envelope: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("unmarshal envelope: %v", err)
	}
	for _, leak := range []string{"operation error", "127.0.0.1", testBucket, "agents/", "s3 ", "StatusCode", "panic"} {
		if strings.Contains(string(b), leak) && !strings.Contains(args, leak) {
			t.Errorf("%s %s: envelope leaks %q: %s", action, args, leak, b)
		}
	}
	return m
}

func wantOK(t *testing.T, m map[string]any) {
	t.Helper()
	if m["status"] != "ok" {
		t.Fatalf("status = %v, want ok: %v", m["status"], m)
	}
}

// wantError checks an error envelope: its code and that the message contains
// every one of parts.
func wantError(t *testing.T, m map[string]any, code string, parts ...string) {
	t.Helper()
	if m["status"] != "error" {
		t.Fatalf("status = %v, want error: %v", m["status"], m)
	}
	if m["code"] != code {
		t.Errorf("code = %v, want %s (%v)", m["code"], code, m["error"])
	}
	msg, _ := m["error"].(string)
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not contain %q", msg, p)
		}
	}
}

func TestSpec(t *testing.T) {
	spec := workspace.NewTool(nil, limits).Spec()
	if spec.Name != "Workspace" {
		t.Errorf("name = %q", spec.Name)
	}
	if got := strings.Join(spec.ActionNames(), ","); got != "delete,list,read,write" {
		t.Errorf("actions = %s", got)
	}
	for _, a := range spec.Actions {
		p := a.Parameters
		if p["type"] != "object" || p["additionalProperties"] != false {
			t.Errorf("%s: parameters must be a closed object: %v", a.Name, p)
		}
		props, _ := p["properties"].(map[string]any)
		req, ok := p["required"].([]string)
		if !ok {
			t.Errorf("%s: no required list", a.Name)
		}
		for _, r := range req {
			if _, ok := props[r]; !ok {
				t.Errorf("%s: required %q is not a property", a.Name, r)
			}
		}
		if a.Description == "" {
			t.Errorf("%s: no description", a.Name)
		}
		if _, err := json.Marshal(p); err != nil {
			t.Errorf("%s: schema does not marshal: %v", a.Name, err)
		}
	}
}

func TestWriteReadListDelete(t *testing.T) {
	e := newEnv(t)

	m := e.call(t, "hermes", "write", `{"path":"reports/q3.md","content":"# Q3\nUmsatz ↑"}`)
	wantOK(t, m)
	if m["path"] != "personal:reports/q3.md" || m["size"] != float64(len("# Q3\nUmsatz ↑")) {
		t.Errorf("write answer = %v", m)
	}
	wantOK(t, e.call(t, "hermes", "write", `{"path":"shared:team/plan.csv","content":"a,b\n1,2\n"}`))
	wantOK(t, e.call(t, "atlas", "write", `{"path":"personal:mine.txt","content":"atlas only"}`))

	m = e.call(t, "hermes", "read", `{"path":"personal:reports/q3.md"}`)
	wantOK(t, m)
	if m["content"] != "# Q3\nUmsatz ↑" || m["truncated"] != false || m["path"] != "personal:reports/q3.md" {
		t.Errorf("read answer = %v", m)
	}
	if mod, err := time.Parse(time.RFC3339, fmt.Sprint(m["modified"])); err != nil || time.Since(mod) > time.Hour {
		t.Errorf("modified = %v (%v)", m["modified"], err)
	}

	// Another agent sees shared files, not hermes's personal ones.
	m = e.call(t, "atlas", "read", `{"path":"shared:team/plan.csv"}`)
	wantOK(t, m)
	if m["content"] != "a,b\n1,2\n" {
		t.Errorf("atlas reads shared = %v", m["content"])
	}
	wantError(t, e.call(t, "atlas", "read", `{"path":"reports/q3.md"}`), sb.ENOTFOUND,
		"no file personal:reports/q3.md in the workspace", "list personal:reports/")

	// list: both scopes by default; entries carry workspace paths.
	m = e.call(t, "hermes", "list", `{}`)
	wantOK(t, m)
	if got := entryPaths(m); got != "personal:reports/q3.md,shared:team/plan.csv" {
		t.Errorf("list = %s", got)
	}
	if m["count"] != float64(2) || m["truncated"] != false {
		t.Errorf("list count/truncated = %v/%v", m["count"], m["truncated"])
	}
	entry := m["entries"].([]any)[0].(map[string]any)
	if entry["size"] != float64(len("# Q3\nUmsatz ↑")) || entry["modified"] == "" {
		t.Errorf("entry = %v", entry)
	}
	for _, tt := range []struct{ prefix, want string }{
		{"personal:", "personal:reports/q3.md"},
		{"shared:", "shared:team/plan.csv"},
		{"shared:team/", "shared:team/plan.csv"},
		{"shared:team", "shared:team/plan.csv"},
		{"reports", "personal:reports/q3.md"},
		{"shared:tea", ""}, // folders, not name prefixes
	} {
		m := e.call(t, "hermes", "list", fmt.Sprintf(`{"prefix":%q}`, tt.prefix))
		wantOK(t, m)
		if got := entryPaths(m); got != tt.want {
			t.Errorf("list %q = %s, want %s", tt.prefix, got, tt.want)
		}
	}
	m = e.call(t, "hermes", "list", `{"prefix":"shared:nothing/"}`)
	wantOK(t, m)
	if m["count"] != float64(0) || !strings.Contains(fmt.Sprint(m["note"]), "no files under shared:nothing/") {
		t.Errorf("empty list = %v", m)
	}

	// overwrite
	wantOK(t, e.call(t, "hermes", "write", `{"path":"personal:reports/q3.md","content":"v2"}`))
	if m := e.call(t, "hermes", "read", `{"path":"reports/q3.md"}`); m["content"] != "v2" {
		t.Errorf("after overwrite = %v", m["content"])
	}

	m = e.call(t, "hermes", "delete", `{"path":"reports/q3.md"}`)
	wantOK(t, m)
	if m["path"] != "personal:reports/q3.md" || m["deleted"] != true {
		t.Errorf("delete answer = %v", m)
	}
	wantError(t, e.call(t, "hermes", "read", `{"path":"reports/q3.md"}`), sb.ENOTFOUND, "no file personal:reports/q3.md")
	wantError(t, e.call(t, "hermes", "delete", `{"path":"reports/q3.md"}`), sb.ENOTFOUND,
		"no file personal:reports/q3.md in the workspace; list personal:reports/ to see what exists")
	wantError(t, e.call(t, "hermes", "delete", `{"path":"top.md"}`), sb.ENOTFOUND, "list personal: to see")
}

func TestFolderIsNotAFile(t *testing.T) {
	e := newEnv(t)
	wantOK(t, e.call(t, "hermes", "write", `{"path":"shared:reports/a.md","content":"a"}`))
	wantError(t, e.call(t, "hermes", "read", `{"path":"shared:reports"}`), sb.EINVALID, "shared:reports is a folder", "list shared:reports/")
	wantError(t, e.call(t, "hermes", "delete", `{"path":"shared:reports"}`), sb.EINVALID, "is a folder")
	// a name that is a prefix of another file is not taken for it
	wantError(t, e.call(t, "hermes", "delete", `{"path":"shared:reports/a"}`), sb.ENOTFOUND, "no file shared:reports/a")
}

func TestWriteLimit(t *testing.T) {
	e := newEnv(t)
	ok := strings.Repeat("x", 1024)
	wantOK(t, e.call(t, "hermes", "write", fmt.Sprintf(`{"path":"a.txt","content":%q}`, ok)))
	wantError(t, e.call(t, "hermes", "write", fmt.Sprintf(`{"path":"b.txt","content":%q}`, ok+"y")), sb.EINVALID,
		"1.0 KB", "split it")
	wantError(t, e.call(t, "hermes", "read", `{"path":"b.txt"}`), sb.ENOTFOUND)
	// limit 0 from the config means the default, not "nothing"
	wantOK(t, e.call(t, "atlas", "write", fmt.Sprintf(`{"path":"b.txt","content":%q}`, ok+"y")))
}

func TestReadLimitsAndBinary(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	big := strings.Repeat("ä", 40<<10) // 80 KB of two-byte characters
	if err := e.store.Put(ctx, "agents/atlas/personal/big.txt", strings.NewReader(big), int64(len(big)), "text/plain"); err != nil {
		t.Fatal(err)
	}
	m := e.call(t, "atlas", "read", `{"path":"big.txt"}`)
	wantOK(t, m)
	content := m["content"].(string)
	if len(content) != workspace.DefaultReadBytes || m["truncated"] != true || m["size"] != float64(len(big)) {
		t.Errorf("default read: %d bytes, truncated %v, size %v", len(content), m["truncated"], m["size"])
	}
	if !strings.Contains(fmt.Sprint(m["note"]), "larger maxBytes") {
		t.Errorf("note = %v", m["note"])
	}
	// a cut inside a character drops the partial character
	m = e.call(t, "atlas", "read", `{"path":"big.txt","maxBytes":5}`)
	wantOK(t, m)
	if m["content"] != "ää" || m["truncated"] != true {
		t.Errorf("maxBytes 5: %q, truncated %v", m["content"], m["truncated"])
	}
	m = e.call(t, "atlas", "read", `{"path":"big.txt","maxBytes":1048576}`)
	wantOK(t, m)
	if m["content"] != big || m["truncated"] != false {
		t.Errorf("maxBytes 1 MB: %d bytes, truncated %v", len(m["content"].(string)), m["truncated"])
	}

	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	if err := e.store.Put(ctx, "shared/chart.png", strings.NewReader(png), int64(len(png)), "image/png"); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.call(t, "atlas", "read", `{"path":"shared:chart.png"}`), sb.EINVALID,
		"shared:chart.png is a binary file", "send_file", "upload")
	latin1 := "Gr\xfc\xdfe"
	if err := e.store.Put(ctx, "shared/latin1.txt", strings.NewReader(latin1), int64(len(latin1)), ""); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.call(t, "atlas", "read", `{"path":"shared:latin1.txt"}`), sb.EINVALID, "binary file")

	for _, args := range []string{`{"path":"big.txt","maxBytes":0}`, `{"path":"big.txt","maxBytes":1048577}`} {
		wantError(t, e.call(t, "atlas", "read", args), sb.EINVALID, `argument "maxBytes"`, "from 1 to 1048576")
	}
}

func TestListHidesOthersAndUnnameableKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, k := range []string{
		"agents/atlas/personal/secret.md", "agents/hermes/inbox/x", "agents/hermes/personal/ok.md",
		"agents/hermes/personal/bad//name", "shared/a:b", "audit/x",
	} {
		if err := e.store.Put(ctx, k, strings.NewReader("x"), 1, ""); err != nil {
			t.Fatal(err)
		}
	}
	m := e.call(t, "hermes", "list", ``)
	wantOK(t, m)
	if got := entryPaths(m); got != "personal:ok.md" {
		t.Errorf("list = %s, want personal:ok.md only", got)
	}
}

func TestListTruncates(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := range workspace.ListLimit + 3 {
		if err := e.store.Put(ctx, fmt.Sprintf("shared/many/%04d", i), strings.NewReader(""), 0, ""); err != nil {
			t.Fatal(err)
		}
	}
	m := e.call(t, "hermes", "list", `{"prefix":"shared:many"}`)
	wantOK(t, m)
	if m["count"] != float64(workspace.ListLimit) || m["truncated"] != true || !strings.Contains(fmt.Sprint(m["note"]), "narrower folder") {
		t.Errorf("count %v truncated %v note %v", m["count"], m["truncated"], m["note"])
	}
}

func TestArgumentErrors(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		action, args string
		parts        []string
	}{
		{"write", `{"path":"a.md"}`, []string{`missing argument "content"`, "path and content"}},
		{"write", `{"content":"x"}`, []string{`missing argument "path"`}},
		{"write", `{"path":"a.md","content":"x","append":true}`, []string{`unknown argument "append"`, "write takes {path, content}"}},
		{"write", `{"Path":"a.md","content":"x"}`, []string{`unknown argument "Path"`}},
		{"write", `{"path":7,"content":"x"}`, []string{`argument "path" must be a string`}},
		{"write", `{"path":"a.md","content":{"x":1}}`, []string{`argument "content" must be a string`}},
		{"read", `{"path":"a.md","maxBytes":"10"}`, []string{`argument "maxBytes" must be a whole number`}},
		{"read", `{"path":"a.md","maxBytes":1.5}`, []string{`argument "maxBytes" must be a whole number`}},
		{"read", `{}`, []string{`missing argument "path"`}},
		{"read", `{"path":null}`, []string{`missing argument "path"`}},
		{"read", `["a.md"]`, []string{"one JSON object"}},
		{"read", `"a.md"`, []string{"one JSON object"}},
		{"read", `{"path":"a.md"} {"path":"b.md"}`, []string{"one JSON object"}},
		{"read", `{"path":`, []string{"one JSON object"}},
		{"list", `{"prefix":"../"}`, []string{"contains .."}},
		{"list", `{"prefix":"private:"}`, []string{`unknown prefix "private:"`}},
		{"list", `{"path":"x"}`, []string{`unknown argument "path"`, "list takes {prefix?}"}},
		{"delete", `{"path":"../../agents/atlas/personal/secret.md"}`, []string{"contains .."}},
		{"delete", `{"path":"/etc/passwd"}`, []string{"is absolute"}},
		{"read", `{"path":"shared:%2e%2e/agents/atlas/personal/x"}`, []string{"percent-escape"}},
		{"write", `{"path":"a:b.md","content":"x"}`, []string{`unknown prefix "a:"`}},
		{"write", `{"path":"notes/","content":"x"}`, []string{"names a folder"}},
		{"rename", `{}`, []string{`unknown action "rename"`, "delete, list, read, write"}},
	}
	for _, tt := range tests {
		t.Run(tt.action+" "+tt.args, func(t *testing.T) {
			wantError(t, e.call(t, "hermes", tt.action, tt.args), sb.EINVALID, tt.parts...)
		})
	}
	// Null or absent args mean {} (list needs nothing).
	wantOK(t, e.call(t, "hermes", "list", `null`))
}

func TestNoWorkspaceBlock(t *testing.T) {
	e := newEnv(t)
	for _, action := range []string{"write", "read", "list", "delete"} {
		wantError(t, e.call(t, "zeus", action, `{"path":"a.md","content":"x"}`), sb.EFORBIDDEN,
			`agent "zeus" has no Workspace tool`, "ask the operator")
	}
}

func TestStorageFailures(t *testing.T) {
	t.Run("bucket missing is internal", func(t *testing.T) {
		e := newEnv(t)
		client, err := s3blob.NewClient(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		tool := workspace.NewTool(s3blob.New(client, "no-such-bucket"), limits)
		e.tool = tool
		wantError(t, e.call(t, "hermes", "read", `{"path":"a.md"}`), sb.EINTERNAL,
			"could not read personal:a.md because of an internal error", "operator")
		wantError(t, e.call(t, "hermes", "write", `{"path":"a.md","content":"x"}`), sb.EINTERNAL, "could not write personal:a.md")
		wantError(t, e.call(t, "hermes", "list", `{}`), sb.EINTERNAL, "could not list personal:")
		wantError(t, e.call(t, "hermes", "delete", `{"path":"a.md"}`), sb.EINTERNAL, "could not delete personal:a.md")
	})
	t.Run("server down is unavailable", func(t *testing.T) {
		e := newEnv(t)
		e.stop()
		for _, c := range []struct{ action, args, verb string }{
			{"write", `{"path":"a.md","content":"x"}`, "write"},
			{"read", `{"path":"a.md"}`, "read"},
			{"list", `{"prefix":"shared:"}`, "list"},
			{"delete", `{"path":"a.md"}`, "delete"},
		} {
			wantError(t, e.call(t, "hermes", c.action, c.args), sb.EUNAVAILABLE, "could not "+c.verb, "try again in a minute")
		}
	})
}

// panicStore stands in for a broken adapter.
type panicStore struct{}

func (panicStore) Put(context.Context, string, io.Reader, int64, string) error { panic("boom") }
func (panicStore) Get(context.Context, string) (io.ReadCloser, sb.BlobInfo, error) {
	panic("boom")
}
func (panicStore) List(context.Context, string, int) ([]sb.BlobInfo, error) { panic("boom") }
func (panicStore) Delete(context.Context, string) error                     { panic("boom") }

func TestPanicBecomesEnvelope(t *testing.T) {
	e := &env{tool: workspace.NewTool(panicStore{}, limits)}
	wantError(t, e.call(t, "hermes", "read", `{"path":"a.md"}`), sb.EINTERNAL, "internal error", "logs")
}

func entryPaths(m map[string]any) string {
	entries, _ := m["entries"].([]any)
	var paths []string
	for _, e := range entries {
		paths = append(paths, fmt.Sprint(e.(map[string]any)["path"]))
	}
	return strings.Join(paths, ",")
}
