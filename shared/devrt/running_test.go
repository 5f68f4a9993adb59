package devrt

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
)

// The one config rule: the file given, else $SWITCHBOARD_CONFIG, else
// switchboard.yaml here when it exists, else the example.
func TestConfigFileRule(t *testing.T) {
	cases := []struct {
		name, given, env string
		userFile         bool
		want             string
	}{
		{name: "nothing", want: ExampleConfigFile},
		{name: "switchboard.yaml here", userFile: true, want: UserConfigFile},
		{name: "environment", env: "ops.yaml", userFile: true, want: "ops.yaml"},
		{name: "given", given: "mine.yaml", env: "ops.yaml", userFile: true, want: "mine.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			t.Setenv("SWITCHBOARD_CONFIG", c.env)
			if c.userFile {
				if err := os.WriteFile(UserConfigFile, []byte("instance: {}\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := ConfigFile(c.given); got != c.want {
				t.Errorf("ConfigFile(%q) = %q, want %q", c.given, got, c.want)
			}
		})
	}
}

// A second process on the same data directory is told the S3 data file is
// locked and by which dev, with settings that exist to move it.
func TestSecondS3OnTheSameDataIsToldOfTheLock(t *testing.T) {
	dir := t.TempDir()
	_, stop, err := startS3(Options{S3Addr: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := writeRunning(dir, Running{PID: 4242, URL: "http://" + ln.Addr().String()}); err != nil {
		t.Fatal(err)
	}
	_, _, err = startS3(Options{S3Addr: "127.0.0.1:0", DataDir: dir})
	if err == nil {
		t.Fatal("a second S3 on the same data file started")
	}
	for _, want := range []string{filepath.Join(dir, "s3.bolt") + " is locked by another `switchboard dev`", "pid 4242", ln.Addr().String(), "make dev DATA=DIR", "--data DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// An S3 address taken by another program names the settings that move it.
func TestS3AddressTakenNamesSettingsThatExist(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	_, _, err = startS3(Options{S3Addr: ln.Addr().String(), DataDir: t.TempDir()})
	if err == nil {
		t.Fatal("S3 started on a taken address")
	}
	for _, want := range []string{ln.Addr().String(), "make dev S3_ADDR=", "switchboard dev --s3-addr", "AWS_ENDPOINT_URL_S3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A problem in the sandbox's copy of the config is moved to the line of
// its field in the user's file; a field the copy added gets its nearest
// written parent's line.
func TestConfigErrorPointsAtTheUsersFile(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "mine.yaml")
	src := "# my config\ninstance:\n  name: demo\n\n  toolApiToken: env:UNSET_FOR_TEST\nagents:\n  - id: hermes\n    tools:\n      Workspace: {}\n"
	if err := os.WriteFile(user, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	copyFile := filepath.Join(dir, "sandbox.yaml")
	if err := os.WriteFile(copyFile, append([]byte("# generated\n# two lines\n\n"), out...), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &Env{userConfig: user, configCopy: copyFile}
	err = e.ConfigError(&swcfg.Error{File: copyFile, Problems: []swcfg.Problem{
		{File: copyFile, Line: 8, Field: "instance.toolApiToken", What: "env UNSET_FOR_TEST is not set"},
		{File: copyFile, Line: 14, Field: "agents[0].tools.Nextcloud.baseUrl", What: "added by the sandbox"},
	}})
	msg := err.Error()
	for _, want := range []string{user + ":5: instance.toolApiToken", user + ":8: agents[0].tools.Nextcloud.baseUrl"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, copyFile) {
		t.Errorf("error %q still names the copy", msg)
	}
}

func TestPathSteps(t *testing.T) {
	got := strings.Join(pathSteps(`agents[0].tools["a.b"].x`), "|")
	if want := `agents|[0]|tools|a.b|x`; got != want {
		t.Errorf("pathSteps = %q, want %q", got, want)
	}
}

// Without the local runtime, dev refuses to start when a configured
// feature runs on a state machine, and names the fix.
func TestMissingStepFunctionsIsFatalWhenAFeatureNeedsIt(t *testing.T) {
	s := &StepFunctions{Err: os.ErrNotExist, root: "/repo"}
	cfg := &swcfg.Config{File: "mine.yaml", Agents: []swcfg.Agent{
		{ID: "hermes", Tools: swcfg.Tools{AskAgent: &swcfg.AskAgentTool{}}},
		{ID: "atlas", Tools: swcfg.Tools{Nextcloud: &swcfg.NextcloudTool{}}},
	}}
	err := s.required(cfg)
	if err == nil {
		t.Fatal("required = nil, want the start refused")
	}
	for _, want := range []string{"ask_agent (agents hermes)", "Documents.deliver (agents atlas)", "mine.yaml", "npm ci", "AWS_ENDPOINT_URL_SFN"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if err := s.required(&swcfg.Config{Agents: []swcfg.Agent{{ID: "plain"}}}); err != nil {
		t.Errorf("required without such a feature = %v, want nil", err)
	}
}
