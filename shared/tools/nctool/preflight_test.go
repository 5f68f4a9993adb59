package nctool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/errtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
)

func (e *env) preflight(action, args string) error {
	e.t.Helper()
	return e.tool.Preflight(context.Background(), sb.ToolCall{AgentID: agentID, Tool: nctool.ToolName, Action: action,
		Args: json.RawMessage(args), Run: sb.RunContext{RunID: "run-1", RootRunID: "run-1"}, Origin: sb.OriginAgent})
}

// validArgs is one valid call per action; a new action without a row here
// fails TestPreflightOfEveryActionChangesNothing.
var validArgs = map[string]string{
	"upload":          `{"localPath":"personal:q3.md","remotePath":"reports/q3.md","overwrite":false}`,
	"download":        `{"path":"reports/old.md"}`,
	"list":            `{"path":"reports"}`,
	"stat":            `{"path":"reports/old.md"}`,
	"mkdir":           `{"path":"reports/2026"}`,
	"move":            `{"from":"reports/old.md","to":"archive/"}`,
	"delete":          `{"path":"reports/old.md"}`,
	"search":          `{"query":"q3"}`,
	"versions":        `{"path":"reports/old.md"}`,
	"restore_version": `{"path":"reports/old.md","versionId":"1714564000"}`,
	"trash":           `{"op":"empty","confirm":true}`,
	"favorite":        `{"path":"reports/old.md"}`,
	"quota":           `{}`,
	"capabilities":    `{}`,
	"convert":         `{"path":"reports/old.md","format":"pdf"}`,
	"share":           `{"path":"reports/old.md","shareType":3,"file":"x.md"}`,
	"shares":          `{}`,
	"unshare":         `{"path":"reports/old.md","confirm":true}`,
}

// TestPreflightOfEveryActionChangesNothing: a preflight of a valid call
// passes and asks Nextcloud at most one PROPFIND (delete's existence
// check); the account and the workspace stay as they were.
func TestPreflightOfEveryActionChangesNothing(t *testing.T) {
	e := newEnv(t)
	e.configure(func(a *nctool.Agent) { a.AllowPublicShares = true })
	e.seed(root+"/reports/old.md", "old")
	e.write("personal:q3.md", "# Q3")
	e.nc.ResetRequests()
	for _, action := range e.tool.Spec().ActionNames() {
		args, ok := validArgs[action]
		if !ok {
			t.Errorf("Nextcloud.%s has no valid-args row in this test", action)
			continue
		}
		before := e.calls()
		if err := e.preflight(action, args); err != nil {
			t.Errorf("Preflight(%s %s) = %v, want nil", action, args, err)
		}
		want := 0
		if action == "delete" {
			want = 1
		}
		if got := e.calls() - before; got != want {
			t.Errorf("Preflight(%s) sent %d requests to Nextcloud, want %d: %v", action, got, want, e.routes())
		}
	}
	for _, r := range e.nc.Requests() {
		if r.Method != "PROPFIND" {
			t.Errorf("a preflight sent %s %s; it may only read", r.Method, r.Path)
		}
	}
	if got, ok := e.file(root + "/reports/old.md"); !ok || got != "old" {
		t.Errorf("reports/old.md after the preflights = %q, %v", got, ok)
	}
	if got, ok := e.read("personal:q3.md"); !ok || got != "# Q3" {
		t.Errorf("personal:q3.md after the preflights = %q, %v", got, ok)
	}
}

// TestPreflightRefusesCallsThatCanOnlyFail: the arguments staging would
// otherwise put in front of a human.
func TestPreflightRefusesCallsThatCanOnlyFail(t *testing.T) {
	e := newEnv(t)
	e.seed(root+"/reports/old.md", "old")
	tests := []struct {
		name, action, args string
		code               string
		want               string
	}{
		{"delete climbing out of the folder", "delete", `{"path":"../../etc/passwd"}`, sb.EINVALID, "climbs out of your folder"},
		{"delete of the folder itself", "delete", `{"path":"/"}`, sb.EINVALID, "your folder itself cannot be deleted"},
		{"delete of a path that does not exist", "delete", `{"path":"reports/nope.md"}`, sb.ENOTFOUND, "nope.md"},
		{"delete with a percent-escape", "delete", `{"path":"reports/%2e%2e/x"}`, sb.EINVALID, "percent-escape"},
		{"public link while links are not allowed", "share", `{"path":"reports/old.md","shareType":3}`, sb.EFORBIDDEN, "public links are not allowed"},
		{"user share without a user", "share", `{"path":"reports/old.md"}`, sb.EINVALID, "shareWith is missing"},
		{"user share with a password", "share", `{"path":"reports/old.md","shareWith":"richard","password":"x"}`, sb.EINVALID, "passwords are for public links"},
		{"share with a bad permission", "share", `{"path":"reports/old.md","shareWith":"richard","permissions":"all"}`, sb.EINVALID, "permissions"},
		{"share of a path outside", "share", `{"path":"../other","shareWith":"richard"}`, sb.EINVALID, "climbs out"},
		{"upload from outside the workspace", "upload", `{"localPath":"../etc/passwd"}`, sb.EINVALID, ""},
		{"move onto itself", "move", `{"from":"reports/old.md","to":"reports/old.md"}`, sb.EINVALID, "the same path"},
		{"unshare with two selectors", "unshare", `{"shareId":"1","token":"x"}`, sb.EINVALID, "exactly one"},
		{"restore of a version id that is not one", "restore_version", `{"path":"reports/old.md","versionId":"x"}`, sb.EINVALID, "not a version id"},
		{"trash op that does not exist", "trash", `{"op":"burn"}`, sb.EINVALID, "op must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.preflight(tt.action, tt.args)
			errtest.WantRefusal(t, "Preflight("+tt.action+" "+tt.args+")", err, tt.code, tt.want)
		})
	}
	if _, ok := e.file(root + "/reports/old.md"); !ok {
		t.Error("a preflight deleted reports/old.md")
	}
}

// TestPreflightDeleteWithNextcloudDownStillStages: when the existence
// check cannot tell, the call goes on to staging; Invoke checks again.
func TestPreflightDeleteWithNextcloudDownStillStages(t *testing.T) {
	e := newEnv(t)
	e.nc.SetDown(true)
	if err := e.preflight("delete", `{"path":"reports/old.md"}`); err != nil {
		t.Errorf("Preflight with Nextcloud down = %v, want nil", err)
	}
}
