package tools_test

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/commtool"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/taskboard"
)

var update = flag.Bool("update", false, "rewrite testdata/tools.golden.json from the current specs")

// productTools are the tools the product registers, as GET /tools lists them.
func productTools() []sb.Tool {
	var blobs sb.BlobStore // Spec never reads it
	return []sb.Tool{
		workspace.NewTool(blobs, func(string) (int64, bool) { return 0, true }),
		rctool.New(func(string) (rctool.Agent, bool) { return rctool.Agent{}, false }, blobs),
		nctool.New(func(string) (nctool.Agent, bool) { return nctool.Agent{}, false }, blobs, nil),
		router.NewTool(nil),
		&askagent.Tool{},
		commtool.New(nil, nil, nil, nil),
		taskboard.NewTool(nil),
	}
}

func productExecutor(tb testing.TB) *tools.Executor {
	tb.Helper()
	policy, err := staging.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	x, err := tools.New(tools.Options{Tools: productTools(), Policy: policy, Audit: memstore.New(), Scrub: scrub.New(nil),
		Permits: func(string, string) bool { return true }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// TestToolsGolden pins the whole GET /tools answer (tool, action and
// argument names, required sets, limits, descriptions): it is what models
// and clients rely on. Run with -update after a deliberate change and read
// the diff.
func TestToolsGolden(t *testing.T) {
	x := productExecutor(t)
	if err := x.CompileAll(); err != nil {
		t.Fatalf("a product schema does not compile: %v", err)
	}
	got, err := json.MarshalIndent(map[string]any{"tools": x.Specs("")}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	file := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -run TestToolsGolden -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("GET /tools changed; diff testdata/tools.golden.json against:\n%s", got)
	}
}

// BenchmarkNew measures the cold-start cost of the executor: building every
// product tool's spec (schemas compile on first use).
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		productExecutor(b)
	}
}

// BenchmarkNewCompileAll is New plus compiling every action's schema, what
// New alone cost when it compiled eagerly.
func BenchmarkNewCompileAll(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := productExecutor(b).CompileAll(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstCall is a cold start that serves one call: New, then one
// action validated (its schema compiled) and run.
func BenchmarkFirstCall(b *testing.B) {
	call := sb.ToolCall{AgentID: "alice", Tool: "notify_user", Action: "send", Args: json.RawMessage(`{"message":""}`)}
	b.ReportAllocs()
	for b.Loop() {
		if env := productExecutor(b).Invoke(context.Background(), call); env.Status != "error" {
			b.Fatalf("envelope = %+v, want the schema's refusal", env)
		}
	}
}
