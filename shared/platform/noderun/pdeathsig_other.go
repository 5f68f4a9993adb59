//go:build !linux

package noderun

import "os/exec"

// setParentDeathSignal has no portable equivalent outside Linux; there the
// child is stopped only by Stop.
func setParentDeathSignal(*exec.Cmd) {}
