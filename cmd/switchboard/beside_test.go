package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/devrt"
)

// Approval links a verb creates open on the running dev's listener, read
// from its data directory's dev.json, wherever ADDR moved it; without a
// running dev on the default address.
func TestApprovalLinksOpenOnTheRunningDev(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	moved := "http://" + ln.Addr().String()
	cases := []struct {
		name, devJSON, want string
	}{
		{"a dev runs", `{"pid":1,"url":"` + moved + `"}`, moved},
		{"no dev", "", "http://" + devrt.DefaultAddr},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			localEnv(t)
			t.Setenv(app.EnvPublicBaseURL, "")
			data := t.TempDir()
			if c.devJSON != "" {
				if err := os.WriteFile(filepath.Join(data, devrt.RunningFile), []byte(c.devJSON), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, closeEnv, err := localApp(context.Background(), exampleConfig, data)
			if err != nil {
				t.Fatal(err)
			}
			closeEnv()
			if got := os.Getenv(app.EnvPublicBaseURL); got != c.want {
				t.Errorf("%s = %q, want %q", app.EnvPublicBaseURL, got, c.want)
			}
		})
	}
}
