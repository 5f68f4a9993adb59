package toolargs_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

func TestRefusals(t *testing.T) {
	err := toolargs.UnknownAction("nctool", "Nextcloud", "lsit", []string{"list", "read"})
	if sb.ErrorCode(err) != sb.EINVALID || !strings.Contains(sb.ErrorMessage(err), `unknown action "lsit"; Nextcloud has list, read`) {
		t.Errorf("UnknownAction = %v", err)
	}
	err = toolargs.NotConfigured("rctool", "bob", "RocketChat")
	if sb.ErrorCode(err) != sb.EFORBIDDEN || !strings.Contains(sb.ErrorMessage(err), `agent "bob" has no RocketChat tool`) {
		t.Errorf("NotConfigured = %v", err)
	}
}

func TestPanickedLogsThePanicAndHidesIt(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	call := sb.ToolCall{AgentID: "alice", Action: "list"}
	env := toolargs.Panicked(context.Background(), log, "nextcloud", call, "index out of range", "nctool.list", "Nextcloud.list")
	if env.Status != "error" || env.Data["code"] != sb.EINTERNAL {
		t.Fatalf("envelope = %+v, want an EINTERNAL error", env)
	}
	if msg := env.Error; strings.Contains(msg, "index out of range") || !strings.Contains(msg, "Nextcloud.list failed") {
		t.Errorf("message = %q, want what failed without the panic text", msg)
	}
	if got := logs.String(); !strings.Contains(got, "nextcloud tool panicked") || !strings.Contains(got, "index out of range") || !strings.Contains(got, "alice") {
		t.Errorf("log = %q, want the panic with its call", got)
	}
}
