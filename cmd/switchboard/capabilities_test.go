package main

import (
	"errors"
	"fmt"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// ncConfig is a config with hermes (no Nextcloud) and atlas, whose
// Nextcloud block points at nc.
func ncConfig(t *testing.T, nc *ncfake.Server) string {
	t.Helper()
	return writeConfig(t, fmt.Sprintf(`instance:
  name: capstest
  model: {provider: scripted}
agents:
  - id: hermes
    tools:
      Workspace: {}
  - id: atlas
    name: Atlas
    tools:
      Nextcloud:
        baseUrl: %s
        username: %s
        appPassword: %s
        rootPath: /Switchboard/Atlas
`, nc.URL, nc.User(), nc.Password()))
}

func TestCapabilitiesPrints(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*ncfake.Server)
		want  []string // lines, in order
	}{
		{name: "defaults",
			setup: func(*ncfake.Server) {},
			want: []string{
				"Nextcloud 30.0.2 at {URL} (agent atlas, user alice)",
				"  sharing:      api yes, public links yes, link password enforced no, group shares yes, resharing yes",
				"  link expiry:  no default expiry",
				"  chunking:     yes (v1.0)",
				"  versioning:   yes",
				"  trash:        yes",
				"  quota:        unlimited, 0.0 MB used",
			}},
		{name: "knobs switched",
			setup: func(s *ncfake.Server) {
				s.SetVersion("31.0.1")
				s.SetChunking(false)
				s.SetPublicLinks(false)
				s.SetPasswordEnforced(true)
				s.SetLinkExpiry(7, true)
				s.SetQuota(10 << 20)
				if err := s.WriteFile("/big.bin", make([]byte, 3<<20)); err != nil {
					panic(err)
				}
			},
			want: []string{
				"Nextcloud 31.0.1 at {URL} (agent atlas, user alice)",
				"  sharing:      api yes, public links no, link password enforced yes, group shares yes, resharing yes",
				"  link expiry:  default expiry 7 days (enforced maximum)",
				"  chunking:     no",
				"  versioning:   yes",
				"  trash:        yes",
				"  quota:        3.0 MB used, 7.0 MB free",
			}},
		{name: "expiry not enforced",
			setup: func(s *ncfake.Server) { s.SetLinkExpiry(14, false) },
			want:  []string{"  link expiry:  default expiry 14 days"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc := ncfake.Start(t, ncfake.Options{})
			tt.setup(nc)
			out, err := runCLI(t, "capabilities", "--config", ncConfig(t, nc))
			if err != nil {
				t.Fatalf("capabilities: %v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			for _, w := range tt.want {
				w = strings.ReplaceAll(w, "{URL}", nc.URL)
				found := false
				for _, l := range lines {
					if l == w {
						found = true
					}
				}
				if !found {
					t.Errorf("output lacks the line %q:\n%s", w, out)
				}
			}
			if len(tt.want) == 7 && len(lines) != 7 {
				t.Errorf("%d lines, want 7 (no check requested):\n%s", len(lines), out)
			}
			// one capabilities call (plus the quota PROPFIND).
			if n := nc.Calls("GET capabilities"); n != 1 {
				t.Errorf("%d capabilities calls, want 1", n)
			}
		})
	}
}

func TestCapabilitiesCheck(t *testing.T) {
	tests := []struct {
		name        string
		chunking    bool
		public      bool
		check       string
		wantMissing string // "" = all present
	}{
		{name: "present", chunking: true, public: true, check: "dav.chunking,sharing.public"},
		{name: "spaces and empty items are ignored", chunking: true, public: true, check: " dav.chunking , ,sharing.public,"},
		{name: "chunking off", chunking: false, public: true, check: "dav.chunking,sharing.public", wantMissing: "dav.chunking"},
		{name: "public links off", chunking: true, public: false, check: "dav.chunking,sharing.public", wantMissing: "sharing.public"},
		{name: "both off, only those named", chunking: false, public: false,
			check: "files.versioning,dav.chunking,sharing.api,sharing.public,files.undelete", wantMissing: "dav.chunking, sharing.public"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc := ncfake.Start(t, ncfake.Options{})
			nc.SetChunking(tt.chunking)
			nc.SetPublicLinks(tt.public)
			out, err := runCLI(t, "capabilities", "--config", ncConfig(t, nc), "--check", tt.check)
			if tt.wantMissing == "" {
				if err != nil {
					t.Fatalf("capabilities --check %q: %v\n%s", tt.check, err, out)
				}
				if !strings.HasSuffix(out, "all present: "+tt.check+"\n") {
					t.Errorf("output does not end with all present:\n%s", out)
				}
				return
			}
			if !errors.Is(err, errMissing) || isUsage(err) {
				t.Fatalf("err = %v, want errMissing (exit 1)", err)
			}
			if want := "missing capabilities: " + tt.wantMissing; err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}
			if !strings.HasSuffix(out, "missing: "+tt.wantMissing+"\n") {
				t.Errorf("output does not end with the missing features %q:\n%s", tt.wantMissing, out)
			}
		})
	}
}

func TestCapabilitiesUnknownFeature(t *testing.T) {
	nc := ncfake.Start(t, ncfake.Options{})
	_, err := runCLI(t, "capabilities", "--config", ncConfig(t, nc), "--check", "dav.chunking,teleport,sharing.publik")
	if !isUsage(err) {
		t.Fatalf("err = %v, want a usageError", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "unknown feature(s) teleport, sharing.publik;") {
		t.Errorf("%q does not name the unknown features", msg)
	}
	if !strings.Contains(msg, "known: "+strings.Join(sb.FileFeatures(), ", ")) {
		t.Errorf("%q does not list the known features", msg)
	}
}

func TestCapabilitiesAgents(t *testing.T) {
	nc := ncfake.Start(t, ncfake.Options{})
	cfg := ncConfig(t, nc)
	noNC := writeConfig(t, `instance:
  name: capstest
  model: {provider: scripted}
agents:
  - id: hermes
    tools:
      Workspace: {}
`)
	tests := []struct {
		name      string
		args      []string
		wantUsage bool
		wantErr   string
		wantOut   string
	}{
		{name: "named agent", args: []string{"--config", cfg, "--agent", "atlas"}, wantOut: "(agent atlas, user alice)"},
		{name: "first agent with a Nextcloud block by default", args: []string{"--config", cfg}, wantOut: "(agent atlas, user alice)"},
		{name: "unknown agent", args: []string{"--config", cfg, "--agent", "zeus"}, wantUsage: true,
			wantErr: `no agent "zeus" in ` + cfg},
		{name: "agent without Nextcloud", args: []string{"--config", cfg, "--agent", "hermes"}, wantUsage: true,
			wantErr: `agent "hermes" has no Nextcloud block in ` + cfg},
		{name: "no agent has Nextcloud", args: []string{"--config", noNC}, wantUsage: true,
			wantErr: "no agent in " + noNC + " has a Nextcloud block; add one or pass --agent"},
		{name: "missing config", args: []string{"--config", filepath.Join(t.TempDir(), "nope.yaml")},
			wantErr: "nope.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCLI(t, append([]string{"capabilities"}, tt.args...)...)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(out, tt.wantOut) {
					t.Errorf("output lacks %q:\n%s", tt.wantOut, out)
				}
				return
			}
			if err == nil || isUsage(err) != tt.wantUsage || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v (usage %v), want usage=%v containing %q", err, isUsage(err), tt.wantUsage, tt.wantErr)
			}
			if out != "" {
				t.Errorf("printed %q before failing", out)
			}
		})
	}
}

func TestCapabilitiesServerErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*ncfake.Server)
		cfg   func(t *testing.T, nc *ncfake.Server) string
	}{
		{name: "maintenance mode", setup: func(s *ncfake.Server) { s.SetDown(true) }},
		{name: "wrong app password", cfg: func(t *testing.T, nc *ncfake.Server) string {
			return writeConfig(t, strings.Replace(readFile(t, ncConfig(t, nc)), "appPassword: "+nc.Password(), "appPassword: wrong", 1))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc := ncfake.Start(t, ncfake.Options{})
			if tt.setup != nil {
				tt.setup(nc)
			}
			cfg := ncConfig(t, nc)
			if tt.cfg != nil {
				cfg = tt.cfg(t, nc)
			}
			out, err := runCLI(t, "capabilities", "--config", cfg, "--check", "dav.chunking")
			if err == nil || isUsage(err) || errors.Is(err, errMissing) {
				t.Fatalf("err = %v, want a server error", err)
			}
			if !strings.Contains(err.Error(), "capabilities of "+nc.URL) {
				t.Errorf("err %q does not name the server", err)
			}
			if out != "" {
				t.Errorf("printed %q although the server did not answer", out)
			}
		})
	}
}

func TestCapabilitiesConfigFromEnvironment(t *testing.T) {
	nc := ncfake.Start(t, ncfake.Options{})
	t.Setenv(deploy.EnvConfig, ncConfig(t, nc))
	out, err := runCLI(t, "capabilities")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "Nextcloud 30.0.2 at "+nc.URL+" (agent atlas") {
		t.Errorf("output %q: want the Nextcloud of the config named by %s", out, deploy.EnvConfig)
	}
}
