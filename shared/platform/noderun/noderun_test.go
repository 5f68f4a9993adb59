package noderun

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRepoRootFindsGoMod(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("RepoRoot() = %s, which holds no go.mod: %v", root, err)
	}
	if wd, _ := os.Getwd(); !strings.HasPrefix(wd, root) {
		t.Errorf("RepoRoot() = %s is not above the working directory %s", root, wd)
	}
}

func TestTailKeepsTheLastBytes(t *testing.T) {
	tail := &Tail{Max: 5}
	for _, s := range []string{"abc", "defg", "hi\n"} {
		if n, err := tail.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := tail.String(); got != "fghi" {
		t.Errorf("String() = %q, want %q (last 5 bytes, trimmed)", got, "fghi")
	}
}

// TestMain lets the test binary stand in for a long-running child: with
// NODERUN_TEST_SLEEP set it only waits until its stdin ends (the test
// holds the other end, so a child outlives no test), and no outside
// command is needed.
func TestMain(m *testing.M) {
	if os.Getenv("NODERUN_TEST_SLEEP") != "" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStartAndStop(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self)
	child.Env = append(os.Environ(), "NODERUN_TEST_SLEEP=1")
	stdin, hold, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hold.Close() })
	child.Stdin = stdin
	p, err := Start(child)
	stdin.Close() // the child has its own copy
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
		t.Fatal("the child ended before Stop")
	default:
	}
	p.Stop()
	p.Stop() // a second Stop is harmless
	select {
	case <-p.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("the child still runs after Stop")
	}
}

func TestStartReportsAMissingBinary(t *testing.T) {
	if _, err := Start(exec.Command(filepath.Join(t.TempDir(), "no-such-binary"))); err == nil {
		t.Fatal("Start of a missing binary succeeded")
	}
}
