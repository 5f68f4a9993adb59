package dynamotest

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal makes the kernel kill dynalite when the test binary
// dies without running Main's cleanup (a panic, a timeout, a missing TestMain).
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
