package workspace_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/errtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func (e *env) preflight(agent, action, args string) error {
	return e.tool.Preflight(context.Background(), sb.ToolCall{AgentID: agent, Tool: "Workspace", Action: action,
		Args: json.RawMessage(args), Run: sb.RunContext{RunID: "run-1", RootRunID: "run-1"}})
}

func (e *env) keys(t *testing.T) []string {
	t.Helper()
	infos, err := e.store.List(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, i := range infos {
		out = append(out, i.Key)
	}
	return out
}

// TestPreflight: valid calls of every action pass and change nothing;
// calls that can only fail are refused with the error Invoke would give.
func TestPreflight(t *testing.T) {
	e := newEnv(t)
	wantOK(t, e.call(t, "hermes", "write", `{"path":"notes/a.md","content":"a"}`))
	valid := map[string]string{
		"write":  `{"path":"notes/b.md","content":"b"}`,
		"read":   `{"path":"notes/a.md"}`,
		"list":   `{"prefix":"notes/"}`,
		"delete": `{"path":"notes/a.md"}`,
	}
	keys := e.keys(t)
	for _, action := range e.tool.Spec().ActionNames() {
		args, ok := valid[action]
		if !ok {
			t.Errorf("Workspace.%s has no valid-args row in this test", action)
			continue
		}
		if err := e.preflight("hermes", action, args); err != nil {
			t.Errorf("Preflight(%s %s) = %v, want nil", action, args, err)
		}
	}
	if got := e.keys(t); !slices.Equal(got, keys) {
		t.Errorf("keys after the preflights = %v, want %v", got, keys)
	}

	for _, tt := range []struct {
		name, action, args, code, want string
	}{
		{"write outside the workspace", "write", `{"path":"../x.md","content":"a"}`, sb.EINVALID, ""},
		{"write over the size limit", "write", `{"path":"big.md","content":"` + strings.Repeat("x", 1025) + `"}`, sb.EINVALID, "limit"},
		{"delete of an absolute path", "delete", `{"path":"/etc/passwd"}`, sb.EINVALID, ""},
		{"delete of a file that is not there", "delete", `{"path":"notes/nope.md"}`, sb.ENOTFOUND, "no file personal:notes/nope.md"},
		{"read with a bad maxBytes", "read", `{"path":"notes/a.md","maxBytes":0}`, sb.EINVALID, "maxBytes"},
		{"list of a prefix outside", "list", `{"prefix":"../"}`, sb.EINVALID, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := e.preflight("hermes", tt.action, tt.args)
			errtest.WantRefusal(t, "Preflight("+tt.action+" "+tt.args+")", err, tt.code, tt.want)
		})
	}
}
