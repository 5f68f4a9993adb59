package nctool_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
)

// typed is the tool's typed service behind a real executor, with its
// audit store.
func (e *env) typed(rules map[string]string) (*memstore.Store, sb.NextcloudTool) {
	e.t.Helper()
	policy, err := staging.New(rules)
	if err != nil {
		e.t.Fatal(err)
	}
	audit := memstore.New()
	x, err := tools.New(tools.Options{Tools: []sb.Tool{e.tool}, Policy: policy, Audit: audit, Scrub: scrub.New(nil),
		Log: slog.New(slog.DiscardHandler), Permits: func(agent, _ string) bool { return agent == agentID }})
	if err != nil {
		e.t.Fatal(err)
	}
	return audit, e.tool.Service(x)
}

var by = sb.ToolCall{AgentID: agentID, Origin: sb.OriginAgent, Run: sb.RunContext{RunID: "run-typed", RootRunID: "root-typed", AgentID: agentID}}

// The typed upload, share and shares answer Go values and each leaves the
// audit entry the model's call would.
func TestServiceAnswersTypedAndAudits(t *testing.T) {
	e := newEnv(t)
	audit, nc := e.typed(nil)
	e.write("personal:q3.csv", "a,b\n1,2\n")
	ctx := context.Background()
	up, err := nc.Upload(ctx, by, sb.UploadArgs{LocalPath: "personal:q3.csv", RemotePath: "reports/"})
	if err != nil {
		t.Fatal(err)
	}
	if up.Path != "/reports/q3.csv" || up.FileID == 0 || up.Link == "" || up.RequestedPath != "" {
		t.Errorf("upload = %+v, want /reports/q3.csv with file id and link", up)
	}
	sh, err := nc.Share(ctx, by, sb.ShareArgs{Path: up.Path, ShareType: sb.ShareUser, ShareWith: "richard"})
	if err != nil {
		t.Fatal(err)
	}
	if sh.ID == "" || sh.Type != sb.ShareUser || sh.ShareWith != "richard" || sh.InternalURL == "" || sh.Path != "/reports/q3.csv" {
		t.Errorf("share = %+v, want a user share with richard and an internal link", sh)
	}
	list, err := nc.Shares(ctx, by, up.Path)
	if err != nil || len(list) != 1 || list[0].ID != sh.ID {
		t.Errorf("shares = %+v, %v; want the one share %s", list, err, sh.ID)
	}
	entries, err := audit.ByRoot(ctx, "root-typed")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, en := range entries {
		got = append(got, en.Tool+"."+en.Action+"="+en.Outcome)
	}
	if want := "[Nextcloud.upload=ok Nextcloud.share=ok Nextcloud.shares=ok]"; fmt.Sprint(got) != want {
		t.Errorf("audit trail %v, want %s", got, want)
	}
}

// The tool's errors come back in the domain vocabulary, the policy's
// decisions as the executor makes them.
func TestServiceErrors(t *testing.T) {
	e := newEnv(t)
	audit, nc := e.typed(map[string]string{"Nextcloud.share:public_not_allowed": "deny"})
	ctx := context.Background()
	_, err := nc.Upload(ctx, by, sb.UploadArgs{LocalPath: "personal:missing.csv", RemotePath: "reports/"})
	if sb.ErrorCode(err) != sb.ENOTFOUND {
		t.Errorf("upload of a missing file: %v, want not_found", err)
	}
	_, err = nc.Share(ctx, by, sb.ShareArgs{Path: "/reports/x.csv", ShareType: sb.ShareLink})
	if sb.ErrorCode(err) != sb.EFORBIDDEN {
		t.Errorf("a link the agent may not make: %v, want forbidden", err)
	}
	var pending *sb.PendingApproval
	if _, err := nc.Convert(ctx, by, sb.ConvertArgs{LocalPath: "personal:q3.csv", Format: "xlsx"}); errors.As(err, &pending) || err == nil {
		t.Errorf("convert of a missing file: %v, want an error of the tool", err)
	}
	entries, _ := audit.ByRoot(ctx, "root-typed")
	if len(entries) != 3 {
		t.Errorf("%d audit entries, want 3 (one per call)", len(entries))
	}
}
