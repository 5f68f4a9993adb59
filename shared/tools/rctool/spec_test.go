package rctool_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
)

// TestSpec: the external interface — tool name, action names, argument
// names — and strict schemas.
func TestSpec(t *testing.T) {
	t.Parallel()
	spec := rctool.New(nil, nil).Spec()
	if spec.Name != "RocketChat" {
		t.Errorf("name = %q", spec.Name)
	}
	wantActions := []string{"download_file", "list_rooms", "mark_read", "react", "read_room", "reply", "search", "send_file", "send_message"}
	if got := spec.ActionNames(); !slices.Equal(got, wantActions) {
		t.Errorf("actions = %v, want %v", got, wantActions)
	}
	wantArgs := map[string]struct{ props, required []string }{
		"send_message":  {[]string{"room", "text", "tmid"}, []string{"text"}},
		"reply":         {[]string{"room", "text", "tmid"}, []string{"room", "tmid", "text"}},
		"send_file":     {[]string{"description", "fileName", "localPath", "room", "tmid"}, []string{"room", "localPath"}},
		"list_rooms":    {nil, nil},
		"read_room":     {[]string{"count", "room", "threadId"}, []string{"room"}},
		"mark_read":     {[]string{"room"}, []string{"room"}},
		"download_file": {[]string{"fileId", "fileName", "target"}, []string{"fileId", "fileName"}},
		"react":         {[]string{"emoji", "messageId"}, []string{"messageId", "emoji"}},
		"search":        {[]string{"count", "query", "room"}, []string{"room", "query"}},
	}
	for _, a := range spec.Actions {
		if err := sb.CheckFunctionName(spec.Name, a.Name); err != nil {
			t.Errorf("%s: %v", a.Name, err)
		}
		p := a.Parameters
		if p["type"] != "object" || p["additionalProperties"] != false {
			t.Errorf("%s: schema is not a closed object: %v", a.Name, p)
		}
		props, _ := p["properties"].(map[string]any)
		var names []string
		for k, v := range props {
			names = append(names, k)
			s := v.(map[string]any)
			if s["type"] == "string" && s["maxLength"] == nil {
				t.Errorf("%s.%s has no maxLength", a.Name, k)
			}
		}
		slices.Sort(names)
		want := wantArgs[a.Name]
		if !slices.Equal(names, want.props) {
			t.Errorf("%s properties = %v, want %v", a.Name, names, want.props)
		}
		req, _ := p["required"].([]string)
		if !slices.Equal(req, want.required) && !(len(req) == 0 && len(want.required) == 0) {
			t.Errorf("%s required = %v, want %v", a.Name, req, want.required)
		}
		if a.Description == "" {
			t.Errorf("%s has no description", a.Name)
		}
	}
}

// TestThroughExecutor runs the tool the way models and POST /tools/invoke
// reach it: schema validation, the staging policy with the tool's
// condition, then Invoke.
func TestThroughExecutor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.configure(func(a *rctool.Agent) { a.AllowedRooms = []string{"finanz-team", "richard"} })
	e.put(personal+"a.md", []byte("a"))
	policy, err := staging.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	audit := memstore.New()
	x, err := tools.New(tools.Options{
		Tools:   []sb.Tool{e.tool},
		Policy:  policy,
		Audit:   audit,
		Scrub:   scrub.New(nil),
		Permits: func(agent, tool string) bool { return agent == agentID },
		Log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatalf("tools.New: %v (do the schemas compile?)", err)
	}
	run := func(action, args string) sb.Envelope {
		return x.Invoke(context.Background(), e.call(action, args))
	}
	tests := []struct {
		name, action, args string
		status, contains   string
	}{
		{"allowed room runs at once", "send_message", `{"room":"finanz-team","text":"hallo"}`, "ok", ""},
		{"other room is denied by staging", "send_message", `{"room":"vorstand","text":"x"}`, "error", "staging policy"},
		{"reply to other room denied", "reply", `{"room":"vorstand","tmid":"abc","text":"x"}`, "error", "staging policy"},
		{"send_file waits for approval", "send_file", `{"room":"finanz-team","localPath":"a.md"}`, sb.OutcomePending, ""},
		{"send_file to other room is denied, nobody is asked", "send_file", `{"room":"vorstand","localPath":"a.md"}`, "error", "staging policy"},
		{"schema: unknown argument", "send_message", `{"room":"finanz-team","text":"x","alias":"boss"}`, "error", "args of RocketChat.send_message are wrong"},
		{"schema: missing fileId", "download_file", `{"fileName":"x.csv"}`, "error", "fileId"},
		{"schema: text too long", "send_message", `{"text":"` + strings.Repeat("x", 5001) + `"}`, "error", "args of RocketChat.send_message are wrong"},
		{"schema: count too large", "read_room", `{"room":"finanz-team","count":500}`, "error", "args of RocketChat.read_room are wrong"},
		{"schema: bad emoji", "react", `{"messageId":"abc","emoji":"<b>"}`, "error", "args of RocketChat.react are wrong"},
		{"read actions run", "list_rooms", `{}`, "ok", ""},
	}
	for _, tt := range tests {
		env := run(tt.action, tt.args)
		if env.Status != tt.status || !strings.Contains(env.Error, tt.contains) {
			t.Errorf("%s: status %q error %q, want %q containing %q", tt.name, env.Status, env.Error, tt.status, tt.contains)
		}
	}
	// Staging is never the only guard: under a policy that lets a send_file
	// to a room outside the list be approved, the tool itself still
	// refuses it.
	lax, err := staging.New(map[string]string{"RocketChat.send_file:other_room": "approve"})
	if err != nil {
		t.Fatal(err)
	}
	x, err = tools.New(tools.Options{Tools: []sb.Tool{e.tool}, Policy: lax, Audit: audit, Scrub: scrub.New(nil),
		Permits: func(agent, tool string) bool { return agent == agentID }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	call := e.call("send_file", `{"room":"vorstand","localPath":"a.md"}`)
	call.Approved = true
	env := x.Invoke(context.Background(), call)
	if env.Status != "error" || !strings.Contains(env.Error, "allowedRooms") {
		t.Errorf("approved send_file to another room: %+v", env)
	}
	if n := e.rc.Calls("rooms.media"); n != 0 {
		t.Errorf("rooms.media called %d times", n)
	}
	raw, _ := json.Marshal(env)
	if !strings.Contains(string(raw), `"status":"error"`) {
		t.Errorf("envelope JSON = %s", raw)
	}
}
