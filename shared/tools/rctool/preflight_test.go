package rctool_test

import (
	"context"
	"slices"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/errtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
)

// validArgs is one valid call per action; a new action without a row here
// fails TestPreflightOfEveryActionChangesNothing.
var validArgs = map[string]string{
	"send_message":  `{"text":"hi"}`,
	"reply":         `{"room":"finanz-team","tmid":"abc123","text":"hi"}`,
	"send_file":     `{"room":"finanz-team","localPath":"personal:q3.md"}`,
	"list_rooms":    `{}`,
	"read_room":     `{"room":"finanz-team"}`,
	"mark_read":     `{"room":"finanz-team"}`,
	"download_file": `{"fileId":"abc123","fileName":"report.csv"}`,
	"react":         `{"messageId":"abc123","emoji":":+1:"}`,
	"search":        `{"room":"finanz-team","query":"umsatz"}`,
}

// TestPreflightOfEveryActionChangesNothing: a preflight of a valid call
// passes and neither calls Rocket.Chat nor writes the workspace.
func TestPreflightOfEveryActionChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.put(personal+"q3.md", []byte("# Q3\n"))
	keys := e.keys()
	before := len(e.rc.Requests())
	for _, action := range e.tool.Spec().ActionNames() {
		args, ok := validArgs[action]
		if !ok {
			t.Errorf("RocketChat.%s has no valid-args row in this test", action)
			continue
		}
		if err := e.tool.Preflight(context.Background(), e.call(action, args)); err != nil {
			t.Errorf("Preflight(%s %s) = %v, want nil", action, args, err)
		}
	}
	if n := len(e.rc.Requests()) - before; n != 0 {
		t.Errorf("preflights sent %d requests to Rocket.Chat, want 0: %+v", n, e.rc.Requests()[before:])
	}
	if got := e.keys(); !slices.Equal(got, keys) {
		t.Errorf("workspace keys after preflights = %v, want %v", got, keys)
	}
}

// TestPreflightRefusesCallsThatCanOnlyFail: the send_file paths that would
// be staged for approval today, and other arguments every action refuses.
func TestPreflightRefusesCallsThatCanOnlyFail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.configure(func(a *rctool.Agent) { a.MaxUploadMB = 1 })
	e.put(personal+"q3.md", []byte("# Q3\n"))
	e.put(personal+"big.bin", make([]byte, 1<<20+1))
	tests := []struct {
		name, action, args string
		code               string
		want               string
	}{
		{"climbing out of the workspace", "send_file", `{"room":"finanz-team","localPath":"../etc/passwd"}`, sb.EINVALID, ".."},
		{"an absolute path", "send_file", `{"room":"finanz-team","localPath":"/etc/passwd"}`, sb.EINVALID, ""},
		{"a file that does not exist", "send_file", `{"room":"finanz-team","localPath":"personal:nope.md"}`, sb.ENOTFOUND, "no file personal:nope.md"},
		{"a prefix of an existing file is not that file", "send_file", `{"room":"finanz-team","localPath":"personal:q3"}`, sb.ENOTFOUND, "no file"},
		{"over the upload limit", "send_file", `{"room":"finanz-team","localPath":"personal:big.bin"}`, sb.EINVALID, "upload limit of 1 MB"},
		{"a file name with a folder", "send_file", `{"room":"finanz-team","localPath":"personal:q3.md","fileName":"../x.md"}`, sb.EINVALID, "bare file name"},
		{"a thread id that is not an id", "send_file", `{"room":"finanz-team","localPath":"personal:q3.md","tmid":"../x"}`, sb.EINVALID, "not a Rocket.Chat id"},
		{"empty text", "send_message", `{"text":"  "}`, sb.EINVALID, "empty"},
		{"unknown argument", "reply", `{"room":"a","tmid":"b","text":"c","x":1}`, sb.EINVALID, "unknown argument"},
		{"count out of range", "read_room", `{"room":"finanz-team","count":1000}`, sb.EINVALID, "count"},
		{"dangerous download", "download_file", `{"fileId":"abc","fileName":"setup.exe"}`, sb.EFORBIDDEN, "executable ending"},
		{"download target outside the workspace", "download_file", `{"fileId":"abc","fileName":"a.csv","target":"../x"}`, sb.EINVALID, ""},
		{"emoji that is not a name", "react", `{"messageId":"abc","emoji":"<b>"}`, sb.EINVALID, "not an emoji name"},
	}
	before := len(e.rc.Requests())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.tool.Preflight(context.Background(), e.call(tt.action, tt.args))
			errtest.WantRefusal(t, "Preflight("+tt.action+" "+tt.args+")", err, tt.code, tt.want)
		})
	}
	if n := len(e.rc.Requests()) - before; n != 0 {
		t.Errorf("preflights sent %d requests to Rocket.Chat, want 0", n)
	}
}
