package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// configuredTools are the product tools with an agent configured, so that
// Invoke gets as far as decoding the arguments. The clients point at a
// closed loopback port: a call with bad arguments never reaches them.
func configuredTools(t *testing.T) []sb.Tool {
	t.Helper()
	const nowhere = "http://127.0.0.1:9"
	rc, err := rocketchat.New(nowhere, "u", "tok", nil)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nextcloud.New(nowhere, "atlas", "pw", nil)
	if err != nil {
		t.Fatal(err)
	}
	var blobs sb.BlobStore // never reached with bad arguments
	return []sb.Tool{
		workspace.NewTool(blobs, func(string) (int64, bool) { return 0, true }),
		rctool.New(func(string) (rctool.Agent, bool) { return rctool.Agent{Client: rc}, true }, blobs),
		nctool.New(func(string) (nctool.Agent, bool) { return nctool.Agent{Client: nc, RootPath: "/Agents/atlas"}, true }, blobs, nil),
		router.NewTool(nil),
	}
}

// TestArgumentsMatchSchemas: each action's own decoding, which Invoke runs
// without the executor's schema check, takes exactly the arguments its
// schema offers, requires the same ones, and refuses every value beyond a
// limit the schema declares. It fails when an action decodes into another
// struct than the one its schema was derived from, or checks a limit of
// its own.
func TestArgumentsMatchSchemas(t *testing.T) {
	ctx := context.Background()
	for _, tool := range configuredTools(t) {
		spec := tool.Spec()
		for _, a := range spec.Actions {
			t.Run(spec.Name+"."+a.Name, func(t *testing.T) {
				invoke := func(args map[string]any) sb.Envelope {
					raw, err := json.Marshal(args)
					if err != nil {
						t.Fatal(err)
					}
					return tool.Invoke(ctx, sb.ToolCall{AgentID: "atlas", Tool: spec.Name, Action: a.Name, Args: raw})
				}
				props, _ := a.Parameters["properties"].(map[string]any)
				required, _ := a.Parameters["required"].([]string)
				var want []string
				for name := range props {
					if slices.Contains(required, name) {
						want = append(want, name)
					} else {
						want = append(want, name+"?")
					}
				}
				slices.Sort(want)
				env := invoke(map[string]any{"zzUnknown": 1})
				if got := takes(env.Error); !slices.Equal(got, want) {
					t.Errorf("the action decodes %v, its schema offers %v (refusal: %q)", got, want, env.Error)
				}
				for name, p := range props {
					s := p.(map[string]any)
					over := func(key string, value any, msg string) {
						if _, ok := s[key]; !ok {
							return
						}
						if env := invoke(map[string]any{name: value}); !strings.Contains(env.Error, msg) {
							t.Errorf("%s over its %s: error %q, want it to contain %q", name, key, env.Error, msg)
						}
					}
					if n, ok := s["maxLength"].(int); ok {
						over("maxLength", strings.Repeat("a", n+1), fmt.Sprintf("argument %q has %d characters", name, n+1))
					}
					if n, ok := s["minLength"].(int); ok {
						msg := fmt.Sprintf("argument %q has %d characters; at least %d", name, n-1, n)
						if n == 1 {
							msg = fmt.Sprintf("argument %q is empty", name)
						}
						over("minLength", strings.Repeat("a", n-1), msg)
					}
					if n, ok := s["maximum"].(int); ok {
						over("maximum", n+1, fmt.Sprintf("argument %q is %d", name, n+1))
					}
					if n, ok := s["minimum"].(int); ok {
						over("minimum", n-1, fmt.Sprintf("argument %q is %d", name, n-1))
					}
					if n, ok := s["maxItems"].(int); ok {
						item := "x"
						if enum, ok := s["items"].(map[string]any)["enum"].([]string); ok {
							item = enum[0]
						}
						over("maxItems", slices.Repeat([]string{item}, n+1), fmt.Sprintf("argument %q has %d entries", name, n+1))
					}
				}
			})
		}
	}
}

// takes reads the argument list from a refusal: "… takes {a, b?}".
func takes(msg string) []string {
	_, list, ok := strings.Cut(msg, "takes {")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, "}")
	if list == "" {
		return nil
	}
	got := strings.Split(list, ", ")
	slices.Sort(got)
	return got
}
