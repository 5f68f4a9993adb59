package nctool_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
)

func TestCapabilitiesReport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.nc.SetPasswordEnforced(true)
	e.nc.SetLinkExpiry(7, true)
	e.nc.SetQuota(1 << 20)
	d := e.ok(e.invoke("capabilities", `{}`)).Data
	if d["version"] != "30.0.2" || d["raw"] != nil {
		t.Errorf("version = %v, raw = %v", d["version"], d["raw"] != nil)
	}
	sharing := d["sharing"].(map[string]any)
	expire := sharing["expire_date"].(map[string]any)
	if sharing["public_links"] != true || sharing["password_enforced"] != true || expire["days"] != float64(7) || expire["enforced"] != true {
		t.Errorf("sharing = %+v", sharing)
	}
	files := d["files"].(map[string]any)
	if files["chunking"] != "1.0" || files["versioning"] != true || files["trash"] != true {
		t.Errorf("files = %+v", files)
	}
	if q := d["quota"].(map[string]any); q["available_bytes"] != float64(1<<20) {
		t.Errorf("quota = %+v", q)
	}
	agent := d["agent"].(map[string]any)
	if agent["allow_public_shares"] != false || agent["share_default_expire_days"] != float64(14) || agent["collabora"] != true || agent["root_path"] != root {
		t.Errorf("agent = %+v", agent)
	}
	features := d["features"].(map[string]any)
	if len(features) != len(nctool.Features()) || features["talk"] != false || features["dav.chunking"] != true {
		t.Errorf("features = %+v", features)
	}
}

func TestCapabilitiesRaw(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := e.ok(e.invoke("capabilities", `{"raw":true}`)).Data
	raw, _ := d["raw"].(map[string]any)
	if caps, _ := raw["capabilities"].(map[string]any); caps["files_sharing"] == nil {
		t.Errorf("raw = %v", d["raw"])
	}
}

func TestCapabilitiesCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := e.ok(e.invoke("capabilities", `{"check":["sharing.public","dav.chunking","collabora"]}`)).Data
	if d["ok"] != true || fmt.Sprint(d["missing"]) != "[]" {
		t.Errorf("all present: %+v", d)
	}
	e.nc.SetChunking(false)
	e.configure(func(a *nctool.Agent) { a.Collabora = nil })
	env := e.failed(e.invoke("capabilities", `{"check":["sharing.public","talk","dav.chunking","collabora"]}`), sb.ENOTFOUND,
		"missing on this Nextcloud (or for this agent): collabora, dav.chunking, talk")
	if env.Data["ok"] != false || fmt.Sprint(env.Data["missing"]) != "[collabora dav.chunking talk]" || fmt.Sprint(env.Data["present"]) != "[sharing.public]" {
		t.Errorf("check = %+v", env.Data)
	}
	if env.Data["version"] != "30.0.2" {
		t.Errorf("a failed check should still carry the report: %+v", env.Data)
	}
	e.failed(e.invokeRaw("capabilities", `{"check":["sharing.public","teleport"]}`), sb.EINVALID, `unknown feature "teleport"`, "sharing.public.password_enforced")
}

// TestSpecMatchesActions keeps the spec, the action table and the external
// interface in step, and checks that every schema compiles.
func TestSpecMatchesActions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spec := e.tool.Spec()
	want := []string{"capabilities", "convert", "delete", "download", "favorite", "list", "mkdir", "move", "quota",
		"restore_version", "search", "share", "shares", "stat", "trash", "unshare", "upload", "versions"}
	if got := spec.ActionNames(); !slices.Equal(got, want) {
		t.Fatalf("actions = %v, want %v", got, want)
	}
	if spec.Name != "Nextcloud" {
		t.Errorf("name = %q", spec.Name)
	}
	for _, a := range spec.Actions {
		if err := validate(spec, a.Name, "{}"); err != nil && !strings.Contains(err.Error(), "missing propert") {
			t.Errorf("%s: schema does not compile or refuses {} for the wrong reason: %v", a.Name, err)
		}
		if a.Description == "" {
			t.Errorf("%s has no description", a.Name)
		}
		// Every action refuses unknown arguments, here and in the schema.
		if err := validate(spec, a.Name, `{"bogus":1}`); err == nil {
			t.Errorf("%s: schema accepts an unknown argument", a.Name)
		}
		if env := e.invokeRaw(a.Name, `{"bogus":1}`); env.Status != "error" || !strings.Contains(env.Error, "unknown argument") {
			t.Errorf("%s: Invoke with an unknown argument = %+v", a.Name, env)
		}
	}
	// Argument names fixed by the external interface.
	for action, args := range map[string][]string{
		"upload": {"localPath", "remotePath"}, "mkdir": {"path"}, "list": {"path"}, "stat": {"path"}, "delete": {"path"},
		"move": {"from", "to"}, "share": {"path", "shareWith", "shareType", "password", "expireDays"},
	} {
		a, _ := spec.Action(action)
		props := a.Parameters["properties"].(map[string]any)
		for _, name := range args {
			if _, ok := props[name]; !ok {
				keys := make([]string, 0, len(props))
				for k := range props {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				t.Errorf("%s lacks argument %q (has %v)", action, name, keys)
			}
		}
	}
}
