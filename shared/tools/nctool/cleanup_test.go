package nctool_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
)

// agedEnv seeds reports of two ages one second apart (WebDAV mtimes have
// second resolution) and sets the tool's clock so that, with the default 90
// days, exactly the first batch is old.
func agedEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.seed(root+"/reports/2026-01.md", "jan")
	e.seed(root+"/reports/archive/2025-12.md", "dec!")
	e.seed(root+"/reports/locked-old.md", "l")
	time.Sleep(1100 * time.Millisecond) // sleep-ok: the fake's WebDAV memory FS (x/net/webdav) stamps mtimes with the real clock, at second resolution
	e.seed(root+"/reports/2026-05.md", "may")
	e.seed(root+"/notes-old-but-not-a-report.md", "n")  // outside reports: never touched
	e.seed("/Switchboard/Atlas/reports/theirs.md", "t") // another agent's reports
	fresh, err := e.agent.Get().Client.Stat(context.Background(), root+"/reports/2026-05.md")
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Set(fresh.Modified.AddDate(0, 0, nctool.DefaultReportsMaxAgeDays))
	return e
}

func oldPaths(rep nctool.CleanupReport) []string {
	var out []string
	for _, f := range rep.Old {
		out = append(out, strings.TrimPrefix(f.Path, root))
	}
	slices.Sort(out)
	return out
}

func TestCleanup(t *testing.T) {
	t.Parallel()
	e := agedEnv(t)
	e.nc.Lock(root + "/reports/locked-old.md")

	dry, err := e.tool.Cleanup(context.Background(), agentID, true)
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	want := []string{"/reports/2026-01.md", "/reports/archive/2025-12.md", "/reports/locked-old.md"}
	if got := oldPaths(dry); !slices.Equal(got, want) {
		t.Fatalf("dry run old = %v, want %v", got, want)
	}
	if !dry.DryRun || dry.Deleted != 0 || dry.Scanned != 4 || dry.MaxAgeDays != 90 || dry.Folder != root+"/reports" {
		t.Errorf("dry run report = %+v", dry)
	}
	if _, ok := e.file(root + "/reports/2026-01.md"); !ok {
		t.Fatalf("dry run deleted a file")
	}

	rep, err := e.tool.Cleanup(context.Background(), agentID, false)
	if err != nil {
		t.Fatalf("cleanup: %v", err)
	}
	if rep.Deleted != 2 || rep.FreedBytes != 7 || len(rep.Errors) != 1 || rep.Stopped != "" {
		t.Errorf("report = %+v", rep)
	}
	if e := rep.Errors[0]; !strings.HasSuffix(e.Path, "/reports/locked-old.md") || !strings.Contains(e.Error, "locked") {
		t.Errorf("error entry = %+v", e)
	}
	for _, p := range []string{"/reports/2026-01.md", "/reports/archive/2025-12.md"} {
		if _, ok := e.file(root + p); ok {
			t.Errorf("%s survived", p)
		}
	}
	for _, p := range []string{root + "/reports/2026-05.md", root + "/reports/locked-old.md", root + "/notes-old-but-not-a-report.md", "/Switchboard/Atlas/reports/theirs.md"} {
		if _, ok := e.file(p); !ok {
			t.Errorf("%s was deleted", p)
		}
	}
	if _, err := e.agent.Get().Client.Stat(context.Background(), root+"/reports/archive"); err != nil {
		t.Errorf("the archive folder was removed: %v", err)
	}
}

func TestCleanupAgeIsConfigurable(t *testing.T) {
	t.Parallel()
	e := agedEnv(t)
	e.configure(func(a *nctool.Agent) { a.ReportsMaxAgeDays = 200 })
	rep, err := e.tool.Cleanup(context.Background(), agentID, false)
	if err != nil || len(rep.Old) != 0 || rep.Deleted != 0 || rep.MaxAgeDays != 200 {
		t.Errorf("200 days: %+v, %v", rep, err)
	}
}

func TestCleanupStopsWhenTheServerFails(t *testing.T) {
	t.Parallel()
	e := agedEnv(t)
	rep, err := e.tool.Cleanup(context.Background(), agentID, true)
	if err != nil || len(rep.Old) != 3 {
		t.Fatalf("dry run: %+v, %v", rep, err)
	}
	// Deletes fail at the network: the run stops after the first one
	// instead of hammering an unreachable server for every file.
	client, err := nextcloud.New(e.nc.URL, e.nc.User(), e.nc.Password(), &http.Client{Transport: failDeletes{}})
	if err != nil {
		t.Fatal(err)
	}
	e.configure(func(a *nctool.Agent) { a.Client = client })
	rep, err = e.tool.Cleanup(context.Background(), agentID, false)
	if err != nil || rep.Deleted != 0 || len(rep.Errors) != 1 || !strings.Contains(rep.Stopped, "stopped after 0 deletion(s)") {
		t.Errorf("report = %+v, %v", rep, err)
	}
	e.nc.SetDown(true)
	if _, err := e.tool.Cleanup(context.Background(), agentID, false); err == nil || sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Errorf("listing while down: err = %v, want EUNAVAILABLE", err)
	}
}

// failDeletes lets every request through but DELETE, which fails like a
// dropped connection.
type failDeletes struct{}

func (failDeletes) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodDelete {
		return nil, errors.New("connection reset by peer")
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestCleanupWithoutReportsFolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rep, err := e.tool.Cleanup(context.Background(), agentID, false)
	if err != nil || rep.Scanned != 0 || len(rep.Old) != 0 {
		t.Errorf("no reports folder: %+v, %v", rep, err)
	}
	if _, err := e.tool.Cleanup(context.Background(), "atlas", false); sb.ErrorCode(err) != sb.ENOTFOUND {
		t.Errorf("unknown agent: %v", err)
	}
	e.configure(func(a *nctool.Agent) { a.RootPath = "" })
	if _, err := e.tool.Cleanup(context.Background(), agentID, true); sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("no rootPath: %v", err)
	}
}
