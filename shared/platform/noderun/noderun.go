// Package noderun starts the repository's Node servers (dynalite for the
// store tests, the local Step Functions service for the dev runtime) as
// child processes: it finds the repository root and node, starts the child
// so that it dies with this process, and keeps the tail of its output for
// error messages. What the child is and how to tell it is ready stays with
// the caller.
package noderun

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// RepoRoot walks up from the working directory (the package directory
// under go test) to the directory holding go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Node finds the node binary; the error says how to install what the
// repository at root needs.
func Node(root string) (string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("node is not on PATH: install Node.js 20, then run npm ci in %s", root)
	}
	return node, nil
}

// Process is a started child process.
type Process struct {
	Cmd      *exec.Cmd
	exited   chan struct{}
	stopOnce sync.Once
}

// Start starts cmd so that, on Linux, the kernel kills it when this process
// dies without stopping it (a panic, a test timeout), and waits for it in
// the background. The caller must Stop it.
func Start(cmd *exec.Cmd) (*Process, error) {
	setParentDeathSignal(cmd)
	p := &Process{Cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// The parent-death signal fires when the *thread* that started the
		// child exits; pin this goroutine to its thread for the child's life.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// Exited is closed when the process has ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Stop kills the process and waits for it (at most 5 s). It may be called
// more than once.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		_ = p.Cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
		}
	})
}

// Tail keeps the last Max bytes written to it, for error messages.
type Tail struct {
	Max int

	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Tail) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.Max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

// String is what is kept, without surrounding white space.
func (b *Tail) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(b.buf.String())
}
