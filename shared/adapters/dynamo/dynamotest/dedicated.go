package dynamotest

import "testing"

// Dedicated is a dynalite process of one test's own, for tests that stop
// and resume it (SIGSTOP/SIGCONT) to see what a hung database does. Other
// tests keep using the shared one.
type Dedicated struct {
	Endpoint string
	PID      int
}

// StartDedicated starts a dynalite for t alone; it is killed when t ends
// (also when it is stopped: SIGKILL ends a stopped process).
func StartDedicated(t testing.TB) *Dedicated {
	t.Helper()
	d, err := startDynalite()
	if err != nil {
		t.Fatalf("dynamotest: %v", err)
	}
	t.Cleanup(d.stop)
	return &Dedicated{Endpoint: d.endpoint, PID: d.proc.Cmd.Process.Pid}
}
