package router_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs/toolargstest"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// compileSend compiles the schema of notify_user.send as the tools
// executor does.
func compileSend(t *testing.T) *jsonschema.Schema {
	t.Helper()
	spec := router.NewTool(nil).Spec()
	a, ok := spec.Action("send")
	if !ok {
		t.Fatalf("no action send in %+v", spec)
	}
	s, err := toolargstest.CompileSchema("notify_user.send", a.Parameters)
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return s
}

func TestToolSpec(t *testing.T) {
	spec := router.NewTool(nil).Spec()
	if spec.Name != "notify_user" {
		t.Errorf("Name = %q, want notify_user", spec.Name)
	}
	if got := spec.ActionNames(); !reflect.DeepEqual(got, []string{"send"}) {
		t.Errorf("actions = %v, want [send]", got)
	}
	if !strings.Contains(spec.Description, "do not choose the channel") {
		t.Errorf("description %q should tell the agent it does not pick the channel", spec.Description)
	}
	a, _ := spec.Action("send")
	if a.Description == "" {
		t.Error("action send has no description")
	}
	if _, err := json.Marshal(spec); err != nil {
		t.Errorf("spec does not marshal: %v", err)
	}
}

func TestToolSchema(t *testing.T) {
	schema := compileSend(t)
	tests := []struct {
		name  string
		args  string
		valid bool
	}{
		{"a message", `{"message":"the report is in /Reports"}`, true},
		{"exactly the maximum", `{"message":"` + strings.Repeat("a", router.MaxNotifyChars) + `"}`, true},
		{"maximum counted in characters", `{"message":"` + strings.Repeat("ä", router.MaxNotifyChars) + `"}`, true},
		{"one over the maximum", `{"message":"` + strings.Repeat("a", router.MaxNotifyChars+1) + `"}`, false},
		{"empty message", `{"message":""}`, false},
		{"no message", `{}`, false},
		{"message not a string", `{"message":42}`, false},
		{"the agent may not pick the channel", `{"message":"hi","channel":"Telegram"}`, false},
		{"not an object", `["hi"]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			err = schema.Validate(inst)
			if (err == nil) != tt.valid {
				t.Errorf("Validate(%.60s) = %v, want valid=%v", tt.args, err, tt.valid)
			}
		})
	}
}

func TestToolRefusesBadArgs(t *testing.T) {
	tests := []struct {
		name string
		args string
	}{
		{"not JSON", `hello`},
		{"no args", ``},
		{"empty object", `{}`},
		{"empty message", `{"message":""}`},
		{"blank message", `{"message":"  \n\t "}`},
		{"message not a string", `{"message":42}`},
		{"unknown field", `{"message":"hi","channel":"Telegram"}`},
		{"array", `["hi"]`},
		{"one over the maximum", `{"message":"` + strings.Repeat("a", router.MaxNotifyChars+1) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &fakeChannel{name: "RocketChat"}
			store := memstore.New()
			run := sb.NewRun("hermes", nil, time.Now())
			tool := router.NewTool(router.New([]router.Channel{rc}, store, discard()))
			env := tool.Invoke(testCtx(t), sb.ToolCall{AgentID: "hermes", Tool: "notify_user", Action: "send",
				Args: json.RawMessage(tt.args), Run: run})
			if env.Status != "error" {
				t.Fatalf("Status = %q, want error: %+v", env.Status, env)
			}
			if !strings.Contains(env.Error, `notify_user needs {"message"`) {
				t.Errorf("Error = %q, want it to say what the tool needs", env.Error)
			}
			if n := len(rc.sent()); n != 0 {
				t.Errorf("%d notices sent for bad args", n)
			}
			if n := len(auditEntries(t, store, run.RootRunID)); n != 0 {
				t.Errorf("%d router audit entries for bad args, want 0", n)
			}
		})
	}
}

func TestToolDelivers(t *testing.T) {
	tests := []struct {
		name     string
		errs     []error
		wantData map[string]any // after a JSON round trip
		wantErr  string
	}{
		{name: "primary delivers",
			errs:     []error{nil, nil},
			wantData: map[string]any{"status": "ok", "channel": "RocketChat", "primaryFailed": false}},
		{name: "fallback says so",
			errs: []error{errRCDown, nil},
			wantData: map[string]any{"status": "ok", "channel": "Telegram", "primaryFailed": true,
				"note": "the primary channel was unreachable; delivered via Telegram"}},
		{name: "nothing delivered",
			errs: []error{errRCDown, errTGDown},
			wantData: map[string]any{"status": "error", "code": sb.EUNAVAILABLE,
				"failures": []any{"RocketChat: " + errRCDown.Message, "Telegram: " + errTGDown.Message}},
			wantErr: "no channel could reach the human"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &fakeChannel{name: "RocketChat", err: tt.errs[0]}
			tg := &fakeChannel{name: "Telegram", err: tt.errs[1]}
			store := memstore.New()
			tool := router.NewTool(router.New([]router.Channel{rc, tg}, store, discard()))
			run := sb.NewRun("hermes", nil, time.Now())
			env := tool.Invoke(testCtx(t), sb.ToolCall{AgentID: "hermes", Tool: "notify_user", Action: "send",
				Args: json.RawMessage(`{"message":"Q3 report uploaded"}`), Run: run, Origin: sb.OriginAgent})

			raw, err := json.Marshal(env)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			errText, _ := got["error"].(string)
			delete(got, "error")
			if !reflect.DeepEqual(got, tt.wantData) {
				t.Errorf("envelope = %s, want %v", raw, tt.wantData)
			}
			if tt.wantErr == "" && errText != "" || !strings.Contains(errText, tt.wantErr) {
				t.Errorf("error = %q, want %q", errText, tt.wantErr)
			}

			// The agent speaks; the notice carries its run.
			want := router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "Q3 report uploaded", Run: run}
			if got := rc.sent(); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
				t.Errorf("RocketChat got %+v, want [%+v]", got, want)
			}
			if n := len(auditEntries(t, store, run.RootRunID)); n != 1 {
				t.Errorf("%d audit entries, want 1", n)
			}
		})
	}
}
