//go:build !linux

package sfnlocal

import "os/exec"

// setParentDeathSignal has no portable equivalent outside Linux; there the
// server is stopped only by Stop.
func setParentDeathSignal(*exec.Cmd) {}
