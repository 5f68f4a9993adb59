package nctool_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/webdav"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
)

// TestSizesOnAPlainWebDAVServer: against a standard WebDAV server (no
// oc:size), stat and list give a 50-byte file as 50 B, and say nothing
// about a folder's size, which that server never states.
func TestSizesOnAPlainWebDAVServer(t *testing.T) {
	fs := webdav.NewMemFS()
	ctx := context.Background()
	for _, dir := range []string{"/Hermes", "/Hermes/reports"} {
		if err := fs.Mkdir(ctx, dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f, err := fs.OpenFile(ctx, "/Hermes/reports/q3.md", os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte(strings.Repeat("x", 50)))
	f.Close()
	srv := httptest.NewServer(&webdav.Handler{Prefix: "/remote.php/dav/files/alice", FileSystem: fs, LockSystem: webdav.NewMemLS()})
	t.Cleanup(srv.Close)
	client, err := nextcloud.New(srv.URL, "alice", "app-password", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	tool := nctool.New(func(string) (nctool.Agent, bool) {
		return nctool.Agent{Client: client, RootPath: "/Hermes"}, true
	}, nil, func() time.Time { return start })
	invoke := func(action, args string) sb.Envelope {
		t.Helper()
		env := tool.Invoke(ctx, sb.ToolCall{AgentID: agentID, Tool: nctool.ToolName, Action: action, Args: json.RawMessage(args)})
		if env.Status != "ok" {
			t.Fatalf("%s %s = %+v", action, args, env)
		}
		return env
	}

	file := invoke("stat", `{"path":"reports/q3.md"}`)
	if file.Data["size"] != int64(50) || file.Data["size_human"] != "50 B" || !strings.Contains(file.Data["message"].(string), "a file of 50 B") {
		t.Errorf("stat of the file = %v, want 50 B", file.Data)
	}
	dir := invoke("stat", `{"path":"reports"}`)
	if _, ok := dir.Data["size"]; ok {
		t.Errorf("stat of the folder states a size the server never gave: %v", dir.Data)
	}
	if msg := dir.Data["message"].(string); strings.Contains(msg, " 0 B") || !strings.Contains(msg, "size unknown") {
		t.Errorf("stat message of the folder = %q, want its size unknown", msg)
	}
	list := invoke("list", `{"path":"/"}`)
	listing := list.Data["listing"].(string)
	if !strings.Contains(listing, `"/reports" folder`) || strings.Contains(listing, "0 B") {
		t.Errorf("listing of / = %q, want the folder without a size", listing)
	}
	list = invoke("list", `{"path":"reports"}`)
	if l := list.Data["listing"].(string); !strings.Contains(l, `"/reports/q3.md" file 50 B`) {
		t.Errorf("listing of reports = %q, want q3.md as a file of 50 B", l)
	}
}
