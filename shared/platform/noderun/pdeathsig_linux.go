package noderun

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel kill the child when this process
// dies without stopping it (a panic, a test timeout).
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
