package approvals_test

import (
	"encoding/json"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

func TestArgsHashIsCanonical(t *testing.T) {
	h := func(tool, action, args string) string {
		t.Helper()
		s, err := approvals.ArgsHash(tool, action, json.RawMessage(args))
		if err != nil {
			t.Fatalf("ArgsHash(%s): %v", args, err)
		}
		return s
	}
	base := h("Nextcloud", "delete", `{"path":"a.md","n":1}`)
	same := []struct{ name, args string }{
		{"key order and space", ` { "n" : 1 ,"path":"a.md" } `},
		{"duplicate key resolved like a Go decoder", `{"path":"b.md","n":1,"path":"a.md"}`},
		{"escapes", `{"path":"a\u002emd","n":1}`},
	}
	for _, c := range same {
		if got := h("Nextcloud", "delete", c.args); got != base {
			t.Errorf("%s: hash differs", c.name)
		}
	}
	differ := []struct{ name, tool, action, args string }{
		{"other path", "Nextcloud", "delete", `{"path":"b.md","n":1}`},
		{"number written differently", "Nextcloud", "delete", `{"path":"a.md","n":1.0}`},
		{"other action", "Nextcloud", "move", `{"path":"a.md","n":1}`},
		{"other tool", "Workspace", "delete", `{"path":"a.md","n":1}`},
		{"separator shift", "Nextcloud|delete", "", `{"path":"a.md","n":1}`},
	}
	for _, c := range differ {
		if got := h(c.tool, c.action, c.args); got == base {
			t.Errorf("%s: same hash", c.name)
		}
	}
	if h("T", "a", "") != h("T", "a", "{}") {
		t.Error("empty args should hash as {}")
	}
	for _, bad := range []string{`{`, `{} {}`, `nope`} {
		if _, err := approvals.ArgsHash("T", "a", json.RawMessage(bad)); sb.ErrorCode(err) != sb.EINVALID {
			t.Errorf("ArgsHash(%s): %v, want EINVALID", bad, err)
		}
	}
}

func TestCanonicalKeepsWhatAGoDecoderSees(t *testing.T) {
	c, err := approvals.Canonical(json.RawMessage(`{"b":"<x>","a":[1.50,{"d":true,"c":null}],"b":"&"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":[1.50,{"c":null,"d":true}],"b":"&"}`; string(c) != want {
		t.Fatalf("Canonical: %s, want %s", c, want)
	}
}

func TestIDsAndCallbackData(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := approvals.NewID()
		if len(id) != sb.MaxApprovalIDLen || !sb.ValidApprovalID(id) || seen[id] {
			t.Fatalf("NewID %q: want a new, valid id of %d characters", id, sb.MaxApprovalIDLen)
		}
		seen[id] = true
		for _, d := range []approvals.Decision{approvals.Approve, approvals.Deny} {
			// Telegram limits callback_data to 1-64 bytes.
			if cd := approvals.CallbackData(d, id); len(cd) > 64 || len(cd) < 1 {
				t.Fatalf("callback data %q is %d bytes, Telegram allows 64", cd, len(cd))
			}
		}
	}
}
